#!/usr/bin/env bash
# The shared remote cache over HTTP (nginx with WebDAV PUT on loopback): two cache
# folders play two machines. Covers a remote hit, a corrupted object, a server killed
# mid-transfer, a down and a hung server, and --remote-read-only.
source "$(dirname "$0")/cache_common.sh"
source "$(dirname "$0")/remote_common.sh"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || fail "nginx is not installed (scripts/install-test-deps installs nginx-light)"
MODEL="$TESTDATA/models/ppocr_cls.onnx"
BIG="$TESTDATA/models/ppocrv4_det.onnx"
OTHER="$TESTDATA/models/oww_hello_deepa.onnx"

# nginx in its own prefix: pid, logs and temp folders under $WORK/nginx; /cache/ takes
# PUT, /slow/ serves the same files at 256 KiB/s.
PORT=$(free_port)
N="$WORK/nginx"
mkdir -p "$N/root/cache" "$N/logs"
user_line=""
if [ "$(id -u)" = 0 ]; then
  user_line="user $(id -un) $(id -gn);" # else workers drop to nobody and cannot write root/
fi
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
    location /cache/ { dav_methods PUT; }
    location /slow/ { alias $N/root/cache/; limit_rate 256k; }
  }
}
CONF
start_nginx() {
  "$NGINX" -p "$N" -e "$N/logs/error.log" -c "$N/nginx.conf" -g 'daemon off;' >>"$N/logs/stdout" 2>&1 &
  NGINX_PID=$!
  SERVER_PIDS+=($NGINX_PID)
  disown $NGINX_PID
  wait_port "$PORT"
}
start_nginx
URL="http://127.0.0.1:$PORT/cache"
objects() { find "$N/root/cache" -name '*.bundle' | wc -l; }

# 1. Machine A compiles and uploads; machine B hits it, byte for byte.
for d in "$WORK/a" "$WORK/b"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-a" --cache-dir "$WORK/a" --remote-cache "$URL"
contains "$WORK/out" "cache: miss"
[ "$(objects)" = 1 ] || fail "A uploaded $(objects) objects, want 1"
[ "$(remote_stat "$WORK/a" uploads)" = 1 ] || fail "A counts no upload"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-b" --cache-dir "$WORK/b" --remote-cache "$URL"
contains "$WORK/out" "cache: hit: from the remote cache"
outputs_equal "$WORK/out-a" "$WORK/out-b"
[ "$(remote_stat "$WORK/b" hits)" = 1 ] || fail "B counts no remote hit"
[ "$(remote_stat "$WORK/b" bytes_down)" -gt 1000 ] || fail "B counts no bytes down"
"$NPUCC" cache stats --cache-dir "$WORK/b" >"$WORK/stats.txt"
contains "$WORK/stats.txt" "remote hits          1"
# The remote hit was stored locally: the next run is a local hit with the remote gone.
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-b2" --cache-dir "$WORK/b" \
  --remote-cache "http://127.0.0.1:$(free_port)/cache"
contains "$WORK/out" "cache: hit: materialised"
[ "$(warnings_in "$WORK/err")" = 0 ] || fail "a local hit asked the remote"
expect_status 0 "$NPUCC" cache verify --cache-dir "$WORK/b"
# The imported entry was not synced: its stamp (written as it arrived hashed: inode, size,
# mtime, boot) guards it as any local entry's does. One byte flipped in place (same size)
# is found at the next hit, which hashes the changed file, and never used.
key=$(json_get "$WORK/out-b/manifest.json" "d['cache_key']")
E="$WORK/b/entries/${key:0:2}/$key"
chmod u+w "$E/high.onnx"
sleep 0.01 # a later mtime than the stamp's, on any timestamp granularity
$PY -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(4000); b=f.read(1); f.seek(4000); f.write(bytes([b[0]^1]))" "$E/high.onnx"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-b3" --cache-dir "$WORK/b" \
  --remote-cache "http://127.0.0.1:$(free_port)/cache"
contains "$WORK/out" "cache: miss: corrupt entry replaced"
outputs_equal "$WORK/out-a" "$WORK/out-b3"
pass "machine B hits what machine A compiled, byte-identical, counted; damage to it is caught"

# 2. HTTP cannot list: said so.
expect_status 1 "$NPUCC" cache ls --remote --remote-cache "$URL" --cache-dir "$WORK/b"
contains "$WORK/err" "cannot list"
pass "cache ls --remote on HTTP says it cannot list"

# 3. A corrupted remote object (one flipped byte) is rejected, counted, never used.
object=$(find "$N/root/cache" -name '*.bundle' | head -1)
$PY - "$object" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF
open(path, "wb").write(bytes(data))
PY
for d in "$WORK/c"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-c" --cache-dir "$WORK/c" --remote-cache "$URL"
contains "$WORK/out" "cache: miss"
contains "$WORK/err" "rejected"
contains "$WORK/err" "does not match its checksum"
[ "$(warnings_in "$WORK/err")" = 1 ] || fail "want one warning for a corrupt object"
outputs_equal "$WORK/out-a" "$WORK/out-c"
[ "$(remote_stat "$WORK/c" rejected)" = 1 ] || fail "the rejected object is not counted"
[ "$(remote_stat "$WORK/c" hits)" = 0 ] || fail "a corrupt object counted as a hit"
no_temporaries "$WORK/c"
# C's compile replaced the bad object: the next machine hits again.
for d in "$WORK/c2"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-c2" --cache-dir "$WORK/c2" --remote-cache "$URL"
contains "$WORK/out" "from the remote cache"
# A truncated object too.
# A truncated object too: cut in its table, then in its payload (nginx then sends fewer
# bytes than the table describes). Never stored, no temporaries left.
for cut in 1000 $(($(stat -c %s "$object") - 5000)); do
  truncate -s "$cut" "$object"
  rm -rf "$WORK/c3" "$WORK/out-c3"
  "$NPUCC" -q cache init "$WORK/c3"
  expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-c3" --cache-dir "$WORK/c3" \
    --remote-cache "$URL" --remote-read-only
  contains "$WORK/out" "cache: miss"
  contains "$WORK/err" "rejected"
  contains "$WORK/err" "truncated"
  outputs_equal "$WORK/out-a" "$WORK/out-c3"
  [ "$(remote_stat "$WORK/c3" rejected)" = 1 ] || fail "the object truncated at $cut is not counted"
  [ "$(remote_stat "$WORK/c3" hits)" = 0 ] || fail "the object truncated at $cut counted as a hit"
  no_temporaries "$WORK/c3"
done
# A machine that may upload replaces it; the next one hits, byte for byte.
for d in "$WORK/c4" "$WORK/c5"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-c4" --cache-dir "$WORK/c4" --remote-cache "$URL"
contains "$WORK/out" "cache: miss"
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-c5" --cache-dir "$WORK/c5" --remote-cache "$URL"
contains "$WORK/out" "from the remote cache"
outputs_equal "$WORK/out-a" "$WORK/out-c5"
pass "corrupted and truncated remote objects are rejected and counted, leave nothing, compiled locally"

# 4. --remote-read-only uploads nothing.
before=$(objects)
for d in "$WORK/r"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$OTHER" -o "$WORK/out-r" --cache-dir "$WORK/r" --remote-cache "$URL" \
  --remote-read-only
contains "$WORK/out" "cache: miss"
[ "$(objects)" = "$before" ] || fail "--remote-read-only uploaded"
grep -q PUT "$N/logs/access.log" && [ "$(grep -c 'PUT' "$N/logs/access.log")" = 3 ] ||
  fail "unexpected PUT count in the access log"
[ "$(remote_stat "$WORK/r" uploads)" = 0 ] || fail "--remote-read-only counts an upload"
# The same through the environment.
for d in "$WORK/r2"; do "$NPUCC" -q cache init "$d"; done
NPUCC_REMOTE_CACHE="$URL" NPUCC_REMOTE_CACHE_READ_ONLY=1 expect_status 0 "$NPUCC" compile "$OTHER" \
  -o "$WORK/out-r2" --cache-dir "$WORK/r2"
[ "$(objects)" = "$before" ] || fail "NPUCC_REMOTE_CACHE_READ_ONLY uploaded"
[ "$(remote_stat "$WORK/r2" misses)" = 1 ] || fail "NPUCC_REMOTE_CACHE was not asked"
pass "--remote-read-only (and NPUCC_REMOTE_CACHE_READ_ONLY) upload nothing"

# 4b. A read-only local cache (a consumer): the remote hit is delivered, nothing local
# is written.
RO=(--accelerate-train-mode 'fast|step|0.6')
for d in "$WORK/w"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$MODEL" "${RO[@]}" -o "$WORK/out-w" --cache-dir "$WORK/w" \
  --remote-cache "$URL"
"$NPUCC" cache init "$WORK/ro" >/dev/null
snapshot() { (cd "$1" && find . -printf '%p %s %T@ %m\n' | sort); }
ro_before=$(snapshot "$WORK/ro")
expect_status 0 "$NPUCC" compile "$MODEL" "${RO[@]}" -o "$WORK/out-ro" --cache-dir "$WORK/ro" \
  --read-only --remote-cache "$URL"
contains "$WORK/out" "from the remote cache"
outputs_equal "$WORK/out-w" "$WORK/out-ro"
[ "$(snapshot "$WORK/ro")" = "$ro_before" ] || fail "a read-only local cache was written"
[ -z "$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'npucc-remote-*' -user "$(id -u)" -newer "$WORK/out-w" 2>/dev/null)" ] ||
  fail "the scratch cache of a read-only remote hit was left behind"
pass "a read-only local cache gets remote hits and stays untouched"

# 4c. Signed entries across machines: the same key hits, another key is rejected.
openssl rand -hex 32 >"$WORK/key1"
openssl rand -hex 32 >"$WORK/key2"
chmod 600 "$WORK/key1" "$WORK/key2"
SIGNED=(--accelerate-train-mode 'fast|step|0.5')
for d in "$WORK/s1" "$WORK/s2" "$WORK/s3"; do "$NPUCC" -q cache init "$d"; done
NPUCC_CACHE_KEY_FILE="$WORK/key1" expect_status 0 "$NPUCC" compile "$MODEL" "${SIGNED[@]}" \
  -o "$WORK/out-s1" --cache-dir "$WORK/s1" --remote-cache "$URL"
contains "$WORK/out" "cache: miss"
NPUCC_CACHE_KEY_FILE="$WORK/key1" expect_status 0 "$NPUCC" compile "$MODEL" "${SIGNED[@]}" \
  -o "$WORK/out-s2" --cache-dir "$WORK/s2" --remote-cache "$URL" --remote-read-only
contains "$WORK/out" "from the remote cache"
outputs_equal "$WORK/out-s1" "$WORK/out-s2"
NPUCC_CACHE_KEY_FILE="$WORK/key2" expect_status 0 "$NPUCC" compile "$MODEL" "${SIGNED[@]}" \
  -o "$WORK/out-s3" --cache-dir "$WORK/s3" --remote-cache "$URL" --remote-read-only
contains "$WORK/out" "cache: miss"
contains "$WORK/err" "rejected"
[ "$(remote_stat "$WORK/s3" rejected)" = 1 ] || fail "a wrongly signed remote entry is not counted"
[ "$(remote_stat "$WORK/s3" hits)" = 0 ] || fail "a wrongly signed remote entry counted as a hit"
outputs_equal "$WORK/out-s1" "$WORK/out-s3"
pass "signed entries cross machines: same key hits, another key is rejected and compiled locally"

# 5. A down server (closed port): one warning, a local compile, quickly.
DOWN="http://127.0.0.1:$(free_port)/cache"
for d in "$WORK/d"; do "$NPUCC" -q cache init "$d"; done
start=$(now_ms)
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-d" --cache-dir "$WORK/d" --remote-cache "$DOWN"
elapsed=$(($(now_ms) - start))
[ "$(warnings_in "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "want exactly one warning for a down server"; }
contains "$WORK/err" "remote cache unavailable"
outputs_equal "$WORK/out-a" "$WORK/out-d"
[ "$(remote_stat "$WORK/d" errors)" = 1 ] || fail "a down server is not counted once (breaker)"
# honest: a bound on time is the behaviour under test (a down server must not stall a compile), 10x a local compile
[ "$elapsed" -lt 10000 ] || fail "a down server took ${elapsed} ms"
pass "a down server: one warning, local compile in ${elapsed} ms"

# 6. A hung server (accepts, never answers): one warning within the timeout.
HPORT=$(free_port)
start_silent_listener "$HPORT"
for d in "$WORK/h"; do "$NPUCC" -q cache init "$d"; done
start=$(now_ms)
expect_status 0 "$NPUCC" compile "$MODEL" -o "$WORK/out-h" --cache-dir "$WORK/h" \
  --remote-cache "http://127.0.0.1:$HPORT/cache" --remote-timeout 2
elapsed=$(($(now_ms) - start))
[ "$(warnings_in "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "want exactly one warning for a hung server"; }
outputs_equal "$WORK/out-a" "$WORK/out-h"
# honest: the --remote-timeout is the behaviour under test: below 6x it, at least 3/4 of it (waited for)
[ "$elapsed" -lt 12000 ] || fail "a hung server took ${elapsed} ms (timeout 2 s)"
# honest: a lower bound shows the hung server was waited for, 3/4 of --remote-timeout
[ "$elapsed" -ge 1500 ] || fail "the hung server was not waited for (${elapsed} ms)?"
# populate of several models asks the hung server once (circuit breaker).
for d in "$WORK/h2"; do "$NPUCC" -q cache init "$d"; done
start=$(now_ms)
expect_status 0 "$NPUCC" cache populate "$MODEL" "$OTHER" -j 1 --cache-dir "$WORK/h2" \
  --remote-cache "http://127.0.0.1:$HPORT/cache" --remote-timeout 2
elapsed=$(($(now_ms) - start))
[ "$(remote_stat "$WORK/h2" errors)" = 1 ] || fail "populate asked a hung server more than once"
# honest: the timeout is the behaviour under test: one wait of 2 s, not one per model
[ "$elapsed" -lt 15000 ] || fail "populate with a hung server took ${elapsed} ms"
pass "a hung server: one warning, local compile in ${elapsed} ms; populate asks it once"
# populate -j 2 (worker processes): each worker asks at most once, the models handed out
# after the first failure are not asked about, and the failure is reported once.
for d in "$WORK/h3"; do "$NPUCC" -q cache init "$d"; done
start=$(now_ms)
expect_status 0 "$NPUCC" cache populate "$MODEL" "$OTHER" "$TESTDATA/models/silero_vad_legacy.onnx" \
  "$TESTDATA/models/torch/lstm_tagger.onnx" -j 2 --cache-dir "$WORK/h3" \
  --remote-cache "http://127.0.0.1:$HPORT/cache" --remote-timeout 2
elapsed=$(($(now_ms) - start))
contains "$WORK/out" "populate: 4 compiled"
[ "$(warnings_in "$WORK/err")" = 1 ] || { cat "$WORK/err"; fail "populate -j 2: want one warning for a hung server"; }
errors=$(remote_stat "$WORK/h3" errors)
[ "$errors" -ge 1 ] && [ "$errors" -le 2 ] || fail "populate -j 2 asked a hung server $errors times"
# honest: the timeout is the behaviour under test: at most one wait per worker
[ "$elapsed" -lt 20000 ] || fail "populate -j 2 with a hung server took ${elapsed} ms"
pass "populate -j 2 with a hung server: one warning, asked $errors time(s), ${elapsed} ms"

# 7. The server killed during B's download (throttled): B compiles locally, correctly.
for d in "$WORK/k1" "$WORK/k2"; do "$NPUCC" -q cache init "$d"; done
expect_status 0 "$NPUCC" compile "$BIG" -o "$WORK/out-k1" --cache-dir "$WORK/k1" --remote-cache "$URL"
size=$(stat -c %s "$(ls -S "$N"/root/cache/*.bundle | head -1)")
[ "$size" -gt 2000000 ] || fail "the big object has only $size bytes"
SLOW="http://127.0.0.1:$PORT/slow"
# --remote-timeout is the transfer's total deadline: long enough for the throttled download
# (4.7 MB at 256 KiB/s), so that the kill, not the deadline, ends it.
"$NPUCC" compile "$BIG" -o "$WORK/out-k2" --cache-dir "$WORK/k2" --remote-cache "$SLOW" \
  --remote-timeout 60 >"$WORK/k2.out" 2>"$WORK/k2.err" &
client=$!
# Kill once B's download is under way (files are unpacked as they arrive).
for i in $(seq 600); do
  [ -n "$(find "$WORK/k2/tmp" -path '*/remote-*' -type f -size +300k 2>/dev/null)" ] && break
  sleep 0.1
done
[ -n "$(find "$WORK/k2/tmp" -path '*/remote-*' -type f -size +300k 2>/dev/null)" ] ||
  fail "B's download did not start"
workers=$(ps -o pid= --ppid "$NGINX_PID" || true)  # honest: ps exits 1 when there is no worker: an empty list, checked below
kill -9 "$NGINX_PID" $workers
set +e; wait "$client"; status=$?; set -e
[ "$status" = 0 ] || { cat "$WORK/k2.err"; fail "B failed after the server died: exit $status"; }
contains "$WORK/k2.out" "cache: miss"
contains "$WORK/k2.err" "remote cache unavailable"
outputs_equal "$WORK/out-k1" "$WORK/out-k2"
[ "$(remote_stat "$WORK/k2" hits)" = 0 ] || fail "a cut download counted as a hit"
expect_status 0 "$NPUCC" cache verify --cache-dir "$WORK/k2"
pass "server killed mid-transfer: one warning, correct local compile"
