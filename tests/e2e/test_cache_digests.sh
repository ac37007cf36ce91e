#!/usr/bin/env bash
# The input digest cache (cache.digest_cache, src/cache/input_digests.h): an unchanged model
# is known by the digests recorded beside its inode, size and times, and no trap of
# stat-based caching gives a stale hit: touch -r, a rename over the model, a write right
# after hashing (racy), concurrent writers, a clock set back.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
D="$WORK/m"
mkdir -p "$D"
M="$D/m.onnx"
$PY "$(dirname "$0")/make_external_matmul_model.py" "$M"
W="$D/weights.bin"
# settle: waits until every input's ctime is older than the racy margin (2 s).
settle() { sleep 2.2; }
compile() { expect_status 0 "$NPUCC" compile "$M" -o "$WORK/out-$1" --cache-dir "$C" "${@:2}"; }
key_of() { sed -n 's/.*cache: [a-z]*.*(key \([0-9a-f]*\)).*/\1/p' "$WORK/out"; }
# flip_byte FILE: changes one weight byte in place and puts the mtime back (touch -r).
flip_byte() {
  touch -r "$1" "$WORK/mtime-ref"
  $PY -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 0x40]))' "$1"
  touch -r "$WORK/mtime-ref" "$1"
}

# The recorded digests in digests/ (not the sample hints a store or hit leaves beside them).
# No digests/ folder yet: nothing recorded, an empty list.
digest_files() {
  if [ -d "$C/digests" ]; then
    grep -rlx 'npucc-input-digest 1' "$C/digests"
  fi
}

# 1. A model written a moment ago is hashed, and not recorded until it is 2 s old (racy).
# Its ctime is made "a moment ago" right before each compile (chmod changes only the
# ctime): two compiles in a row take over 2 s on a loaded machine.
fresh() { chmod u+w "$M" "$W"; }
fresh; compile 1
contains "$WORK/out" "cache: miss"
contains "$WORK/out" "input digests: 2 files hashed"
fresh; compile 2
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "input digests: 2 files hashed"
[ -z "$(digest_files)" ] || fail "a file changed < 2 s ago was recorded"
pass "racy: a freshly written model is hashed each time and never recorded"

# 2. Settled: recorded once, then known without reading; explain says so.
settle
compile 3
contains "$WORK/out" "input digests: 2 files hashed"
[ "$(digest_files | wc -l)" = 2 ] || fail "2 digests should be recorded"
compile 4
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "input digests: 2 files by recorded digest (unchanged: no byte read)"
key_a=$(key_of)
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/x" --cache-dir "$C"
[ "$(grep -c 'its recorded digest is used (unchanged since' "$WORK/out")" = 2 ] ||
  { cat "$WORK/out"; fail "explain should say both digests are recorded"; }
expect_status 0 "$NPUCC" cache explain "$M" -o "$WORK/x" --cache-dir "$C" --json
valid_json npucc-cache-explain "$WORK/out"
[ "$(json_get "$WORK/out" '[i["digest"] for i in d["inputs"]]')" = "['recorded', 'recorded']" ] ||
  fail "explain --json inputs"
pass "an unchanged model: recorded once, then no byte read"

# 2b. Options the model must judge (--input-shape, --target-opset): the model index keeps
# what they need of it (its declared shapes and opset), so their hits read and parse
# nothing either, and land on the entry the parsed model's key names.
compile s1 --input-shape x:1,64 --target-opset 17
contains "$WORK/out" "cache: hit" # both are no-ops on this model: the entry of compile 4
[ "$(key_of)" = "$key_a" ] || fail "no-op options keyed apart: $(key_of) vs $key_a"
compile s2 -v --input-shape x:1,64 --target-opset 17
contains "$WORK/out" "cache: hit"
contains "$WORK/err" "(model index: no parse needed)"
contains "$WORK/out" "input digests: 2 files by recorded digest (unchanged: no byte read)"
compile s3 -v --input-shape x:-1,64
contains "$WORK/err" "(model index: no parse needed)"
[ "$(key_of)" = "$key_a" ] || fail "-1 keeps the declared dim: the same key"
pass "--input-shape and --target-opset hits parse and read nothing (the index's key facts)"

# 3. A byte changed and the mtime put back: the ctime tells; a miss, never a stale hit.
flip_byte "$W"
compile 5
contains "$WORK/out" "cache: miss"
contains "$WORK/out" "input digests: 1 file by recorded digest, 1 file hashed"
key_b=$(key_of)
[ "$key_a" != "$key_b" ] || fail "a changed weight kept its key"
pass "touch -r after a one-byte change: hashed again, a miss"

# 4. touch alone: hashed again (its times changed), still the same bytes: a hit.
settle
compile 6 # records the flipped file's digest
touch "$W"
compile 7
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "1 file hashed"
[ "$(key_of)" = "$key_b" ] || fail "touch changed the key"
pass "touch alone: re-hashed, a hit"

# 5. A file renamed over the weights (same size, mtime put back): another inode, hashed.
settle
compile 8 # records the touched file's digest
compile 8b
contains "$WORK/out" "2 files by recorded digest"
cp "$W" "$WORK/w.new"
flip_byte "$WORK/w.new" # back to the first bytes
touch -r "$W" "$WORK/w.new"
mv "$WORK/w.new" "$W"
compile 9
contains "$WORK/out" "1 file hashed"
[ "$(key_of)" = "$key_a" ] || fail "the renamed-over weights did not give the first key back"
pass "rename over: hashed, the key of the new bytes"

# 6. The clock set back past a recording: the digest is not trusted.
settle
compile 10
contains "$WORK/out" "2 files by recorded digest\|1 file hashed"
compile 11
contains "$WORK/out" "2 files by recorded digest"
for f in $(find "$C/digests" -type f); do
  sed -i "s/^recorded .*/recorded $(( $(date +%s) + 3600 ))000000000/" "$f"
done
compile 12
contains "$WORK/out" "the clock reads earlier than when its digest was recorded"
pass "a digest recorded 'in the future' (the clock went back) is not trusted"

# 7. Concurrent compiles of one settled model into one cache: all succeed, one digest per
# input file version, no temporary left.
settle
pids=()
for i in 1 2 3 4; do
  "$NPUCC" compile "$M" -o "$WORK/par-$i" --cache-dir "$C" >"$WORK/par-$i.log" 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a concurrent compile failed"; done
[ -z "$(find "$C/digests" -name '*.tmp.*')" ] || fail "a temporary digest was left"
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
pass "4 concurrent compiles: all good, digests/ clean"

# 8. A writer flipping the weights while compiles run: once it stops, the next compiles
# know the file's real bytes (never a digest recorded for a version in between).
(
  for i in $(seq 40); do flip_byte "$W"; sleep 0.05; done
) &
writer=$!
for i in 1 2 3 4 5 6; do
  set +e
  "$NPUCC" compile "$M" -o "$WORK/race-$i" --cache-dir "$C" >"$WORK/race.log" 2>&1
  status=$?
  set -e
  [ "$status" = 0 ] || [ "$status" = 1 ] || { cat "$WORK/race.log"; fail "compile exited $status"; }
done
wait "$writer"
# 40 flips bring the first bytes back: the key is key_a, whatever was recorded meanwhile.
for i in 1 2; do
  compile "after-$i"
  [ "$(key_of)" = "$key_a" ] || { cat "$WORK/out"; fail "after the writer: key $(key_of), want $key_a"; }
done
settle
compile after-3
compile after-4
contains "$WORK/out" "2 files by recorded digest"
[ "$(key_of)" = "$key_a" ] || fail "the recorded digest after the writer is not the file's"
pass "a concurrent writer: no stale digest once it stops"

# 9. off: every input hashed, no recorded digest used (a sample hint still orders the work:
# it is no digest).
compile off --digest-cache off
contains "$WORK/out" "2 files hashed (the first: the digest cache is off: cache.digest_cache)"
NPUCC_DIGEST_CACHE=off compile off-env
contains "$WORK/out" "the digest cache is off"
expect_status 2 "$NPUCC" compile "$M" -o "$WORK/bad" --cache-dir "$C" --digest-cache maybe
contains "$WORK/err" "digest-cache"
pass "--digest-cache off and NPUCC_DIGEST_CACHE=off hash every input; a bad value is refused"

# 10. purge --all empties digests/.
expect_status 0 "$NPUCC" cache purge --all --cache-dir "$C"
[ -z "$(find "$C/digests" -type f)" ] || fail "purge --all left digests"
pass "purge --all removes the recorded digests"
