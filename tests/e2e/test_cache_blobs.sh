#!/usr/bin/env bash
# Weights shared across cache entries (issue 32 item 1, src/cache/blob_store.h): entries of one
# model that differ in an option hold its weights.data once, as hard links to
# CACHE_DIR/blobs/<kk>/<sha256>. Checked with the real binary:
# - four compiles at once (other options, same weights) publish four whole entries, one blob,
#   which cache stats counts once;
# - kill -9 after the blob is published and before the entry is: no entry, the blob kept while
#   the dead staging folder links it, the compile again stores whole, purge clears the rest;
# - a damaged blob: every entry using it misses (replaced by the compile, its output right),
#   verify names the others, --fix removes them and the damaged copy, verify is then clean;
# - invalidating one of two entries keeps the blob the other uses; purge --all removes it;
# - signed entries (NPUCC_CACHE_KEY_FILE) share a blob; a damaged one is a miss for a reader
#   with the key, never a misread.
set -euo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/npucc-blobs.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MODEL="$TESTDATA/models/ppocr_cls.onnx"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
compile() { # compile OUT [OPTIONS...]
  local out=$1
  shift
  "$NPUCC" compile "$MODEL" -o "$WORK/$out" --cache-dir "$C" --accelerate-train-mode 'fast|step' \
    "$@" >"$WORK/$out.log" 2>&1
}
blobs() { find "$C/blobs" -type f | sort; }
the_blob() { # the blob of the model's weights.data
  local sha
  sha=$(sha256sum "$WORK/c0/weights.data" | cut -d' ' -f1)
  echo "$C/blobs/${sha:0:2}/$sha"
}
links() { stat -c %h "$(the_blob)"; }
entries() { find "$C/entries" -name entry.npucc | wc -l; }
verify_clean() {
  "$NPUCC" cache verify --cache-dir "$C" >"$WORK/verify.log" 2>&1 || fail "$1: $(cat "$WORK/verify.log")"
}

# Four at once: other options (other keys), the same weights.
options=("" "--input-shape x:1,3,48,192" "--input-shape x:2,3,48,192" "--emit-emulation")
pids=()
for i in 0 1 2 3; do
  # shellcheck disable=SC2086
  compile "c$i" ${options[$i]} &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid" || fail "a concurrent compile failed"
done
[ "$(entries)" = 4 ] || fail "concurrent: $(entries) entries"
[ "$(blobs)" = "$(the_blob)" ] || fail "concurrent: blobs $(blobs)"
[ "$(links)" = 5 ] || fail "concurrent: the blob has $(links) links, not 1 + 4 entries"
for i in 1 2 3; do
  cmp "$WORK/c0/weights.data" "$WORK/c$i/weights.data" || fail "c$i: other weights"
done
verify_clean "concurrent"
# stats weighs the blob once (as eviction does); ls gives each entry's size in full.
stats_bytes=$("$NPUCC" cache stats --cache-dir "$C" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["bytes"])')
listed_bytes=$("$NPUCC" cache ls --cache-dir "$C" --json | /usr/bin/python3 -c 'import json,sys; print(sum(e["bytes"] for e in json.load(sys.stdin)["entries"]))')
weights=$(stat -c %s "$WORK/c0/weights.data")
[ "$stats_bytes" = $((listed_bytes - 3 * weights)) ] ||
  fail "stats: $stats_bytes bytes; ls: $listed_bytes for four entries of $weights-byte weights"
# ... and what is on disk, counted by a reader npucc did not write: the entries' files, each
# inode once (the shared blob is one inode with five links).
disk_bytes=$(/usr/bin/python3 - "$C/entries" <<'EOF'
import os, sys
sizes = {}
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        info = os.lstat(os.path.join(folder, name))
        sizes[(info.st_dev, info.st_ino)] = info.st_size
print(sum(sizes.values()))
EOF
)
[ "$stats_bytes" = "$disk_bytes" ] ||
  fail "stats: $stats_bytes bytes; the entries' files on disk, each inode once: $disk_bytes bytes"
echo "ok: four entries at once, one blob"

# kill -9 between the blob and the entry.
note="$WORK/stop.note"
(NPUCC_TEST_STOP_AT=store:blobs-shared NPUCC_TEST_STOP_NOTE="$note" compile killed --input-shape x:4,3,48,192) 2>/dev/null &
victim=$!
for _ in $(seq 1 600); do
  [ -s "$note" ] && break
  sleep 0.1
done
[ -s "$note" ] || fail "the store never reached store:blobs-shared"
kill -9 "$(cut -d' ' -f2 "$note")" 2>/dev/null || true  # honest: the stopped store is killed; the checks below judge what it left
wait "$victim" 2>/dev/null || true  # honest: reaps the killed process: its status is -9 by design
[ "$(entries)" = 4 ] || fail "killed: $(entries) entries (a half entry published?)"
[ "$(links)" = 6 ] || fail "killed: the blob has $(links) links, not 1 + 4 entries + the dead staging"
verify_clean "after kill -9"
compile again --input-shape x:4,3,48,192 || fail "the compile after kill -9: $(cat "$WORK/again.log")"
grep -q "cache: miss" "$WORK/again.log" || fail "after kill -9: not a miss"
[ "$(entries)" = 5 ] || fail "after kill -9: $(entries) entries"
find "$C/tmp" -mindepth 1 -maxdepth 1 -exec touch -h -d '2 hours ago' {} +
"$NPUCC" cache purge --cache-dir "$C" >/dev/null
[ "$(links)" = 6 ] || fail "after the purge of the dead staging: $(links) links, not 1 + 5 entries"
verify_clean "after kill -9 and purge"
echo "ok: kill -9 between the blob and the entry"

# A damaged blob, in place: every entry linking it is damaged.
blob=$(the_blob)
chmod u+w "$blob"
printf 'X' | dd of="$blob" bs=1 seek=1000 conv=notrunc 2>/dev/null
chmod 0444 "$blob"
compile fixed || fail "compile over a damaged blob: $(cat "$WORK/fixed.log")"
grep -q "cache: miss: corrupt entry replaced" "$WORK/fixed.log" || fail "damaged blob: $(grep cache: "$WORK/fixed.log")"
cmp "$WORK/fixed/weights.data" "$WORK/c0/weights.data" || fail "the output after a damaged blob differs"
if "$NPUCC" cache verify --cache-dir "$C" >"$WORK/verify.log" 2>&1; then
  fail "verify found no damaged entry"
fi
[ "$(grep -c 'weights.data does not match its checksum' "$WORK/verify.log")" = 4 ] ||
  fail "verify: $(cat "$WORK/verify.log")"
"$NPUCC" cache verify --cache-dir "$C" --fix >/dev/null 2>&1 || fail "verify --fix"
verify_clean "after verify --fix"
[ "$(entries)" = 1 ] || fail "after --fix: $(entries) entries"
[ "$(links)" = 2 ] || fail "after --fix: the blob has $(links) links"
echo "ok: a damaged blob found through its entries and healed"

# Two entries share the blob: invalidating one keeps it; purge --all removes it.
compile other --input-shape x:1,3,48,192 || fail "compile other"
[ "$(links)" = 3 ] || fail "two entries: $(links) links"
key=$(sed -n 's/^key //p' "$(find "$C/entries" -name entry.npucc | head -1)")
"$NPUCC" cache invalidate --cache-dir "$C" --key "${key:0:12}" >/dev/null || fail "invalidate"
[ "$(links)" = 2 ] || fail "after invalidating one: $(links) links"
compile hit --input-shape x:1,3,48,192 || fail "compile hit"
compile hit2 || fail "compile hit2"
[ "$(grep -c "cache: hit" "$WORK/hit.log" "$WORK/hit2.log" | grep -c ':1$')" = 1 ] ||
  fail "one of the two is still a hit"
"$NPUCC" cache purge --cache-dir "$C" --all --dry-run --json >"$WORK/purge.json" || fail "purge --dry-run"
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["unused_blobs"] != 0)' \
  "$WORK/purge.json" || fail "a dry run counts blobs entries still link: $(cat "$WORK/purge.json")"
"$NPUCC" cache purge --cache-dir "$C" --all >"$WORK/purge.txt" || fail "purge --all"
[ -z "$(blobs)" ] || fail "purge --all left blobs: $(blobs)"
grep -q "^removed 1 shared weight file(s) no entry uses any more, " "$WORK/purge.txt" ||
  fail "purge does not say it removed the blob: $(cat "$WORK/purge.txt")"
echo "ok: a blob goes with its last entry"

# Signed entries: the signature covers the header's checksums, a blob's too.
S="$WORK/signed"
K="$WORK/key"
openssl rand -hex 32 >"$K"
chmod 600 "$K"
"$NPUCC" cache init "$S" >/dev/null
signed() { # signed OUT [OPTIONS...]
  local out=$1
  shift
  NPUCC_CACHE_KEY_FILE="$K" "$NPUCC" compile "$MODEL" -o "$WORK/$out" --cache-dir "$S" \
    --accelerate-train-mode 'fast|step' "$@" >"$WORK/$out.log" 2>&1
}
signed s1 || fail "signed compile: $(cat "$WORK/s1.log")"
signed s2 --input-shape x:1,3,48,192 || fail "signed compile 2: $(cat "$WORK/s2.log")"
[ "$(find "$S/blobs" -type f | wc -l)" = 1 ] || fail "signed: blobs $(find "$S/blobs" -type f)"
signed s3 || fail "signed hit: $(cat "$WORK/s3.log")"
grep -q "cache: hit" "$WORK/s3.log" || fail "signed: not a hit: $(cat "$WORK/s3.log")"
NPUCC_CACHE_KEY_FILE="$K" "$NPUCC" cache verify --cache-dir "$S" >"$WORK/verify.log" 2>&1 ||
  fail "signed verify: $(cat "$WORK/verify.log")"
blob=$(find "$S/blobs" -type f)
chmod u+w "$blob"
printf 'X' | dd of="$blob" bs=1 seek=1000 conv=notrunc 2>/dev/null
chmod 0444 "$blob"
signed s4 --input-shape x:1,3,48,192 || fail "signed over a damaged blob: $(cat "$WORK/s4.log")"
grep -q "cache: miss: corrupt entry replaced" "$WORK/s4.log" || fail "signed, damaged blob: $(grep cache: "$WORK/s4.log")"
cmp "$WORK/s4/weights.data" "$WORK/s1/weights.data" || fail "signed: the output after a damaged blob differs"
echo "ok: signed entries share a blob; a damaged one is a miss"

[ "$status" = 0 ] && echo "PASS: cache blobs"
exit "$status"
