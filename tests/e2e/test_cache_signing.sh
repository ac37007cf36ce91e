#!/usr/bin/env bash
# Signed cache entries (NPUCC_CACHE_KEY_FILE): a reader with the key uses only entries
# whose HMAC-SHA-256 checks; unsigned, wrongly signed and tampered entries (a flipped byte
# whose checksum was fixed in the header, so only the MAC can tell) are compiled locally
# with one warning naming the entry, and `cache verify` reports them. Weak key files are
# refused with the fix.
source "$(dirname "$0")/cache_common.sh"
unset NPUCC_CACHE_KEY_FILE NPUCC_CACHE_READ_ONLY NPUCC_CACHE_SHARED
C="$WORK/cache"
M="$TESTDATA/models/ppocr_cls.onnx"
K="$WORK/key"; K2="$WORK/key2"
openssl rand -hex 32 >"$K"; chmod 600 "$K"
openssl rand -hex 32 >"$K2"; chmod 600 "$K2"
"$NPUCC" cache init "$C" >/dev/null

# 1. A signed store: entry.sig beside the header; a reader with the key hits.
NPUCC_CACHE_KEY_FILE="$K" "$NPUCC" -q compile "$M" -o "$WORK/ref" --cache-dir "$C"
key=$(json_get "$WORK/ref/manifest.json" "d['cache_key']")
cp -r "$WORK/ref" "$WORK/expected" # a copy: outputs may be hard links into the entry
E="$C/entries/${key:0:2}/$key"
[ -f "$E/entry.sig" ] || fail "no entry.sig in $E"
grep -qE '^hmac-sha256 [0-9a-f]{64}$' "$E/entry.sig" || fail "entry.sig: $(cat "$E/entry.sig")"
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/hit" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
[ ! -s "$WORK/err" ] || fail "a valid signature warned: $(cat "$WORK/err")"
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" "no problems"
# The same key written without the trailing newline is the same key.
printf '%s' "$(cat "$K")" >"$WORK/key-nonl"; chmod 600 "$WORK/key-nonl"
NPUCC_CACHE_KEY_FILE="$WORK/key-nonl" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/hit2" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
pass "a signed entry is accepted by a reader with the key"

# 2. A reader without a key still uses the entry (checksums only); entry.sig is no stray.
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/nokey" --cache-dir "$C"
contains "$WORK/out" "cache: hit"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "a reader without a key uses signed entries on their checksums"

# 2b. The model index is not signed: facts forged in it (x declared 1,3,48,192, so that
# --input-shape with those dims would leave the key) must not move a reader with the key
# onto the entry compiled without that shape. With a key the model is parsed instead.
CF="$WORK/cache-facts" # a copy: the sections below count the entries of $C
cp -a "$C" "$CF"
sha=$(sha256sum "$M" | cut -d' ' -f1)
I="$CF/models/${sha:0:2}/$sha"
[ -f "$I" ] || fail "no model index at $I"
grep -q '^key-facts ' "$I" || fail "the index has no key facts: $(cat "$I")"
chmod u+w "$I"
sed -i 's/^key-facts .*/key-facts {"inputs":[["78",[1,3,48,192]]],"opset":9}/' "$I"
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" -v compile "$M" -o "$WORK/shaped" --cache-dir "$CF" \
  --input-shape x:1,3,48,192
contains "$WORK/out" "cache: miss"
[ "$(json_get "$WORK/shaped/manifest.json" "d['cache_key']")" != "$key" ] ||
  fail "forged key facts moved a keyed reader onto the unshaped entry"
if grep -q "no parse needed" "$WORK/err"; then fail "a keyed reader used the index's facts"; fi
pass "a keyed reader does not take the model index's (unsigned) key facts"

# expect_rejected KEYFILE LABEL KIND: with that key the entry is not used (compiled
# locally, one warning naming it, output identical), and verify reports KIND.
expect_rejected() {
  local keyfile=$1 label=$2 kind=$3
  NPUCC_CACHE_KEY_FILE="$keyfile" expect_status 3 "$NPUCC" cache verify --cache-dir "$C" --json
  valid_json npucc-cache-verify "$WORK/out"
  # Entries only: with another key the input digests are unsigned to it too (issue 30).
  [ "$(json_get "$WORK/out" "[(f['kind'], f['path']) for f in d['findings'] if '/entries/' in f['path']]")" = "[('$kind', '$E')]" ] ||
    { cat "$WORK/out"; fail "$label: verify should report $kind for $E"; }
  NPUCC_CACHE_KEY_FILE="$keyfile" expect_status 3 "$NPUCC" cache verify --cache-dir "$C"
  contains "$WORK/out" "^$kind  $E"
  rm -rf "$WORK/r"
  NPUCC_CACHE_KEY_FILE="$keyfile" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/r" --cache-dir "$C" --read-only
  contains "$WORK/out" "cache: miss: corrupt entry not used"
  [ "$(grep -c . "$WORK/err")" = 1 ] || fail "$label: want one warning line, got: $(cat "$WORK/err")"
  contains "$WORK/err" "^npucc: warning: cache entry $E rejected: "
  cmp "$WORK/r/high.onnx" "$WORK/expected/high.onnx" || fail "$label: local compile differs"
}

# 3. Signed with another key.
expect_rejected "$K2" "wrong key" tampered
pass "an entry signed with another key is rejected and reported as tampered"

# 4. Tampered: flip a byte of high.onnx and fix its checksum in the header (and the
#    header's own end checksum), so the entry is self-consistent and only the MAC differs.
cp -a "$E" "$WORK/entry.orig"
chmod u+w "$E" "$E/high.onnx" "$E/entry.npucc"
$PY - "$E" <<'PY'
import hashlib, sys
d = sys.argv[1]
data = bytearray(open(d + "/high.onnx", "rb").read())
old = hashlib.sha256(data).hexdigest()
data[len(data) // 2] ^= 0x01
open(d + "/high.onnx", "wb").write(data)
new = hashlib.sha256(data).hexdigest()
text = open(d + "/entry.npucc").read()
assert old in text
body = text[: text.rindex("end ")].replace(old, new)
open(d + "/entry.npucc", "w").write(body + "end " + hashlib.sha256(body.encode()).hexdigest() + "\n")
PY
chmod 444 "$E/high.onnx" "$E/entry.npucc"
# Without a key the doctored entry passes every checksum: only the signature catches it.
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
expect_rejected "$K" "tampered" tampered
pass "a byte flipped with its checksum fixed is caught by the signature alone"

# 5. Unsigned: the signature removed.
rm -rf "$E"; cp -a "$WORK/entry.orig" "$E"
rm -f "$E/entry.sig"
expect_rejected "$K" "unsigned" unsigned
pass "an unsigned entry is rejected when a key is configured"

# 6. A read-write reader replaces the rejected entry with a signed one; verify --fix
#    removes rejected entries.
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" compile "$M" -o "$WORK/rw" --cache-dir "$C"
contains "$WORK/out" "corrupt entry replaced"
[ -f "$E/entry.sig" ] || fail "the replacement is unsigned"
NPUCC_CACHE_KEY_FILE="$K" expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
NPUCC_CACHE_KEY_FILE="$K2" expect_status 0 "$NPUCC" cache verify --fix --cache-dir "$C"
[ ! -e "$E" ] || fail "verify --fix left the wrongly signed entry"
pass "a rejected entry is replaced by a signed one; verify --fix removes it"

# 7. Key files that are not keys are refused, naming the file and the fix.
check_key_refused() { # FILE PATTERN
  NPUCC_CACHE_KEY_FILE="$1" expect_status 1 "$NPUCC" compile "$M" -o "$WORK/never" --cache-dir "$C"
  contains "$WORK/err" "npucc: error: $1: cache key file.*$2"
  [ ! -e "$WORK/never" ] || fail "compiled with a refused key $1"
}
: >"$WORK/empty"; chmod 600 "$WORK/empty"
check_key_refused "$WORK/empty" "is empty"
printf 'short-key\n' >"$WORK/short"; chmod 600 "$WORK/short"
check_key_refused "$WORK/short" "holds 9 bytes; at least 16"
cp "$K" "$WORK/open"; chmod 644 "$WORK/open"
check_key_refused "$WORK/open" "open to others (mode 0644).*chmod 600"
check_key_refused "$WORK/missing" "cannot open it"
check_key_refused "$WORK" "not a regular file"
# The option and the config file carry the key too.
expect_status 1 "$NPUCC" cache verify --cache-dir "$C" --cache-key-file "$WORK/short"
contains "$WORK/err" "holds 9 bytes"
mkdir -p "$HOME/.config/npucc"
printf '[cache]\nkey_file = "%s"\n' "$K" >"$HOME/.config/npucc/config.toml"
expect_status 0 "$NPUCC" config show --json
[ "$(json_get "$WORK/out" "d['settings']['cache.key_file']['value']")" = "$K" ] || fail "config: key_file"
"$NPUCC" -q compile "$M" -o "$WORK/cfg" --cache-dir "$C"
[ -f "$E/entry.sig" ] || fail "config.toml key_file did not sign"
rm "$HOME/.config/npucc/config.toml"
pass "empty, short, world-readable, missing and non-file key files are refused; config and option work"
