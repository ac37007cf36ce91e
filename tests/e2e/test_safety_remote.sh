#!/usr/bin/env bash
# Issue 18, item 8 (and 7 for remote imports): remote cache authentication against real
# servers on loopback: nginx with a bearer-token check, with auth_basic, over TLS with a
# self-signed CA (and a client certificate), and redis-server with requirepass and an ACL
# user. curl and redis-cli prove that each server refuses requests without the secret;
# the secrets must appear in no output, error, stats file, config show or cache entry.
source "$(dirname "$0")/cache_common.sh"
source "$(dirname "$0")/remote_common.sh"
# The servers are started here without disown: killed and waited for at exit.
trap 'status=$?; for p in "${SERVER_PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
  if [ $status -eq 0 ]; then rm -rf "$WORK"; else echo "kept $WORK" >&2; fi' EXIT

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || fail "nginx is not installed (scripts/install-test-deps installs nginx-light)"
command -v redis-server >/dev/null || fail "redis-server is not installed (scripts/install-test-deps)"
MODEL="$TESTDATA/models/ppocr_cls.onnx"
OTHER="$TESTDATA/models/oww_hello_deepa.onnx"
TOKEN="tok-$(od -An -tx1 -N12 /dev/urandom | tr -d ' \n')"
USERPW="alice:pw-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
echo "$TOKEN" >"$WORK/token"; echo "wrong-token" >"$WORK/badtoken"
echo "$USERPW" >"$WORK/creds"; echo "alice:wrong" >"$WORK/badcreds"
chmod 600 "$WORK/token" "$WORK/creds"

# A CA, a server certificate for 127.0.0.1 and a client certificate, all self-made.
T="$WORK/tls"; mkdir -p "$T"
(cd "$T"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=npucc-test-ca
  openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1
  printf 'subjectAltName=IP:127.0.0.1\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext
  openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj /CN=npucc-client
  openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2
) >/dev/null 2>&1 || fail "openssl could not make the test certificates"

PORT=$(free_port); TLSPORT=$(free_port)
N="$WORK/nginx"; mkdir -p "$N/root/bearer" "$N/root/basic" "$N/root/tls" "$N/root/mtls" "$N/logs"
printf '%s:%s\n' "${USERPW%%:*}" "$(openssl passwd -apr1 "${USERPW#*:}")" >"$N/htpasswd"
user_line=""
[ "$(id -u)" = 0 ] && user_line="user $(id -un) $(id -gn);"
cat >"$N/nginx.conf" <<CONF
$user_line
worker_processes 1;
error_log $N/logs/error.log;
pid $N/nginx.pid;
events { worker_connections 64; }
http {
  access_log $N/logs/access.log;
  client_body_temp_path $N/body;
  proxy_temp_path $N/proxy;
  fastcgi_temp_path $N/fastcgi;
  client_max_body_size 0;
  server {
    listen 127.0.0.1:$PORT;
    root $N/root;
    location /bearer/ {
      if (\$http_authorization != "Bearer $TOKEN") { return 401; }
      dav_methods PUT;
    }
    location /basic/ { auth_basic "npucc"; auth_basic_user_file $N/htpasswd; dav_methods PUT; }
  }
  server {
    listen 127.0.0.1:$TLSPORT ssl;
    root $N/root;
    ssl_certificate $T/server.pem;
    ssl_certificate_key $T/server.key;
    ssl_client_certificate $T/ca.pem;
    ssl_verify_client optional;
    location /tls/ { dav_methods PUT; }
    location /mtls/ {
      if (\$ssl_client_verify != SUCCESS) { return 403; }
      dav_methods PUT;
    }
  }
}
CONF
"$NGINX" -p "$N" -e "$N/logs/error.log" -c "$N/nginx.conf" -g 'daemon off;' >>"$N/logs/stdout" 2>&1 &
SERVER_PIDS+=($!)
wait_port "$PORT"; wait_port "$TLSPORT"

# no_secret FILE...: neither secret appears.
no_secret() {
  local f
  for f in "$@"; do
    if grep -rqa -e "$TOKEN" -e "${USERPW#*:}" "$f"; then
      grep -rla -e "$TOKEN" -e "${USERPW#*:}" "$f" >&2; fail "a secret leaked into $f"
    fi
  done
}
# run_all DIR ARGS...: compile MODEL into a fresh cache DIR with ARGS; output in $WORK/out, err.
fresh() { rm -rf "$1"; "$NPUCC" -q cache init "$1"; }

# --- the servers really refuse requests without the secret ---
B="http://127.0.0.1:$PORT/bearer"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$B/x.bundle")" = 401 ] || fail "nginx serves /bearer/ without the token"
[ "$(code -H "Authorization: Bearer wrong" "$B/x.bundle")" = 401 ] || fail "nginx takes a wrong token"
[ "$(code -H "Authorization: Bearer $TOKEN" "$B/x.bundle")" = 404 ] || fail "nginx refuses the token"
[ "$(code "http://127.0.0.1:$PORT/basic/x.bundle")" = 401 ] || fail "nginx serves /basic/ without a password"
[ "$(code -u "$USERPW" "http://127.0.0.1:$PORT/basic/x.bundle")" = 404 ] || fail "nginx refuses the password"
[ "$(code --cacert "$T/ca.pem" "https://127.0.0.1:$TLSPORT/mtls/x.bundle")" = 403 ] || fail "mtls without a client certificate"
[ "$(code --cacert "$T/ca.pem" --cert "$T/client.pem" --key "$T/client.key" "https://127.0.0.1:$TLSPORT/mtls/x.bundle")" = 404 ] || fail "mtls refuses the client certificate"
pass "curl: nginx refuses requests without the token, password or client certificate"

# --- bearer token: upload from machine A, remote hit on machine B ---
fresh "$WORK/a"; fresh "$WORK/b"
NPUCC_REMOTE_TOKEN_FILE="$WORK/token" expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/oa" \
  --cache-dir "$WORK/a" --remote-cache "$B"
[ "$(find "$N/root/bearer" -name '*.bundle' | wc -l)" = 1 ] || fail "nothing was uploaded with the token"
no_secret "$WORK/out" "$WORK/err"
NPUCC_REMOTE_TOKEN_FILE="$WORK/token" expect_status 0 "$NPUCC" -v compile "$MODEL" -o "$WORK/ob" \
  --cache-dir "$WORK/b" --remote-cache "$B"
contains "$WORK/out" "from the remote cache"
no_secret "$WORK/out" "$WORK/err"
NPUCC_REMOTE_TOKEN_FILE="$WORK/token" expect_status 0 "$NPUCC" config show --remote-cache "$B"
contains "$WORK/out" "$WORK/token"
no_secret "$WORK/out" "$WORK/err" "$WORK/a" "$WORK/b"
pass "bearer token from NPUCC_REMOTE_TOKEN_FILE: upload and remote hit; the token shows nowhere"

# A wrong token, or none: one warning, counted, and a local compile.
for tf in "$WORK/badtoken" ""; do
  fresh "$WORK/c"
  NPUCC_REMOTE_TOKEN_FILE="$tf" expect_status 0 "$NPUCC" compile "$OTHER" -o "$WORK/oc" \
    --cache-dir "$WORK/c" --remote-cache "$B"
  [ "$(grep -c 'npucc: warning: remote cache refused the credentials: ' "$WORK/err")" = 1 ] ||
    { cat "$WORK/err"; fail "want one refused-credentials warning"; }
  contains "$WORK/out" "cache: miss"
  [ -f "$WORK/oc/manifest.json" ] || fail "no local compile after the refusal"
  [ "$(remote_stat "$WORK/c" refused_credentials)" -ge 1 ] || fail "the refusal is not counted"
  expect_status 0 "$NPUCC" cache stats --cache-dir "$WORK/c"
  contains "$WORK/out" "refused credentials"
  no_secret "$WORK/out" "$WORK/err" "$WORK/c"
done
pass "a wrong or missing token: one warning, counted in cache stats, compiled locally"

# A setting in config.toml names the token file, too.
mkdir -p "$HOME/.config/npucc"
printf '[remote]\ntoken_file = "%s"\n' "$WORK/token" >"$HOME/.config/npucc/config.toml"
fresh "$WORK/d"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/od" --cache-dir "$WORK/d" --remote-cache "$B"
contains "$WORK/out" "from the remote cache"
rm "$HOME/.config/npucc/config.toml"
pass "remote.token_file in config.toml"

# --- basic credentials ---
BA="http://127.0.0.1:$PORT/basic"
fresh "$WORK/e"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/oe" --cache-dir "$WORK/e" --remote-cache "$BA" \
  --remote-credentials-file "$WORK/creds"
[ "$(find "$N/root/basic" -name '*.bundle' | wc -l)" = 1 ] || fail "nothing uploaded with basic auth"
fresh "$WORK/e2"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/oe2" --cache-dir "$WORK/e2" --remote-cache "$BA" \
  --remote-credentials-file "$WORK/creds"
contains "$WORK/out" "from the remote cache"
no_secret "$WORK/out" "$WORK/err" "$WORK/e" "$WORK/e2"
fresh "$WORK/e3"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/oe3" --cache-dir "$WORK/e3" --remote-cache "$BA" \
  --remote-credentials-file "$WORK/badcreds"
contains "$WORK/err" "remote cache refused the credentials: $BA: GET answered HTTP 401"
contains "$WORK/out" "cache: miss"
fresh "$WORK/e4"  # (a local hit does not look at the remote tier, nor at its files)
expect_status 1 "$NPUCC" compile "$MODEL" -o "$WORK/oe4" --cache-dir "$WORK/e4" --remote-cache "$BA" \
  --remote-credentials-file "$WORK/missing-file"
contains "$WORK/err" "remote.credentials_file $WORK/missing-file: cannot be read"
pass "basic credentials from a file; a wrong password is refused with one warning"

# --- TLS with the test CA, and a client certificate ---
TL="https://127.0.0.1:$TLSPORT/tls"
fresh "$WORK/f"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/of" --cache-dir "$WORK/f" --remote-cache "$TL"
contains "$WORK/err" "remote cache unavailable"   # the system does not trust the test CA
fresh "$WORK/f2"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/of2" --cache-dir "$WORK/f2" --remote-cache "$TL" \
  --remote-ca-file "$T/ca.pem"
[ ! -s "$WORK/err" ] || { cat "$WORK/err"; fail "TLS with --remote-ca-file warned"; }
[ "$(find "$N/root/tls" -name '*.bundle' | wc -l)" = 1 ] || fail "nothing uploaded over TLS"
MT="https://127.0.0.1:$TLSPORT/mtls"
fresh "$WORK/g"
NPUCC_REMOTE_CA_FILE="$T/ca.pem" expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/og" \
  --cache-dir "$WORK/g" --remote-cache "$MT"
contains "$WORK/err" "remote cache refused the credentials: $MT: GET answered HTTP 403"
fresh "$WORK/g2"
NPUCC_REMOTE_CA_FILE="$T/ca.pem" expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/og2" \
  --cache-dir "$WORK/g2" --remote-cache "$MT" --remote-client-cert "$T/client.pem" \
  --remote-client-key "$T/client.key"
[ ! -s "$WORK/err" ] || { cat "$WORK/err"; fail "mTLS with a client certificate warned"; }
[ "$(find "$N/root/mtls" -name '*.bundle' | wc -l)" = 1 ] || fail "nothing uploaded with the client certificate"
pass "https with --remote-ca-file; a client certificate where the server demands one"

# --- item 7: a remote import in a group cache under umask 077 ---
G="$WORK/group"
(umask 077
  "$NPUCC" -q cache init --shared group "$G"
  NPUCC_REMOTE_TOKEN_FILE="$WORK/token" "$NPUCC" compile "$MODEL" -o "$WORK/og3" --cache-dir "$G" \
    --remote-cache "$B" >"$WORK/out")
contains "$WORK/out" "from the remote cache"
bad=$(cd "$G" && find . -mindepth 1 -type d ! -perm 2770 -printf '%m %p\n'
      find . -path './entries/*' -type f ! -perm 0444 -printf '%m %p\n'
      find . \( -path './digests/*' -o -path './models/*' \) -type f ! -perm 0640 -printf '%m %p\n'
      find . -type f ! -path './entries/*' ! -path './digests/*' ! -path './models/*' \
        ! -name CACHEDIR.TAG ! -perm 0660 -printf '%m %p\n')
[ -z "$bad" ] || { echo "$bad" >&2; fail "modes after a remote import in a group cache"; }
pass "a remote import under umask 077 keeps the group cache's modes"

# --- Redis: requirepass and an ACL user ---
RPORT=$(free_port); RPW="rpw-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
mkdir -p "$WORK/redis"
cat >"$WORK/redis/redis.conf" <<CONF
bind 127.0.0.1
port $RPORT
dir $WORK/redis
save ""
appendonly no
requirepass $RPW
user bob on >$RPW-bob ~npucc:* +@all
CONF
redis-server "$WORK/redis/redis.conf" >"$WORK/redis/log" 2>&1 &
SERVER_PIDS+=($!)
wait_port "$RPORT"
echo "$RPW" >"$WORK/rtoken"; echo "bob:$RPW-bob" >"$WORK/rcreds"; echo "bob:nope" >"$WORK/rbad"
redis-cli -h 127.0.0.1 -p "$RPORT" GET x 2>&1 | grep -q NOAUTH || fail "redis answers without AUTH"
[ "$(REDISCLI_AUTH="$RPW" redis-cli -h 127.0.0.1 -p "$RPORT" PING 2>/dev/null)" = PONG ] || fail "redis refuses the password"
R="redis://127.0.0.1:$RPORT/0"
fresh "$WORK/ra"; fresh "$WORK/rb"; fresh "$WORK/rc"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/ora" --cache-dir "$WORK/ra" --remote-cache "$R" \
  --remote-token-file "$WORK/rtoken"
[ ! -s "$WORK/err" ] || { cat "$WORK/err"; fail "redis with requirepass warned"; }
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/orb" --cache-dir "$WORK/rb" --remote-cache "$R" \
  --remote-credentials-file "$WORK/rcreds"
contains "$WORK/out" "from the remote cache"
for bad in "--remote-credentials-file $WORK/rbad" ""; do
  fresh "$WORK/rc"
  # shellcheck disable=SC2086
  expect_status 0 "$NPUCC" compile "$OTHER" -o "$WORK/orc" --cache-dir "$WORK/rc" --remote-cache "$R" $bad
  [ "$(grep -c 'npucc: warning: remote cache refused the credentials: ' "$WORK/err")" = 1 ] ||
    { cat "$WORK/err"; fail "redis: want one refused-credentials warning"; }
  [ "$(remote_stat "$WORK/rc" refused_credentials)" -ge 1 ] || fail "redis: the refusal is not counted"
done
grep -rqa -e "$RPW" "$WORK/out" "$WORK/err" "$WORK/ra" "$WORK/rb" "$WORK/rc" && fail "the redis password leaked"
pass "redis: requirepass and an ACL user from files; NOAUTH and WRONGPASS: one warning, local compile"
