#!/usr/bin/env bash
# Constant folding checked against ONNX's own reference outputs: every backend-suite node test
# of an op fold_shapes/fold_constants handle is turned into a graph without inputs (its test
# inputs become initializers, its outputs are read through an Identity so the op is not a
# graph output), compiled by npucc, and ONNX Runtime must reproduce the test's expected outputs
# from high.onnx exactly as from the unfolded graph. The test fails unless most of the cases
# were actually folded, so it cannot pass by folding nothing.
set -euo pipefail
# --no-cache: the cache key names the compiler by its version only, so a rebuilt npucc
# would be handed graphs an older build compiled.

data=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}
if [ ! -d "$data/node" ]; then
  echo "skip: ONNX's backend test data is absent ($data); apt-get install libonnx-testdata"
  exit 77 # the one skip code (tests/e2e/skip_common.sh)
fi
: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-fold.XXXXXX")
trap 'rm -rf "$work"' EXIT

ops='cast|concat|gather|unsqueeze|squeeze|slice|reshape|add|sub|mul|div|equal|where|constantofshape|range|expand|shape|size|split|reduce_max|reduce_min|constant_pad|edge_pad|reflect_pad'
find "$data/node" -mindepth 1 -maxdepth 1 -type d | sort |
  grep -E "/test_($ops)(_[a-z0-9_]*)?$" | grep -v -E "_expanded$|gather_elements|gathernd" \
  > "$work/tests.txt" || true  # honest: an empty list is checked below

# Inputs -> initializers, outputs read through an Identity; one folder per test.
/usr/bin/python3 - "$work/tests.txt" "$work/cases" > "$work/made.txt" <<'EOF'
import glob, os, sys
import onnx
for test in open(sys.argv[1]).read().split():
    data_set = os.path.join(test, "test_data_set_0")
    model = onnx.load(os.path.join(test, "model.onnx"))
    graph = model.graph
    inputs = sorted(glob.glob(os.path.join(data_set, "input_*.pb")),
                    key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    if len(inputs) != len(graph.input):
        continue
    for value, path in zip(list(graph.input), inputs):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(open(path, "rb").read())
        tensor.name = value.name
        graph.initializer.append(tensor)
    del graph.input[:]
    for output in graph.output:
        inner = output.name + "__folded"
        for node in graph.node:
            node.output[:] = [inner if o == output.name else o for o in node.output]
        graph.node.append(onnx.helper.make_node("Identity", [inner], [output.name]))
    if model.ir_version < 4:
        model.ir_version = 4
    folder = os.path.join(sys.argv[2], os.path.basename(test))
    os.makedirs(folder)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    print(os.path.basename(test), data_set)
EOF

folded=0
total=0
entries=()
while read -r name data_set; do
  total=$((total + 1))
  case_dir="$work/cases/$name"
  if ! "$NPUCC" compile --no-cache "$case_dir/model.onnx" -o "$case_dir/out" > "$case_dir/log" 2>&1; then
    echo "FAIL $name: npucc compile"
    cat "$case_dir/log"
    exit 1
  fi
  if grep -q -E "fold_(shapes|constants) [0-9]+ nodes folded" "$case_dir/log"; then
    folded=$((folded + 1))
  fi
  expected=$(find "$data_set" -name 'output_*.pb' | sort -V | sed 's/.*/"&"/' | paste -sd, -)
  entries+=("{\"name\":\"$name\",\"original\":\"$case_dir/model.onnx\",\"compiled\":\"$case_dir/out/high.onnx\",\"inputs\":[],\"expected\":[$expected]}")
done < "$work/made.txt"
(IFS=','; echo "[${entries[*]}]") > "$work/cases.json"
echo "fold backend: $folded of $total node tests folded"

status=0
node "$oracle/compare.js" --quiet --cases "$work/cases.json" --max-rel 0 --abs-floor 1e-30 \
  --expected-rtol 1e-3 --expected-atol 1e-5 > "$work/ort.txt" 2>&1 || status=1
grep -E '^(FAIL|oracle)' "$work/ort.txt" | head -n 40 || true  # honest: prints the failures; the counts decide
if [ "$folded" -lt $((total * 3 / 4)) ]; then
  echo "FAIL: only $folded of $total cases were folded"
  status=1
fi
[ "$status" = 0 ] && echo "PASS: folded graphs reproduce ONNX's expected outputs"
exit "$status"
