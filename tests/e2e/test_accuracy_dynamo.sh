#!/usr/bin/env bash
# Issue 43 on the torch exports (testdata/models/dynamo: PyTorch's dynamo exporter, opset 20;
# ShuffleNet, a transformer encoder and decoder block, an LSTM) with realistic samples
# (tests/tools/make_dynamo_samples.py, 2 sets each), at fast:
# - the drift report (--accuracy-report nodes): drift.json matches its schema, and the oracle
#   (tests/oracle/drift_check.js: ONNX Runtime's Node binding on high.onnx and emulation.onnx
#   with the values exposed) recomputes every value's figures;
# - the plot (--accuracy-plot): written and, when rsvg-convert is here, rendered;
# - the activation-range rule: a target float16 misses makes it run, once, with float16's
#   limits; on ShuffleNet (max_abs_error<=1.2e-8; its logits are near 1e-5) it keeps the
#   Convs whose values mostly lie below float16's smallest normal, and the target is met with
#   no search;
# - compare: the original export against the low.onnx npucc wrote, with its drift report.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"
"$PY" "$SOURCE_DIR/tests/tools/make_dynamo_samples.py" "$work/samples" --sets 2 >"$work/samples.log" 2>&1 ||
  { echo "FAIL: make_dynamo_samples.py: $(tail -n 3 "$work/samples.log")"; exit 1; }
DRIFT_ORACLE="$SOURCE_DIR/tests/oracle/drift_check.js"
declare -A targets=([shufflenet]='max_abs_error<=1.2e-8' [encoder]='cosine>=0.9999999'
  [decoder]='cosine>=0.9999999' [lstm]='cosine>=0.99999999')
for model in shufflenet encoder decoder lstm; do
  out="$work/$model" samples="$work/samples/$model" original="$TESTDATA/models/dynamo/$model.onnx"
  if ! "$NPUCC" compile "$original" -o "$out" --accelerate-train-mode 'fast|step|0.9' --emit-emulation \
    --sample-inputs "$samples" --accuracy-target "${targets[$model]}" --accuracy-report nodes \
    --accuracy-plot "$out.svg" --no-cache >"$out.stdout" 2>"$out.stderr"; then
    fail "$model: compile failed: $(cat "$out.stderr")"
    continue
  fi
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" ||
    fail "$model: drift.json does not match its schema"
  node "$DRIFT_ORACLE" "$out" "$samples" >"$out.oracle" 2>&1 ||
    fail "$model: the drift oracle disagrees: $(head -5 "$out.oracle")"
  json "$out/manifest.json" "a['activation_ranges']['runs'] == 1 and a['activation_ranges']['low_type'] == 'float16' and a['activation_ranges']['values'] > 0" ||
    fail "$model: the activation-range rule did not run: $(grep -A6 activation_ranges "$out/manifest.json")"
  [ -s "$out.svg" ] || fail "$model: no plot"
  if command -v rsvg-convert >/dev/null; then
    rsvg-convert -o "$out.png" "$out.svg" 2>"$out.rsvg" && [ -s "$out.png" ] ||
      fail "$model: the plot does not render: $(cat "$out.rsvg")"
  fi
  if ! "$NPUCC" compare "$original" "$out/low.onnx" --sample-inputs "$samples" --accuracy-report nodes \
    --json >"$out.compare.json" 2>"$out.compare.err"; then
    fail "$model: compare failed: $(cat "$out.compare.err")"
  else
    "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if len(d['drift']['values']) > 0 else 1)" \
      "$out.compare.json" || fail "$model: compare measured no value: $(head -c 800 "$out.compare.json")"
  fi
done
json "$work/shufflenet/manifest.json" "len(a['activation_ranges']['kept']) > 10 and all(' below 6.10352e-05 ' in why for why in a['activation_ranges']['kept'].values()) and 'repair' not in a" ||
  fail "shufflenet: the rule did not keep the Convs below float16's normals: $(grep -A4 activation_ranges "$work/shufflenet/manifest.json")"
no_graph_files_left "the dynamo drift suite"

[ "$failures" = 0 ] && echo "dynamo exports: report, plot, rule and compare: all passed"
exit $((failures > 0))
