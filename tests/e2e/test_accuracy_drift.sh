#!/usr/bin/env bash
# --accuracy-report nodes (issue 43 item 1): the per-value drift report, drift.json beside
# the manifest, checked against its schema and recomputed by the oracle
# (tests/oracle/drift_check.js: ONNX Runtime's Node binding runs high.onnx and emulation.onnx
# with the report's values added as outputs, and recomputes every figure within 1e-5).
# - underflow.onnx (tests/tools/make_accuracy_models.py): inputs near 1e-9, below float16's
#   smallest subnormal; fc1's float16 input flushes to zero, so the drift begins at fc1
#   (its output all zero in the low graph: cosine 0, every element flushed);
# - mobilenet_v3.onnx (tests/tools/make_drift_models.py) at fast: where the report says the
#   drift begins, the oracle finds it too;
# - overflow.onnx: fc2 overflows float16, the drift begins there;
# - If/Loop/Scan bodies (tests/tools/make_body_models.py, silero_vad_legacy.onnx): body
#   values measured, iterations stacked, the oracle exposing them itself; a body whose values
#   cannot be stacked listed in not_covered with the runtime's error.
# The oracle reads float16 values but not bfloat16 ones (onnxruntime-node has no bfloat16
# tensors), so the suite checks fast (float16) only.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"
with_accuracy_models
"$PY" "$SOURCE_DIR/tests/tools/make_drift_models.py" "$m" >/dev/null 2>&1 ||
  { echo "FAIL: make_drift_models.py"; exit 1; }
fast=(--accelerate-train-mode 'fast|step|0.9')
DRIFT_ORACLE="$SOURCE_DIR/tests/oracle/drift_check.js"
py_has() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if $2 else 1)" "$1"; }

out="$work/under"
if "$NPUCC" compile "$m/underflow.onnx" -o "$out" "${fast[@]}" --emit-emulation \
  --sample-inputs "$m/underflow_samples" --accuracy-report nodes >"$out.stdout" 2>"$out.stderr"; then
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" ||
    fail "underflow: drift.json does not match its schema"
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-manifest "$out/manifest.json" ||
    fail "underflow: the manifest does not match its schema"
  json "$out/manifest.json" "m['drift_report']['file'] == 'drift.json'" || fail "underflow: the manifest does not name drift.json"
  py_has "$out/drift.json" "d['values'][d['first_crossing']]['node'] == 'fc1' and d['values'][d['first_crossing']]['flush_share'] == 1.0 and d['values'][d['first_crossing']]['cosine'] == 0 and d['sample_sets'] == 2 and d['runtime_runs'] == 2" ||
    fail "underflow: the drift does not begin at fc1, all flushed: $(head -c 1500 "$out/drift.json")"
  grep -q "first below cosine 0.9999: #3 MatMul 'fc1' (value 'h0')" "$out.stdout" ||
    fail "underflow: the summary does not name fc1: $(cat "$out.stdout")"
  node "$DRIFT_ORACLE" "$out" "$m/underflow_samples" >"$out.oracle" 2>&1 ||
    fail "underflow: the oracle disagrees: $(cat "$out.oracle")"
  grep -q "first crossing #3 MatMul 'fc1'" "$out.oracle" || fail "underflow: oracle: $(cat "$out.oracle")"
  "$NPUCC" inspect "$out/low.onnx" >"$out.inspect" 2>&1 || fail "inspect: $(cat "$out.inspect")"
  grep -q "first below cosine 0.9999: #3 MatMul 'fc1'" "$out.inspect" ||
    fail "inspect does not show the drift report: $(cat "$out.inspect")"
  "$NPUCC" inspect "$out/emulation.onnx" --json >"$out.inspect.json" 2>&1 || fail "inspect --json failed"
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-inspect "$out.inspect.json" ||
    fail "inspect --json does not match its schema"
  py_has "$out.inspect.json" "d['drift_report'] == json.load(open('$out/drift.json'))" ||
    fail "inspect --json does not hold drift.json"
  # A drift.json changed since the compile is refused in one line, not shown.
  cp -r "$out" "$work/tampered" && echo " " >>"$work/tampered/drift.json"
  if "$NPUCC" inspect "$work/tampered/low.onnx" >"$work/tampered.out" 2>&1; then
    fail "inspect showed a changed drift.json"
  else
    grep -q "drift.json: not the drift report the compile wrote" "$work/tampered.out" ||
      fail "inspect of a changed drift.json: $(cat "$work/tampered.out")"
  fi
  # A cache hit gives the same drift.json back.
  "$NPUCC" compile "$m/underflow.onnx" -o "$work/under2" "${fast[@]}" --emit-emulation \
    --sample-inputs "$m/underflow_samples" --accuracy-report nodes >"$work/under2.stdout" 2>&1 ||
    fail "underflow again: $(cat "$work/under2.stdout")"
  grep -q "cache: hit" "$work/under2.stdout" || fail "underflow again: not a cache hit: $(cat "$work/under2.stdout")"
  cmp -s "$out/drift.json" "$work/under2/drift.json" || fail "underflow again: drift.json differs on the hit"
  no_graph_files_left "underflow"
else
  fail "underflow: exit status $? ($(cat "$out.stderr"))"
fi

out="$work/mobilenet"
if "$NPUCC" compile "$m/mobilenet_v3.onnx" -o "$out" "${fast[@]}" --emit-emulation \
  --sample-inputs "$m/mobilenet_samples" --accuracy-report nodes >"$out.stdout" 2>"$out.stderr"; then
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" ||
    fail "mobilenet: drift.json does not match its schema"
  py_has "$out/drift.json" "d['first_crossing'] is not None and len(d['values']) > 100 and d['runtime_runs'] == 2" ||
    fail "mobilenet: no crossing, or too few values: $(head -c 1500 "$out/drift.json")"
  node "$DRIFT_ORACLE" "$out" "$m/mobilenet_samples" --every 5 >"$out.oracle" 2>&1 ||
    fail "mobilenet: the oracle disagrees: $(head -20 "$out.oracle")"
  first=$("$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); v=d['values'][d['first_crossing']]; print('#%d %s %s' % (v['order'], v['op_type'], v['node']))" "$out/drift.json")
  grep -qF "first crossing ${first%% *} " "$out.oracle" || fail "mobilenet: oracle's first crossing is not $first: $(cat "$out.oracle")"
  grep -qF "first below cosine 0.9999: ${first% *} '${first##* }'" "$out.stdout" ||
    fail "mobilenet: the summary does not name $first: $(cat "$out.stdout")"
else
  fail "mobilenet: exit status $? ($(cat "$out.stderr"))"
fi

# overflow.onnx: fc2's values reach 1e5 on its samples, past float16's 65504: the drift
# begins there, every element overflowed, its cosine undefined with the reason.
out="$work/over"
if "$NPUCC" compile "$m/overflow.onnx" -o "$out" "${fast[@]}" --emit-emulation \
  --sample-inputs "$m/samples" --accuracy-report nodes >"$out.stdout" 2>"$out.stderr"; then
  py_has "$out/drift.json" "d['values'][d['first_crossing']]['node'] == 'fc2' and d['values'][d['first_crossing']]['overflow_share'] == 1.0 and d['values'][d['first_crossing']]['cosine'] is None and 'non-finite' in d['values'][d['first_crossing']]['cosine_undefined'] and d['values'][d['first_crossing']]['high_max_abs'] > 65504" ||
    fail "overflow: the drift does not begin at fc2, overflowed: $(head -c 1500 "$out/drift.json")"
  node "$DRIFT_ORACLE" "$out" "$m/samples" >"$out.oracle" 2>&1 || fail "overflow: the oracle disagrees: $(cat "$out.oracle")"
  grep -q "first crossing #6 MatMul 'fc2'" "$out.oracle" || fail "overflow: oracle: $(cat "$out.oracle")"
else
  fail "overflow: exit status $? ($(cat "$out.stderr"))"
fi

# If/Loop/Scan bodies (tests/tools/make_body_models.py): the drift begins at a MatMul inside
# a body whose values fall in float16's subnormals. The report covers the body's values (each
# iteration's stacked; an If branch's on the sets that ran it), names the body MatMul as the
# first crossing, and the oracle, exposing the body values itself (expose_bodies.py, ONNX's
# Python API), recomputes every figure; `npucc compare` of the original and low.onnx gives the
# body values the same figures. silero_vad_legacy.onnx (testdata/models): a real
# model whose every node but two lies in If branches, nested Ifs inside.
"$PY" "$SOURCE_DIR/tests/tools/make_body_models.py" "$m/bodies" >/dev/null 2>&1 ||
  { echo "FAIL: make_body_models.py"; exit 1; }
body_case() { # NAME MODEL SAMPLES FIRST_NODE GRAPH PYTHON_CHECK
  local name=$1 model=$2 samples=$3 first=$4 graph=$5 check=$6 out="$work/$1"
  if ! "$NPUCC" compile "$model" -o "$out" "${fast[@]}" --emit-emulation --sample-inputs "$samples" \
    --accuracy-report nodes --no-cache >"$out.stdout" 2>"$out.stderr"; then
    fail "$name: exit status $? ($(cat "$out.stderr"))"
    return
  fi
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" ||
    fail "$name: drift.json does not match its schema"
  py_has "$out/drift.json" "$check" ||
    fail "$name: body values not covered as expected: $(head -c 2000 "$out/drift.json")"
  if [ -n "$first" ]; then
    py_has "$out/drift.json" "d['values'][d['first_crossing']]['node'] == '$first' and d['values'][d['first_crossing']]['graph'] == '$graph'" ||
      fail "$name: the drift does not begin at $first in $graph: $(head -c 2000 "$out/drift.json")"
    grep -qF "MatMul '$first' (value " "$out.stdout" && grep -qF " in $graph)" "$out.stdout" ||
      fail "$name: the summary does not name $first in $graph: $(cat "$out.stdout")"
  fi
  node "$DRIFT_ORACLE" "$out" "$samples" >"$out.oracle" 2>&1 || fail "$name: the oracle disagrees: $(head -20 "$out.oracle")"
  if [ -n "$first" ] && ! grep -qF " MatMul '$first' cosine" "$out.oracle"; then
    fail "$name: the oracle's first crossing is not $first: $(cat "$out.oracle")"
  fi
  ls "$out" | grep -q oracle && fail "$name: the oracle left files in $out"
  # compare (the original against the low.onnx written) measures the same body values, with
  # the figures the oracle has just confirmed.
  if "$NPUCC" compare "$model" "$out/low.onnx" --sample-inputs "$samples" --accuracy-report nodes \
    --json >"$out.compare.json" 2>"$out.compare.err"; then
    "$PY" - "$out.compare.json" "$out/drift.json" <<'CHECK' || fail "$name: compare's body values differ from the compile's: $(head -c 1500 "$out.compare.json")"
import json, sys
compared = {(v['graph'], v['value']): v for v in json.load(open(sys.argv[1]))['drift']['values']}
report = json.load(open(sys.argv[2]))
bodies = [v for v in report['values'] if v['graph'] != 'main']
for v in bodies:
    c = compared[(v['graph'], v['value'])]
    for key in ('cosine', 'max_abs_error', 'flush_share', 'elements'):
        if (c[key] is None) != (v[key] is None) or (v[key] is not None and abs(c[key] - v[key]) > 1e-9 * max(1, abs(v[key]))):
            sys.exit('%s %s: %s %s, compile %s' % (v['graph'], v['value'], key, c[key], v[key]))
    assert c['body']['sets_compared'] == v['body']['sets_compared']
CHECK
  else
    fail "$name: compare failed: $(cat "$out.compare.err")"
  fi
}
body_values="[v for v in d['values'] if v['graph'] != 'main']"
body_case loop "$m/bodies/loop.onnx" "$m/bodies/loop_samples" loop_matmul main/loop:body \
  "d['not_covered'] == [] and len($body_values) == 4 and all(v['body']['stacked_axes'] == 1 and v['body']['sets_compared'] == 2 and v['elements'] == 48 for v in $body_values)"
body_case scan "$m/bodies/scan.onnx" "$m/bodies/scan_samples" scan_matmul main/scan:body \
  "d['not_covered'] == [] and all(v['body']['stacked_axes'] == 1 and v['elements'] == 80 for v in $body_values)"
# if.onnx: set 0 takes then (with a Loop inside), set 1 else; each branch's values are
# compared on one set and counted empty on the other.
body_case if "$m/bodies/if.onnx" "$m/bodies/if_samples" then_matmul main/choose:then_branch \
  "d['not_covered'] == [] and len($body_values) == 12 and all(v['body']['sets_compared'] == 1 and v['body']['sets_empty'] == 1 for v in $body_values) and any(v['graph'] == 'main/choose:then_branch/inner_loop:body' and v['body']['stacked_axes'] == 1 for v in $body_values)"
# nested.onnx: a Loop in a Loop (the inner one's values stacked on two axes: 2 x 3 x 16), and
# an If inside the outer Loop, whose branches stay in not_covered with the reason.
body_case nested "$m/bodies/nested.onnx" "$m/bodies/nested_samples" inner_matmul main/outer:body/inner:body \
  "all(v['body']['stacked_axes'] == 2 and v['elements'] == 96 for v in $body_values if v['graph'] == 'main/outer:body/inner:body') and sorted(e['graph'] for e in d['not_covered']) == ['main/outer:body/o_choose:else_branch', 'main/outer:body/o_choose:then_branch'] and all(e['reason'].startswith('an If branch inside a Loop or Scan body') for e in d['not_covered'])"
body_case silero "$TESTDATA/models/silero_vad_legacy.onnx" "$m/bodies/silero_samples" "" "" \
  "d['not_covered'] == [] and len($body_values) > 200 and any(v['graph'].count('/If_') == 2 for v in $body_values)"
# The same If (with its Loop) at fast1: bfloat16 body values exposed through both branches
# (the other giving an empty bfloat16 tensor) and stacked (the oracle reads no bfloat16).
out="$work/if-bf16"
if "$NPUCC" compile "$m/bodies/if.onnx" -o "$out" --accelerate-train-mode 'fast1|step|0.9' --emit-emulation \
  --sample-inputs "$m/bodies/if_samples" --accuracy-report nodes --no-cache >"$out.stdout" 2>"$out.stderr"; then
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" || fail "if fast1: schema"
  py_has "$out/drift.json" "d['low_type'] == 'bfloat16' and d['not_covered'] == [] and any(v['graph'] == 'main/choose:then_branch/inner_loop:body' and v['stored'] == 'bfloat16' and v['body']['sets_compared'] == 1 and v['cosine'] is not None for v in d['values'])" ||
    fail "if fast1: $(head -c 1500 "$out/drift.json")"
else
  fail "if fast1: exit status $? ($(cat "$out.stderr"))"
fi

# growing.onnx: a Loop body value whose shape changes between iterations cannot be stacked
# (ONNX Runtime refuses the exposed graph): the main graph's values are measured, and the body
# is listed as not covered with the runtime's error, not dropped silently.
out="$work/growing"
if "$NPUCC" compile "$m/bodies/growing.onnx" -o "$out" "${fast[@]}" --emit-emulation \
  --sample-inputs "$m/bodies/growing_samples" --accuracy-report nodes --no-cache >"$out.stdout" 2>"$out.stderr"; then
  py_has "$out/drift.json" "[v['node'] for v in d['values']] == ['relu_in', 'grow', 'total'] and len(d['not_covered']) == 1 and d['not_covered'][0]['graph'] == 'main/grow:body' and d['not_covered'][0]['values'] == 2 and d['not_covered'][0]['reason'].startswith(\"exposing the body's values failed: \") and 'Inconsistent shape' in d['not_covered'][0]['reason']" ||
    fail "growing: $(cat "$out/drift.json")"
  grep -q "not covered: 1 If/Loop/Scan body graph(s)" "$out.stdout" || fail "growing: summary: $(cat "$out.stdout")"
else
  fail "growing: exit status $? ($(cat "$out.stderr"))"
fi

# No report unless asked for; bad values refused in one line.
out="$work/plain"
"$NPUCC" compile "$m/underflow.onnx" -o "$out" "${fast[@]}" --sample-inputs "$m/underflow_samples" \
  >/dev/null 2>&1 || fail "plain check failed"
[ ! -e "$out/drift.json" ] && ! json "$out/manifest.json" "'drift_report' in m" || fail "plain: a drift report nobody asked for"
expect_error bad-report 2 "--accuracy-report lines: unknown report" "$m/underflow.onnx" "${fast[@]}" --accuracy-report lines
expect_error threshold-alone 2 "--drift-threshold sets where the drift report calls a value out, and no drift report is asked for" "$m/underflow.onnx" "${fast[@]}" --drift-threshold 0.99
expect_error bad-threshold 2 "--drift-threshold 1.5: expected a cosine in (0, 1]" "$m/underflow.onnx" "${fast[@]}" --accuracy-report nodes --drift-threshold 1.5

[ "$failures" = 0 ] && echo "PASS" || { echo "$failures failure(s)"; exit 1; }
