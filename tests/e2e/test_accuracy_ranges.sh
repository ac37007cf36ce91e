#!/usr/bin/env bash
# The activation-range rule (issue 43 item 3): with --sample-inputs and a target the low
# graph misses, the high graph's values on the samples keep float32, before any repair
# search, every low node whose values float16 cannot hold (largest magnitude > 65504, or more
# than half of its non-zero values below 6.1e-5).
# The overflow model (tests/tools/make_accuracy_models.py): fc2, relu2 and fc3 reach ~1e5 on
# its samples. The rule keeps the three (reason activation_range, with the numbers), the low
# graph then meets the target, and no search runs: 10 runtime runs (the first check's 2x3,
# 1 of the high graph, 3 of the ruled emulation) where the search took 27. The underflow
# model's values (~1e-9) are all below float16's smallest normal: the rule keeps every low
# node. In bfloat16 (fast1) the limits are bfloat16's: the overflow model is left to the
# search, a model of values near 1e-39 is kept. A Loop body's overflowing MatMul is kept
# too. Without samples, or without a target, nothing changes.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"
with_accuracy_models
fast=(--accelerate-train-mode 'fast|step|0.9')
target=(--accuracy-target 'cosine>=0.999' --accuracy-target 'nonfinite<=0')

out="$work/of"
if "$NPUCC" compile "$m/overflow.onnx" -o "$out" "${fast[@]}" --sample-inputs "$m/samples" \
  "${target[@]}" --emit-emulation --accuracy-report nodes >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "sorted(a['activation_ranges']['kept']) == ['fc2', 'fc3', 'relu2']" ||
    fail "overflow: the rule kept $(grep -A5 activation_ranges "$out/manifest.json")"
  json "$out/manifest.json" "a['activation_ranges']['kept']['fc2'].startswith('max 1.0') and a['activation_ranges']['kept']['fc2'].endswith(' > 65504')" ||
    fail "overflow: fc2's numbers: $(grep -A5 activation_ranges "$out/manifest.json")"
  # Zero search runs: no repair at all, and the runs are the check's and the rule's.
  json "$out/manifest.json" "'repair' not in a and a['kept_float32'] == [] and a['activation_ranges']['runs'] == 1 and a['runs'] == 10" ||
    fail "overflow: a search ran, or the runs are not 6 + 1 + 3: $(cat "$out/manifest.json")"
  json "$out/manifest.json" "a['outputs'][0]['nonfinite'] == 0 and a['outputs'][0]['cosine'] >= 0.999" ||
    fail "overflow: the ruled graph misses the target: $(cat "$out/manifest.json")"
  json "$out/manifest.json" "m['precision_report']['kept_float32_reasons'].get('activation_range') == 3 and [n['range'] for n in m['precision_report']['node_precisions'] if n['name'] == 'fc2'][0].endswith('> 65504')" ||
    fail "overflow: the precision report lacks reason activation_range and its numbers"
  grep -q "the activation-range rule kept 3 node(s) float32 (1 run(s) of the high graph): fc2 (max 1.0[0-9]e+05 > 65504)" "$out.stdout" ||
    fail "overflow: the summary does not name the rule: $(cat "$out.stdout")"
  grep -q "met after the rule, no search" "$out.stdout" || fail "overflow: summary: $(cat "$out.stdout")"
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-manifest "$out/manifest.json" ||
    fail "overflow: the manifest does not match its schema"
  "$PY" "$SOURCE_DIR/tests/tools/validate_json.py" npucc-drift "$out/drift.json" ||
    fail "overflow: drift.json does not match its schema"
  "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); k={v['node']: v['kept_reason'] for v in d['values']}; sys.exit(0 if k.get('fc2') == 'activation_range' else 1)" \
    "$out/drift.json" || fail "overflow: the drift report's kept_reason for fc2 is not activation_range"
  "$NPUCC" inspect "$out/low.onnx" --nodes >"$out.nodes" 2>&1 || fail "inspect --nodes: $(cat "$out.nodes")"
  grep -E -q "fc2 .*float32 +activation_range \(max 1.0[0-9]e\+05 > 65504\)" "$out.nodes" ||
    fail "inspect --nodes does not show the rule: $(cat "$out.nodes")"
  # As ONNX's own reader sees low.onnx: the three float32, fc1+relu1 float16.
  "$PY" "$SOURCE_DIR/tests/tools/onnx_node_types.py" "$out/low.onnx" --expect float=fc2,relu2,fc3 \
    --expect float16=fc1,relu1 >"$out.types" 2>&1 || fail "overflow: low.onnx's types: $(cat "$out.types")"
  # The oracle (Node's ONNX Runtime) runs the emitted emulation: no overflow left, and the
  # figures agree with npucc's.
  node "$ORACLE" "$out" "$m/samples" --min-cosine 0.999 >"$out.oracle" 2>&1 ||
    fail "overflow: the oracle disagrees: $(cat "$out.oracle")"
  grep -q "non-finite 0$" "$out.oracle" || fail "overflow: the oracle sees non-finite values: $(cat "$out.oracle")"
else
  fail "overflow: compile failed: $(cat "$out.stderr")"
fi
no_graph_files_left "overflow"

# Underflow: every value ~1e-9, below float16's smallest normal.
out="$work/uf"
if "$NPUCC" compile "$m/underflow.onnx" -o "$out" "${fast[@]}" --sample-inputs "$m/underflow_samples" \
  --accuracy-target 'cosine>=0.99' --no-cache >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "sorted(a['activation_ranges']['kept']) == ['fc1', 'fc2', 'relu1'] and '100% of non-zero values below 6.10352e-05' in a['activation_ranges']['kept']['fc1'] and 'repair' not in a" ||
    fail "underflow: $(cat "$out/manifest.json")"
else
  fail "underflow: compile failed: $(cat "$out.stderr")"
fi

# bfloat16 (fast1): float32's range (largest ~3.39e38, smallest normal ~1.18e-38) with 8 bits
# of mantissa. The overflow model's ~1e5 fits: the rule, run because the strict target is
# missed (bfloat16 rounding alone misses it), keeps nothing, and the search decides instead.
# bf16_underflow.onnx's values (~1e-39) lie below bfloat16's smallest normal: kept.
bf16=(--accelerate-train-mode 'fast1|step|0.9' --accuracy-target 'cosine>=0.9999999' --no-cache)
out="$work/bf16-of"
if "$NPUCC" compile "$m/overflow.onnx" -o "$out" "${bf16[@]}" --sample-inputs "$m/samples" \
  >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "a['activation_ranges']['low_type'] == 'bfloat16' and a['activation_ranges']['largest'] > 3.3e38 and a['activation_ranges']['smallest_normal'] < 1.2e-38 and a['activation_ranges']['runs'] == 1" ||
    fail "bfloat16 overflow: the rule did not run with bfloat16's limits: $(grep -A8 activation_ranges "$out/manifest.json")"
  json "$out/manifest.json" "a['activation_ranges']['kept'] == {} and m['precision_report']['kept_float32_reasons'].get('activation_range') is None" ||
    fail "bfloat16 overflow: the rule kept values bfloat16 holds: $(grep -A8 activation_ranges "$out/manifest.json")"
else
  fail "bfloat16 overflow: compile failed: $(cat "$out.stderr")"
fi
out="$work/bf16-uf"
if "$NPUCC" compile "$m/bf16_underflow.onnx" -o "$out" "${bf16[@]}" \
  --sample-inputs "$m/bf16_underflow_samples" >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "'fc1' in a['activation_ranges']['kept'] and '100% of non-zero values below 1.17549e-38' in a['activation_ranges']['kept']['fc1'] and m['precision_report']['kept_float32_reasons'].get('activation_range', 0) >= 1 and 'repair' not in a" ||
    fail "bfloat16 underflow: fc1 not kept by the rule: $(cat "$out/manifest.json")"
  grep -q "the activation-range rule kept [0-9]* node(s) float32 .*fc1 (100% of non-zero values below 1.17549e-38" "$out.stdout" ||
    fail "bfloat16 underflow: the summary does not name the rule: $(cat "$out.stdout")"
else
  fail "bfloat16 underflow: compile failed: $(cat "$out.stderr")"
fi

# Inside a Loop body (tests/tools/make_body_models.py: loop_overflow.onnx): the body's MatMul
# reaches ~1e6 on the samples in every iteration; the rule reads the body's values (each
# iteration's, stacked) and keeps it, and the node reading it, before any search.
"$PY" "$SOURCE_DIR/tests/tools/make_body_models.py" "$m/bodies" >/dev/null 2>&1 || fail "make_body_models.py"
out="$work/loop-of"
if "$NPUCC" compile "$m/bodies/loop_overflow.onnx" -o "$out" "${fast[@]}" --no-cache \
  --sample-inputs "$m/bodies/loop_overflow_samples" --accuracy-target 'max_abs_error<=0.01' \
  --accuracy-target 'nonfinite<=0' >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "sorted(a['activation_ranges']['kept']) == ['big_matmul', 'big_rescale'] and a['activation_ranges']['kept']['big_matmul'].endswith(' > 65504') and 'repair' not in a and a['outputs'][0]['nonfinite'] == 0" ||
    fail "loop body overflow: the rule did not keep the body's MatMul: $(cat "$out/manifest.json")"
  # As ONNX's reader sees low.onnx: the body MatMul's output is float32 (it was float16).
  "$PY" -c "import onnx,sys; g=[a.g for n in onnx.load(sys.argv[1]).graph.node if n.op_type == 'Loop' for a in n.attribute][0]; t={v.name: v.type.tensor_type.elem_type for v in g.value_info}; sys.exit(0 if t.get('big_t') == 1 else 'big_t is of type %s' % t.get('big_t'))" \
    "$out/low.onnx" >"$out.types" 2>&1 || fail "loop body overflow: low.onnx's body MatMul is not float32: $(cat "$out.types")"
else
  fail "loop body overflow: compile failed: $(cat "$out.stderr")"
fi

# NPUCC_BENCH_NO_RANGE_RULE (the bench's baseline): no rule, the search alone, and no cache
# entry (the key does not see the variable).
out="$work/bench-off"
if NPUCC_BENCH_NO_RANGE_RULE=1 "$NPUCC" compile "$m/overflow.onnx" -o "$out" "${fast[@]}" \
  --sample-inputs "$m/samples" "${target[@]}" >"$out.stdout" 2>"$out.stderr"; then
  json "$out/manifest.json" "'activation_ranges' not in a and a['repair']['runs'] > 0 and sorted(a['kept_float32']) == ['fc2', 'fc3', 'relu2']" ||
    fail "bench switch: the rule ran, or no search: $(cat "$out/manifest.json")"
  grep -q "cache: bypass: NPUCC_BENCH_NO_RANGE_RULE is set" "$out.stdout" ||
    fail "bench switch: the compile was cached: $(cat "$out.stdout")"
else
  fail "bench switch: compile failed: $(cat "$out.stderr")"
fi

# Without samples (random inputs, where nothing overflows) or without a target: no rule.
for case in random check; do
  out="$work/$case"
  args=("${target[@]}")
  [ "$case" = check ] && args=(--check-accuracy --sample-inputs "$m/samples")
  "$NPUCC" compile "$m/overflow.onnx" -o "$out" "${fast[@]}" "${args[@]}" --no-cache \
    >"$out.stdout" 2>"$out.stderr" || fail "$case: $(cat "$out.stderr")"
  json "$out/manifest.json" "'activation_ranges' not in a and m['precision_report']['kept_float32_reasons'].get('activation_range') is None" ||
    fail "$case: the rule ran: $(cat "$out/manifest.json")"
done
json "$work/check/manifest.json" "a['outputs'][0]['nonfinite'] == 30" ||
  fail "check: the check alone changed the graph it measures"

[ "$failures" = 0 ] && echo "activation ranges: all passed"
exit $((failures > 0))
