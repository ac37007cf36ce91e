#!/usr/bin/env bash
# ONNX Runtime as the oracle for the real models (testdata/models) and the torch-exported ones
# (testdata/models/torch): each is compiled by npucc, and on the same seeded random inputs the
# compiled high.onnx must give the original's outputs (max relative difference <= 1e-5, the
# denominator floored at 1e-3 of the output's largest magnitude so float32 rounding near zero
# does not count; max abs difference printed too). Every high.onnx must also pass ONNX's own
# full checker. Each model is also compiled with --external-data, and dynamic-dim models with
# --input-shape fixing their dims.
set -euo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
models="$TESTDATA/models"
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-ort.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name | model | npucc --input-shape for the fixed-shape variant ("" = no variant) |
# input shapes for ORT | fixed input values | input value ranges
cases=(
  "ppocrv4_det|ppocrv4_det.onnx|x:1,3,320,320|{\"x\":[1,3,320,320]}|{}|{\"x\":[0,1]}"
  "ppocr_cls|ppocr_cls.onnx|x:1,3,48,192|{\"x\":[1,3,48,192]}|{}|{\"x\":[0,1]}"
  "oww_hello_deepa|oww_hello_deepa.onnx||{\"onnx::Flatten_0\":[1,25,96]}|{}|{}"
  "silero_vad_legacy|silero_vad_legacy.onnx|input:1,512;h:2,1,64;c:2,1,64|{\"input\":[1,512],\"h\":[2,1,64],\"c\":[2,1,64]}|{\"sr\":16000}|{}"
  "torch_resnet_small|torch/resnet_small.onnx|image:2,3,64,64|{\"image\":[2,3,64,64]}|{}|{}"
  "torch_transformer_encoder|torch/transformer_encoder.onnx|tokens:2,16|{\"tokens\":[2,16]}|{}|{\"tokens\":[0,99]}"
  "torch_lstm_tagger|torch/lstm_tagger.onnx|features:2,10,20;h0:2,2,24;c0:2,2,24|{\"features\":[2,10,20],\"h0\":[2,2,24],\"c0\":[2,2,24]}|{}|{}"
)

status=0
entries=()
for entry in "${cases[@]}"; do
  IFS='|' read -r name model fixed shapes values ranges <<< "$entry"
  if [ ! -f "$models/$model" ]; then
    echo "FAIL $name: $models/$model is missing"
    status=1
    continue
  fi
  # plain, fixed input shapes, and weights in an external data file (which ORT must find)
  variants=("$name||")
  [ -n "$fixed" ] && variants+=("$name.fixed|$fixed|")
  variants+=("$name.external||--external-data")
  for variant in "${variants[@]}"; do
    IFS='|' read -r label shape_option extra <<< "$variant"
    args=(compile "$models/$model" -o "$work/$label")
    [ -n "$shape_option" ] && args+=(--input-shape "$shape_option")
    [ -n "$extra" ] && args+=("$extra")
    if ! "$NPUCC" "${args[@]}" > "$work/$label.log" 2>&1; then
      echo "FAIL $label: npucc ${args[*]}"
      cat "$work/$label.log"
      status=1
      continue
    fi
    entries+=("{\"name\":\"$label\",\"original\":\"$models/$model\",\"compiled\":\"$work/$label/high.onnx\",\"shapes\":$shapes,\"values\":$values,\"ranges\":$ranges,\"seed\":7}")
  done
done
(IFS=','; echo "[${entries[*]}]") > "$work/cases.json"

echo "== ONNX Runtime: original vs npucc high.onnx"
node "$oracle/compare.js" --cases "$work/cases.json" --strict --threads 2 \
  --max-rel 1e-5 --abs-floor 1e-6 --scale-floor 1e-3 || status=1

echo "== ONNX checker (full) on every high.onnx"
find "$work" -name high.onnx | sort > "$work/high.txt"
/usr/bin/python3 "$SOURCE_DIR/tests/tools/onnx_checker.py" --list "$work/high.txt" || status=1

# The oracle must be able to fail: a graph with one weight scaled by 1.0001 must exceed the
# 1e-5 threshold, and a graph using an undefined value must fail the checker.
echo "== oracle self-check"
/usr/bin/python3 - "$work/torch_resnet_small/high.onnx" "$work/perturbed.onnx" "$work/invalid.onnx" <<'EOF'
import sys
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
weight = next(t for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT)
weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 1.0001, weight.name))
onnx.save(model, sys.argv[2])
model.graph.node[-1].input[0] = "no_such_value"
onnx.save(model, sys.argv[3])
EOF
if node "$oracle/compare.js" --quiet --shape image:2,3,64,64 --max-rel 1e-5 \
    "$models/torch/resnet_small.onnx" "$work/perturbed.onnx" > "$work/self.txt"; then
  echo "FAIL: compare.js did not notice a weight scaled by 1.0001"
  status=1
fi
grep '^FAIL' "$work/self.txt" | sed 's/^/  caught as expected: /' || true  # honest: prints what the self-check caught; checked above
if /usr/bin/python3 "$SOURCE_DIR/tests/tools/onnx_checker.py" "$work/invalid.onnx" > "$work/self.txt"; then
  echo "FAIL: onnx_checker.py accepted a graph that reads an undefined value"
  status=1
fi
grep '^FAIL' "$work/self.txt" | sed 's/^/  caught as expected: /' || true  # honest: prints what the self-check caught; checked above

if [ "$status" = 0 ]; then
  echo "PASS: ${#entries[@]} compiled graphs equal their originals under ONNX Runtime"
fi
exit "$status"
