#!/usr/bin/env bash
# Today's exporters in the corpus (issue 45 item 4): the models of testdata/models/dynamo
# (PyTorch 2.15's dynamo exporter: opset 20, IR 10; a torchvision ShuffleNet, a transformer
# encoder and decoder block, an LSTM, timm's ConvNeXt) compile at fast and fast1 with the
# accuracy check on realistic inputs (tests/tools/make_dynamo_samples.py: rendered pages and
# outdoor scenes, Zipf token ids, speech band energies). Checked by what npucc did not write: ONNX Runtime's Node binding
# (tests/oracle) runs each original and its high.onnx on the same inputs (equal within 1e-5
# relative), and recomputes every figure of the accuracy check from high.onnx and
# emulation.onnx (accuracy_check.js); the emulated cosine of every output is >= 0.999.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
"$PY" "$SOURCE_DIR/tests/tools/make_dynamo_samples.py" "$work/samples" >"$work/samples.log" 2>&1 ||
  fail "make_dynamo_samples.py: $(tail -n 3 "$work/samples.log")"
pairs=()
for model in shufflenet encoder decoder lstm convnext; do
  for type in fast fast1; do
    out="$work/$model-$type"
    if ! "$NPUCC" compile "$TESTDATA/models/dynamo/$model.onnx" -o "$out" --accelerate-train-mode "$type|step|0.9" \
      --sample-inputs "$work/samples/$model" --emit-emulation --no-cache >"$out.stdout" 2>"$out.stderr"; then
      fail "$model $type: compile failed: $(cat "$out.stderr")"
      continue
    fi
    json "$out/manifest.json" "len(a['outputs']) == 1 and all(o['cosine'] is not None and o['cosine'] >= 0.999 for o in a['outputs']) and a['samples'] == 4 and len(a['sets']) == 4" ||
      fail "$model $type: accuracy on realistic inputs: $(grep -A12 '"accuracy"' "$out/manifest.json")"
    "$PY" -c "import json,sys; a=json.load(open(sys.argv[1]))['accuracy']['outputs'][0]; print(sys.argv[2], 'cosine %.7f max abs error %.3g' % (a['cosine'], a['max_abs_error']))" \
      "$out/manifest.json" "$model $type:"
    node "$oracle/accuracy_check.js" "$out" "$work/samples/$model" >"$out.oracle" 2>&1 ||
      fail "$model $type: the oracle disagrees with the accuracy figures: $(tail -n 5 "$out.oracle")"
    pairs+=("$TESTDATA/models/dynamo/$model.onnx" "$out/high.onnx")
  done
done
# high.onnx is the original, optimised: ONNX Runtime gives the same outputs (token inputs in
# the vocabulary's range).
if ! node "$oracle/compare.js" --strict --max-rel 1e-5 --abs-floor 1e-6 --scale-floor 1e-3 \
  --range tokens=0,499 --range src=0,499 --range tgt=0,499 "${pairs[@]}" >"$work/ort.txt" 2>&1; then
  fail "high.onnx differs from the original in ONNX Runtime: $(grep -E '^(FAIL|oracle)' "$work/ort.txt" | head -5)"
fi
grep -E '^(PASS|FAIL|SKIP)' "$work/ort.txt"
no_graph_files_left "the dynamo exports suite"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "dynamo exports: ok"
