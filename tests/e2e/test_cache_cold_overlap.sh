#!/usr/bin/env bash
# The cold path of a cached compile (issue 46): a single-file model no digest is recorded
# for is hashed beside its compile, not before it. A miss then stores what --no-cache
# writes; a hit found once the digest is known (a touched model whose bytes the cache
# holds, and no hint of them) stops the compile and delivers the entry, leaving no staging
# folder behind; a touched model whose sampled bytes are a cached model's, whose entry for
# the request is there (a fresh checkout with a restored cache), is hashed first and starts
# no compile work; a wrong guess still keys by the bytes hashed; a settled model is keyed by
# its recorded digest and hashed by nobody.
source "$(dirname "$0")/cache_common.sh"
C="$WORK/cache"
"$NPUCC" cache init "$C" >/dev/null
M="$WORK/model.onnx"
cp "$TESTDATA/models/ppocr_cls.onnx" "$M"
MODE=(--accelerate-train-mode 'fast|step|0.9')
BESIDE="cache: the model hashed beside the compile"
LIKELY="hashed before any compile work (likely a hit)"
compile() {
  local out=$1; shift
  expect_status 0 "$NPUCC" -v compile "$M" -o "$WORK/$out" --cache-dir "$C" "${MODE[@]}" "$@"
}
no_beside() { if grep -q "$BESIDE" "$WORK/err"; then fail "$1"; fi; }
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

# 2. Touched (no digest recorded, the bytes in the cache, no hint of them: an older npucc's
# cache): the digest is known beside the compile, the hit stops it, and the entry is
# delivered.
rm -rf "$C/digests"
touch "$M"
compile touched
contains "$WORK/err" "$BESIDE"
contains "$WORK/out" "cache: hit"
same_outputs plain touched
no_leftovers
pass "a hit found once the digest is known stops the compile and publishes the entry only"

# 3. Touched again: the hit recorded its sample's hint; the entry for this request is there,
# so the model is hashed first and no compile work starts.
touch "$M"
compile likely
contains "$WORK/err" "$LIKELY"
no_beside "a likely hit was compiled beside its hash"
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "input digests: 1 file hashed"
same_outputs plain likely
no_leftovers
expect_status 0 "$NPUCC" cache verify --cache-dir "$C"
contains "$WORK/out" ": no problems"
pass "a touched model whose entry is cached is hashed first: a hit, no compile started"

# 4. The same bytes with options keyed otherwise: no entry for them, so hashed beside.
touch "$M"
compile self --self-contained
contains "$WORK/err" "$BESIDE"
contains "$WORK/out" "cache: miss"
if grep -q "$LIKELY" "$WORK/err"; then fail "a request without an entry was guessed a hit"; fi
pass "the same bytes with other keyed options are hashed beside the compile"

# 5. A wrong guess: one weight changed between the sampled blocks (the sample is the
# same), so the guess is a hit; the key is the bytes' own, a miss, and the outputs are the
# changed model's.
$PY - "$M" <<'PY'
import sys, onnx
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
blocks, block, size = 64, 4096, len(data)
sampled = [(i * (size - block) // (blocks - 1), i * (size - block) // (blocks - 1) + block)
           for i in range(blocks)]
model = onnx.load_from_string(bytes(data))
tensors = list(model.graph.initializer) + [a.t for n in model.graph.node for a in n.attribute
                                           if n.op_type == "Constant" and a.name == "value"]
for tensor in sorted(tensors, key=lambda t: -len(t.raw_data)):
    start = data.find(tensor.raw_data)
    for at in range(start + 4, start + len(tensor.raw_data) - 4, 4):  # a float's low byte
        if all(not (lo <= at < hi) for lo, hi in sampled):
            data[at] ^= 0x01
            open(path, "wb").write(data)
            sys.exit(0)
sys.exit("no weight byte outside the sampled blocks")
PY
expect_status 0 "$NPUCC" compile "$M" -o "$WORK/plain-changed" "${MODE[@]}" --no-cache
compile changed
contains "$WORK/err" "$LIKELY"
contains "$WORK/out" "cache: miss"
same_outputs plain-changed changed
if cmp -s "$WORK/plain/low.onnx" "$WORK/changed/low.onnx" &&
  cmp -s "$WORK/plain/weights.data" "$WORK/changed/weights.data"; then
  fail "the changed weight did not change the outputs"
fi
no_leftovers
pass "a wrong guess keys by the bytes hashed: a miss, the changed model's outputs"

# 6. Settled: the recorded digest keys it through the model index; nothing is hashed.
sleep 2.2
compile settle # records the digest (the file is older than the racy margin now)
compile warm
contains "$WORK/out" "cache: hit"
contains "$WORK/out" "input digests: 1 file by recorded digest"
if grep -q "$BESIDE" "$WORK/err"; then fail "a recorded digest was hashed again"; fi
pass "a settled model is keyed by its recorded digest, hashed by nobody"
