#!/usr/bin/env bash
# One copy of each weight (issue 32 item 1): a compile that writes several graphs (high, low,
# emulation) stores their weights once, in OUTDIR/weights.data, and every graph refers to it.
# For the bundled models, compiled with fast|step and --emit-emulation:
# - every large tensor of every graph (initializers, subgraphs, Constant values) is a
#   reference into weights.data at a 64-byte aligned offset; bytes two graphs hold are
#   stored once (no more copies than one graph holds: a model may itself store a constant
#   twice, as silero's two If branches do), and the file holds nothing but the referenced
#   bytes and alignment;
# - ONNX Runtime loads every graph from the folder: high gives the original's outputs, and
#   every graph gives exactly the outputs of its --self-contained twin;
# - --self-contained writes no weights.data, and its graphs load alone, copied elsewhere;
# - a cache hit in every link mode delivers a weights.data with one link (ONNX Runtime refuses
#   more) that the graphs load from, and the entry holds the weights once.
set -euo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
models="$TESTDATA/models"
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-shared.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

# name | model | input shapes for ORT | fixed input values | input value ranges
cases=(
  "ppocr_cls|ppocr_cls.onnx|{\"x\":[1,3,48,192]}|{}|{\"x\":[0,1]}"
  "oww_hello_deepa|oww_hello_deepa.onnx|{\"onnx::Flatten_0\":[1,25,96]}|{}|{}"
  "silero_vad_legacy|silero_vad_legacy.onnx|{\"input\":[1,512],\"h\":[2,1,64],\"c\":[2,1,64]}|{\"sr\":16000}|{}"
  "torch_resnet_small|torch/resnet_small.onnx|{\"image\":[2,3,64,64]}|{}|{}"
  "torch_transformer_encoder|torch/transformer_encoder.onnx|{\"tokens\":[2,16]}|{}|{\"tokens\":[0,99]}"
)

# Checks OUTDIR's layout: every large tensor a reference into weights.data, aligned, within
# it; no content at more offsets than one graph refers to; nothing unreferenced but padding.
check_layout() {
  /usr/bin/python3 - "$1" <<'EOF'
import hashlib, json, os, sys
import onnx
from onnx import numpy_helper
from onnx.external_data_helper import _get_all_tensors
out = sys.argv[1]
manifest = json.load(open(os.path.join(out, "manifest.json")))
data = open(os.path.join(out, "weights.data"), "rb").read()
ranges = set()
per_graph = []  # each graph's set of (offset, length)
for graph in manifest["graphs"]:
    per_graph.append(set())
    assert [f["file"] for f in graph["external_data"]] == ["weights.data"], graph
    m = onnx.load(os.path.join(out, graph["file"]), load_external_data=False)
    for t in _get_all_tensors(m):
        if t.data_location != onnx.TensorProto.EXTERNAL:
            # its bytes whatever field holds them (raw_data, float_data, int64_data, ...)
            assert numpy_helper.to_array(t).nbytes < 1024, (t.name, "1 KiB or more stored inline")
            continue
        ref = {e.key: e.value for e in t.external_data}
        assert ref["location"] == "weights.data", ref
        offset, length = int(ref["offset"]), int(ref["length"])
        assert offset % 64 == 0 and offset + length <= len(data), (t.name, ref)
        ranges.add((offset, length))
        per_graph[-1].add((offset, length))
    onnx.checker.check_model(os.path.join(out, graph["file"]), full_check=True)
def digest(place):
    return hashlib.sha256(data[place[0]:place[0] + place[1]]).hexdigest()
copies = {}
for place in ranges:
    copies.setdefault(digest(place), []).append(place[0])
for d, offsets in copies.items():
    most_in_one_graph = max(sum(1 for p in places if digest(p) == d) for places in per_graph)
    assert len(offsets) <= most_in_one_graph, ("stored more often than a graph holds it", offsets)
referenced = sum(length for _, length in ranges)
assert len(data) <= referenced + 64 * len(ranges), (len(data), referenced)
print("%s: weights.data %d bytes, %d tensors" % (os.path.basename(out), len(data), len(ranges)))
EOF
}

# Checks OUTDIR's graphs against the original model with ONNX's own reader (onnx.load
# resolving weights.data, numpy; nothing of npucc's): every weight of high.onnx and low.onnx
# named as one of the original's (an initializer, or a Constant node's output) holds its
# values: exactly, or as numpy's float16 rounding of them where the low graph stores it
# float16. Each graph must hold at least one such weight, so the check cannot pass empty; with
# a third argument "float16", low.onnx must hold at least one weight stored float16
# (--low-precision-weights), so the rounding branch is exercised too.
check_weights() {
  /usr/bin/python3 - "$1" "$2" "${3:-}" <<'EOF'
import os, sys
import numpy as np
import onnx
from onnx import numpy_helper
out, original, want_float16 = sys.argv[1], onnx.load(sys.argv[2]), sys.argv[3] == "float16"
reference = {t.name: numpy_helper.to_array(t) for t in original.graph.initializer}
for node in original.graph.node:
    for attribute in node.attribute:
        if node.op_type == "Constant" and attribute.name == "value":
            reference[node.output[0]] = numpy_helper.to_array(attribute.t)
for role in ("high", "low"):
    matched = rounded = 0
    for t in onnx.load(os.path.join(out, role + ".onnx")).graph.initializer:
        if t.name not in reference:
            continue
        value, want = numpy_helper.to_array(t), reference[t.name]
        if value.dtype == np.float16 and want.dtype == np.float32:
            want = want.astype(np.float16)
            rounded += 1
        assert value.dtype == want.dtype and value.shape == want.shape, (role, t.name, value.dtype, want.dtype)
        assert np.array_equal(value, want, equal_nan=True), (role, t.name, "values differ from the original's")
        matched += 1
    assert matched > 0, role + ".onnx: no weight named as one of the original's"
    if role == "low" and want_float16:
        assert rounded > 0, "low.onnx: no weight stored float16 (--low-precision-weights)"
    print("%s %s: %d weights hold the original's values (%d as float16)" % (
        os.path.basename(out), role, matched, rounded))
EOF
}

high_cases=()
twin_cases=()
for entry in "${cases[@]}"; do
  IFS='|' read -r name model shapes values ranges <<<"$entry"
  for layout in shared self; do
    extra=()
    [ "$layout" = self ] && extra=(--self-contained)
    if ! "$NPUCC" compile "$models/$model" -o "$work/$name.$layout" --no-cache \
      --accelerate-train-mode 'fast|step' --emit-emulation "${extra[@]}" >"$work/$name.log" 2>&1; then
      fail "$name ($layout) did not compile: $(cat "$work/$name.log")"
      continue 2
    fi
  done
  check_layout "$work/$name.shared" || fail "$name: shared layout"
  check_weights "$work/$name.shared" "$models/$model" || fail "$name: weights against the original"
  if "$NPUCC" compile "$models/$model" -o "$work/$name.lpw" --no-cache --low-precision-weights \
    --accelerate-train-mode 'fast|step' >"$work/$name.log" 2>&1; then
    check_weights "$work/$name.lpw" "$models/$model" float16 ||
      fail "$name: --low-precision-weights' float16 weights against the original's rounding"
  else
    fail "$name (--low-precision-weights) did not compile: $(cat "$work/$name.log")"
  fi
  [ ! -e "$work/$name.self/weights.data" ] || fail "$name: --self-contained wrote weights.data"
  shared_bytes=$(du -cb "$work/$name.shared"/*.onnx "$work/$name.shared"/*.data | tail -1 | cut -f1)
  self_bytes=$(du -cb "$work/$name.self"/*.onnx | tail -1 | cut -f1)
  [ "$shared_bytes" -lt "$self_bytes" ] || fail "$name: shared $shared_bytes bytes, self-contained $self_bytes"
  echo "$name: graphs and data $shared_bytes bytes shared, $self_bytes self-contained"
  common="\"shapes\":$shapes,\"values\":$values,\"ranges\":$ranges,\"seed\":7"
  high_cases+=("{\"name\":\"$name\",\"original\":\"$models/$model\",\"compiled\":\"$work/$name.shared/high.onnx\",$common}")
  mkdir "$work/$name.alone"
  for role in high low emulation; do
    # a self-contained graph loads on its own
    cp "$work/$name.self/$role.onnx" "$work/$name.alone/$role.onnx"
    twin_cases+=("{\"name\":\"$name $role\",\"original\":\"$work/$name.alone/$role.onnx\",\"compiled\":\"$work/$name.shared/$role.onnx\",$common}")
  done
done
(IFS=','; echo "[${high_cases[*]}]") >"$work/high.json"
(IFS=','; echo "[${twin_cases[*]}]") >"$work/twins.json"

echo "== ONNX Runtime: original vs high.onnx with shared weights"
node "$oracle/compare.js" --cases "$work/high.json" --strict --threads 2 --quiet \
  --max-rel 1e-5 --abs-floor 1e-6 --scale-floor 1e-3 || fail "high graphs differ from the originals"
echo "== ONNX Runtime: each graph, self-contained (alone) vs shared weights"
node "$oracle/compare.js" --cases "$work/twins.json" --strict --threads 2 --quiet \
  --max-abs 0 --no-type-check || fail "a graph with shared weights differs from its self-contained twin"

echo "== the cache: one copy per entry, and hits ORT loads in every link mode"
cache="$work/cache"
"$NPUCC" cache init "$cache" >/dev/null
model="$models/ppocr_cls.onnx"
"$NPUCC" compile "$model" -o "$work/miss" --cache-dir "$cache" --accelerate-train-mode 'fast|step' \
  >"$work/miss.log" 2>&1 || fail "cached compile: $(cat "$work/miss.log")"
entry=$(dirname "$(find "$cache" -name entry.npucc | head -1)")
[ "$(grep -c '^file ' "$entry/entry.npucc")" = 4 ] || fail "entry files: $(grep '^file ' "$entry/entry.npucc")"
entry_bytes=$(du -cb "$entry"/*.onnx "$entry"/*.data | tail -1 | cut -f1)
model_bytes=$(stat -c %s "$model")
[ "$entry_bytes" -lt $((model_bytes * 3 / 2)) ] || fail "entry holds $entry_bytes bytes for a $model_bytes-byte model"
hit_cases=()
for mode in auto copy hardlink; do
  "$NPUCC" compile "$model" -o "$work/hit-$mode" --cache-dir "$cache" --link-mode "$mode" \
    --accelerate-train-mode 'fast|step' >"$work/hit.log" 2>&1 || fail "hit ($mode): $(cat "$work/hit.log")"
  grep -q "cache: hit" "$work/hit.log" || fail "$mode: not a hit: $(cat "$work/hit.log")"
  [ "$(stat -c %h "$work/hit-$mode/weights.data")" = 1 ] || fail "$mode: weights.data has several links"
  cmp "$work/hit-$mode/weights.data" "$work/miss/weights.data" || fail "$mode: weights.data differs"
  for role in high low; do
    hit_cases+=("{\"name\":\"$mode $role\",\"original\":\"$work/miss/$role.onnx\",\"compiled\":\"$work/hit-$mode/$role.onnx\",\"shapes\":{\"x\":[1,3,48,192]},\"ranges\":{\"x\":[0,1]},\"seed\":7}")
  done
done
(IFS=','; echo "[${hit_cases[*]}]") >"$work/hits.json"
node "$oracle/compare.js" --cases "$work/hits.json" --strict --quiet --max-abs 0 ||
  fail "a hit's graphs do not run as the miss's"
"$NPUCC" cache verify --cache-dir "$cache" >"$work/verify.log" 2>&1 || fail "verify: $(cat "$work/verify.log")"

[ "$status" = 0 ] && echo "PASS: shared weights"
exit "$status"
