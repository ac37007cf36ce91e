#!/usr/bin/env bash
# npucc compare (issue 43 item 4), checked by an emulation written in NumPy: a float32
# reference and candidates that store its values in float16 (float32 inputs and outputs
# through Casts, and float16 inputs and outputs) and in bfloat16, whose data overflow float16,
# fall into its subnormals and flush to zero (tests/tools/make_compare_models.py). Every
# figure of `compare --json` equals the one tests/tools/compare_numpy_check.py computes by
# rounding each stored value itself (the tolerances are in its header). Then: the report
# says what ran; targets and exit status; an external-data model; bad input, one line each.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"
m="$work/m"
"$PY" "$SOURCE_DIR/tests/tools/make_compare_models.py" "$m" || { echo "FAIL: generator"; exit 1; }
CHECK="$SOURCE_DIR/tests/tools/compare_numpy_check.py"

# compare_json NAME ARGS...: `npucc compare ARGS... --json` into $work/NAME.json, exit 0.
compare_json() {
  local name=$1
  shift
  "$NPUCC" compare "$@" --json >"$work/$name.json" 2>"$work/$name.err" ||
    fail "$name: exit $? ($(head -c 400 "$work/$name.err"))"
}
# field NAME EXPR: a Python expression over the document `d` of $work/NAME.json.
field() {
  "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$work/$1.json"
}

# --- 1. Each candidate's figures against NumPy's emulation.
for cand in f16 f16_io bf16; do
  compare_json "$cand" "$m/ref.onnx" "$m/$cand.onnx" --sample-inputs "$m/samples"
  "$PY" "$CHECK" "$m/ref.onnx" "$m/$cand.onnx" "$m/samples" "$work/$cand.json" >"$work/$cand.numpy" ||
    fail "$cand: the figures differ from NumPy's emulation: $(tail -1 "$work/$cand.numpy")"
done
# The cases are there (else the check above proves little): overflow and flushes in float16,
# an input overflowing bfloat16, and rounding everywhere.
nonfinite() { field "$1" "[o['nonfinite'] > 0 for o in d['accuracy']['outputs']]"; }
[ "$(nonfinite f16)" = "[True, False, True]" ] || fail "f16: non-finite per output: $(nonfinite f16)"
[ "$(field f16 "d['accuracy']['outputs'][0]['elements'] > 0")" = True ] || fail "f16: y_big all overflows"
[ "$(field f16 "d['accuracy']['outputs'][1]['cosine'] < 0.999999")" = True ] ||
  fail "f16: y_small (subnormals, flushes) has cosine $(field f16 "d['accuracy']['outputs'][1]['cosine']")"
grep -qE "set1.npz y_small: .*flushed to zero [1-9]" "$work/f16.numpy" || fail "f16: no flush to zero in y_small"
[ "$(nonfinite bf16)" = "[False, False, True]" ] || fail "bf16: non-finite per output: $(nonfinite bf16)"
[ "$(field f16 "d['candidate_run']") $(field bf16 "d['candidate_run']")" = "emulated float16 emulated bfloat16" ] ||
  fail "what ran: $(field f16 "d['candidate_run']") / $(field bf16 "d['candidate_run']")"
# float16 inputs and outputs (keep_io_types=False): the same figures, and the report says the
# samples were rounded to float16 and the outputs read as float16.
[ "$(field f16_io "[(c['name'], c['kind'], c['candidate_type']) for c in d['conversions']]")" = \
  "[('x', 'input', 'float16'), ('z', 'input', 'float16'), ('y_big', 'output', 'float16'), ('y_small', 'output', 'float16'), ('z_out', 'output', 'float16')]" ] ||
  fail "f16_io: conversions $(field f16_io "d['conversions']")"
[ "$(field f16_io "d['accuracy']['outputs']")" = "$(field f16 "d['accuracy']['outputs']")" ] ||
  fail "f16_io: figures differ from f16's (the same values stored in the same type)"
# h1 to h4: the values a per-node drift report can compare by name.
[ "$(field f16 "d['matched_values']")" = 4 ] || fail "f16: matched values $(field f16 "d['matched_values']")"
echo "ok: figures of float16, float16-io and bfloat16 candidates equal NumPy's emulation"

# --- 2. The text report says what ran; --run plain runs the candidate as is.
"$NPUCC" compare "$m/ref.onnx" "$m/f16_io.onnx" --sample-inputs "$m/samples" >"$work/text" 2>&1 ||
  fail "text: exit $?"
grep -qF "(emulated float16) against $m/ref.onnx (ONNX Runtime as-is), 2 sample set(s)" "$work/text" ||
  fail "text: no heading saying what ran: $(head -3 "$work/text")"
grep -qF "input 'x': the candidate takes float16: the float32 samples are rounded to float16" "$work/text" ||
  fail "text: the input conversion is not said: $(cat "$work/text")"
grep -qF "y_big: cosine undefined" "$work/text" || fail "text: y_big line: $(cat "$work/text")"
compare_json plain "$m/ref.onnx" "$m/f16_io.onnx" --sample-inputs "$m/samples" --run plain
[ "$(field plain "(d['run'], d['candidate_run'], d['accuracy']['compared'])")" = "('plain', 'ONNX Runtime as-is', 'as-is')" ] ||
  fail "plain: $(field plain "d['run'], d['candidate_run']")"
echo "ok: the report says which was run"

# --- 3. Targets: met exits 0; missed prints the report, then one error line, exit 1.
"$NPUCC" compare "$m/ref.onnx" "$m/f16.onnx" --sample-inputs "$m/samples" \
  --accuracy-target 'y_small:max_abs_error<=1e-5' >"$work/met" 2>"$work/met.err" ||
  fail "met target: exit $? ($(cat "$work/met.err"))"
grep -qF "target y_small:max_abs_error<=1e-05: met by the candidate" "$work/met" ||
  fail "met target: $(cat "$work/met")"
status=0
"$NPUCC" compare "$m/ref.onnx" "$m/f16.onnx" --sample-inputs "$m/samples" \
  --accuracy-target 'y_small:cosine>=0.999999' --json >"$work/missed.json" 2>"$work/missed.err" || status=$?
[ "$status" = 1 ] || fail "missed target: exit $status"
[ "$(wc -l <"$work/missed.err")" = 1 ] && grep -qF "misses --accuracy-target y_small:cosine>=0.999999" "$work/missed.err" ||
  fail "missed target: $(cat "$work/missed.err")"
[ "$(field missed "d['accuracy']['meets_target']")" = False ] || fail "missed target: meets_target"
echo "ok: targets"

# --- 4. A reference with its weights in external data gives the same figures.
"$PY" - "$m/ref.onnx" "$work/ext/ref.onnx" <<'PYEOF'
import os, sys, onnx
os.makedirs(os.path.dirname(sys.argv[2]))
onnx.save_model(onnx.load(sys.argv[1]), sys.argv[2], save_as_external_data=True,
                location="ref.data", size_threshold=0)
PYEOF
compare_json ext "$work/ext/ref.onnx" "$m/f16.onnx" --sample-inputs "$m/samples"
[ "$(field ext "d['accuracy']['outputs']")" = "$(field f16 "d['accuracy']['outputs']")" ] ||
  fail "external data: figures differ"
echo "ok: external data"

# --- 5. Bad input: one line naming what is wrong, non-zero exit, no crash.
"$PY" - "$m" "$work" <<'PYEOF'
import sys, onnx
m, work = sys.argv[1:3]
cand = onnx.load(f"{m}/f16.onnx")
del cand.graph.output[2]                       # no z_out
onnx.save(cand, f"{work}/no_output.onnx")
cand = onnx.load(f"{m}/f16.onnx")
cand.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2   # x of [2,8]
for out in cand.graph.output[:2]:
    out.type.tensor_type.shape.dim[0].dim_value = 2
onnx.save(cand, f"{work}/other_shape.onnx")
data = open(f"{m}/f16.onnx", "rb").read()
open(f"{work}/truncated.onnx", "wb").write(data[: len(data) // 2])
PYEOF
echo "not a model" >"$work/text.onnx"
# bad NAME TEXT ARGS...: `npucc compare ARGS...` exits non-zero with one line holding TEXT.
bad() {
  local name=$1 text=$2 status=0
  shift 2
  "$NPUCC" compare "$@" >"$work/bad-$name.out" 2>"$work/bad-$name.err" || status=$?
  if [ "$status" = 0 ] || [ "$status" -ge 128 ]; then
    fail "$name: exit status $status"
  elif [ "$(wc -l <"$work/bad-$name.err")" != 1 ] || ! grep -qF -- "$text" "$work/bad-$name.err"; then
    fail "$name: wanted one line with '$text': $(cat "$work/bad-$name.err")"
  fi
}
S=(--sample-inputs "$m/samples")
bad missing-file "$work/nothing.onnx: no such file" "$m/ref.onnx" "$work/nothing.onnx" "${S[@]}"
bad folder "the reference $m: not a regular file" "$m" "$m/f16.onnx" "${S[@]}"
bad truncated "the candidate $work/truncated.onnx" "$m/ref.onnx" "$work/truncated.onnx" "${S[@]}"
bad not-a-model "the candidate $work/text.onnx" "$m/ref.onnx" "$work/text.onnx" "${S[@]}"
bad no-output "the candidate has no output 'z_out'" "$m/ref.onnx" "$work/no_output.onnx" "${S[@]}"
bad other-shape "input 'x': the reference's is float32[4,8], the candidate's float32[2,8]" \
  "$m/ref.onnx" "$work/other_shape.onnx" "${S[@]}"
bad low-reference "input 'x': the reference takes float16" "$m/f16_io.onnx" "$m/f16_io.onnx" \
  --sample-inputs "$m/samples"
bad run-word "--run" "$m/ref.onnx" "$m/f16.onnx" --run fast "${S[@]}"
bad bad-target "--accuracy-target" "$m/ref.onnx" "$m/f16.onnx" --accuracy-target 'cosine>>1' "${S[@]}"
bad bf16-plain "the candidate" "$m/ref.onnx" "$m/bf16.onnx" --run plain "${S[@]}"
# The same name, another shape (a float16 candidate reshaping its inner value otherwise).
"$PY" - "$work" <<'PYEOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper
def model(inner, low):
    src = "x_low" if low else "x"
    nodes = [helper.make_node("Cast", ["x"], ["x_low"], to=T.FLOAT16)] if low else []
    nodes += [helper.make_node("Reshape", [src, "s1"], ["t"]), helper.make_node("Relu", ["t"], ["u"]),
              helper.make_node("Reshape", ["u", "s2"], ["y_low" if low else "y"])]
    nodes += [helper.make_node("Cast", ["y_low"], ["y"], to=T.FLOAT)] if low else []
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", T.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [4, 8])],
                              [numpy_helper.from_array(np.array(inner, np.int64), "s1"),
                               numpy_helper.from_array(np.array([4, 8], np.int64), "s2")])
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    made.ir_version = 8
    return made
onnx.save(model([32], False), sys.argv[1] + "/shape_ref.onnx")
onnx.save(model([2, 16], True), sys.argv[1] + "/shape_cand.onnx")
PYEOF
bad drift-shape "value 't' is float32[32] in the reference and float32[2,16] in the candidate's emulation" \
  "$work/shape_ref.onnx" "$work/shape_cand.onnx" --accuracy-report nodes
no_graph_files_left "bad input"
echo "ok: bad input"

# --- Per-node drift (--accuracy-report nodes): f16 stores h1..h4 under the reference's names
# and y_big, y_small, z_out as *_low values widened by a Cast to the reference's output names.
# matmul2 is the node that overflows float16 (y_big past 65504): the first crossing. Every
# value's figures equal NumPy's (compare_numpy_check.py --drift), first crossing included.
compare_json drift "$m/ref.onnx" "$m/f16.onnx" "${S[@]}" --accuracy-report nodes \
  --drift-json "$work/drift_file.json" --accuracy-plot "$work/drift.svg"
"$PY" "$CHECK" --drift "$m/ref.onnx" "$m/f16.onnx" "$m/samples" "$work/drift.json" >"$work/drift.numpy" ||
  fail "drift: the figures differ from NumPy's emulation: $(tail -1 "$work/drift.numpy")"
first=$(field drift "d['drift']['values'][d['drift']['first_crossing']]['node']")
[ "$first" = matmul2 ] || fail "drift: the first crossing is $first, not matmul2"
[ "$(field drift "[v['value'] for v in d['drift']['values']]")" = \
  "['h1', 'h2', 'h3', 'y_big', 'h4', 'y_small', 'z_out']" ] ||
  fail "drift: values $(field drift "[v['value'] for v in d['drift']['values']]")"
[ "$(field drift "d['drift']['unmatched_values']")" = 2 ] ||
  fail "drift: unmatched $(field drift "d['drift']['unmatched_values']") (x_low, z_low expected)"
flush=$(field drift "[v['flush_share'] > 0 for v in d['drift']['values'] if v['value'] == 'y_small'][0]")
[ "$flush" = True ] || fail "drift: y_small (scale2) flushes nothing"
cmp -s <("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["drift"], sort_keys=True))' "$work/drift.json") \
  <("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$work/drift_file.json") ||
  fail "drift: --drift-json differs from the report's \"drift\""
grep -q "<svg" "$work/drift.svg" || fail "drift: no picture"
"$NPUCC" compare "$m/ref.onnx" "$m/f16.onnx" "${S[@]}" --accuracy-report nodes >"$work/drift.txt" 2>&1 ||
  fail "drift text: exit $?"
grep -q "first below cosine 0.9999: #[0-9]* MatMul 'matmul2' (value 'y_big')" "$work/drift.txt" ||
  fail "drift text: no first crossing line in $(cat "$work/drift.txt")"
grep -q "^  2 values of the candidate have no same-named value in the reference: not measured" \
  "$work/drift.txt" || fail "drift text: no unmatched line"
# bfloat16: no overflow of matmul2 there; its figures still equal NumPy's.
compare_json drift_bf16 "$m/ref.onnx" "$m/bf16.onnx" "${S[@]}" --accuracy-report nodes
"$PY" "$CHECK" --drift "$m/ref.onnx" "$m/bf16.onnx" "$m/samples" "$work/drift_bf16.json" \
  >"$work/drift_bf16.numpy" || fail "drift bf16: $(tail -1 "$work/drift_bf16.numpy")"
# A file that is not a drift report is not replaced; a threshold without a report is refused.
echo "notes" >"$work/notes.json"
"$NPUCC" compare "$m/ref.onnx" "$m/f16.onnx" "${S[@]}" --drift-json "$work/notes.json" \
  >/dev/null 2>"$work/err.txt" && fail "drift: replaced a non-report file"
grep -q "notes.json: exists and is not a drift report; not replaced" "$work/err.txt" ||
  fail "drift: $(cat "$work/err.txt")"
[ "$(cat "$work/notes.json")" = notes ] || fail "drift: notes.json changed"
"$NPUCC" compare "$m/ref.onnx" "$m/f16.onnx" "${S[@]}" --drift-threshold 0.99 >/dev/null 2>"$work/err.txt"
[ $? = 2 ] || fail "drift: --drift-threshold alone not exit 2"
echo "ok: per-node drift"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "test_compare: all passed"
