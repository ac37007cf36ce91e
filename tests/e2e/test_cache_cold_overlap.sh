#!/usr/bin/env bash
# The cold path of a cached compile (issue 46): a single-file model no digest is recorded
# for is hashed beside its compile, not before it. A miss then stores what --no-cache
# writes; a hit found once the digest is known (a touched model whose bytes the cache
# holds: a fresh checkout) stops the compile and delivers the entry, leaving no staging
# folder behind; a settled model is keyed by its recorded digest and hashed by nobody.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
M="$WORK/model.onnx"
cp "$TESTDATA/models/ppocr_cls.onnx" "$M"
MODE=(--accelerate-train-mode 'fast|step|0.9')
BESIDE="cache: the model hashed beside the compile"
compile() { expect_status 0 "$NPUCC" -v compile "$M" -o "$WORK/$1" --cache-dir "$C" "${MODE[@]}"; }
# same_outputs A B: the graphs and weights of two output folders are byte-identical.
same_outputs() {
  for f in "$WORK/$1"/*.onnx "$WORK/$1"/*.data; do
    cmp -s "$f" "$WORK/$2/$(basename "$f")" || fail "$1 and $2 differ in $(basename "$f")"
  done
}
# no_leftovers: no staging folder beside the outputs, nothing in the cache's tmp/.
no_leftovers() {
  [ -z "$(find "$C/tmp" -mindepth 1 2>/dev/null)" ] || fail "left in $C/tmp: $(ls -A "$C/tmp")"
  [ -z "$(find "$WORK" -maxdepth 1 -name '*.tmp.*')" ] ||
    fail "a staging folder left: $(find "$WORK" -maxdepth 1 -name '*.tmp.*')"
}

expect_status 0 "$NPUCC" compile "$M" -o "$WORK/plain" "${MODE[@]}" --no-cache

# 1. Cold: a miss, the model hashed beside the compile, the same outputs as --no-cache.
compile cold
contains "$WORK/out" "cache: miss"
contains "$WORK/err" "$BESIDE"
contains "$WORK/out" "input digests: 1 file hashed"
same_outputs plain cold
no_leftovers
pass "a cold miss hashes the model beside its compile and stores what --no-cache writes"

# 2. Touched (no digest recorded, the bytes in the cache): the digest is known beside the
# compile, the hit stops it, and the entry is delivered.
touch "$M"
compile touched
contains "$WORK/err" "$BESIDE"
contains "$WORK/out" "cache: hit"
same_outputs plain touched
no_leftovers
pass "a hit found once the digest is known stops the compile and publishes the entry only"

# 3. Settled: the recorded digest keys it through the model index; nothing is hashed.
sleep 2.2
compile settle # records the digest (the file is older than the racy margin now)
compile warm
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "input digests: 1 file by recorded digest"
if grep -q "$BESIDE" "$WORK/err"; then fail "a recorded digest was hashed again"; fi
pass "a settled model is keyed by its recorded digest, hashed by nobody"
