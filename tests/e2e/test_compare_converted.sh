#!/usr/bin/env bash
# npucc compare on float16 models another tool made (issue 43 item 4): onnxconverter-common's
# convert_float_to_float16, run here in the shared test venv (scripts/install-test-deps; a
# SKIP, exit 77, without it), on a model whose first MatMul reaches 1e5 and whose `tiny`
# output holds values float16 flushes to zero (tests/tools/make_converted_models.py).
#  1. emulated (the default), the overflow shows: non-finite values in y and tiny, and tiny's
#     flushes; the same model run by ONNX Runtime as is (--run plain) gives other figures,
#     and the report says which was run;
#  2. the float16-io conversion (keep_io_types=False) gives the emulated figures of the
#     float32-io one, its inputs said to be rounded to float16;
#  3. the emulated figures equal those of an independent float16 emulation in NumPy
#     (tests/tools/compare_numpy_check.py --loose: random weights, so a float32 sum may
#     round differently in another order; its header gives the tolerances) on the
#     converter's own graph.
set -uo pipefail
source "$(dirname "$0")/skip_common.sh"
VENV_PY="$HOME/.cache/npucc-deps/venv/bin/python3"
"$VENV_PY" -c "import onnxconverter_common" 2>/dev/null ||
  skip_suite "the test venv with onnxconverter-common is missing (run scripts/install-test-deps)"
source "$(dirname "$0")/accuracy_common.sh"
m="$work/m"
"$VENV_PY" "$SOURCE_DIR/tests/tools/make_converted_models.py" "$m" || { echo "FAIL: generator"; exit 1; }
S=(--sample-inputs "$m/samples")
run() { # run NAME ARGS...: compare --json into $work/NAME.json, exit 0
  local name=$1
  shift
  "$NPUCC" compare "$@" --json >"$work/$name.json" 2>"$work/$name.err" ||
    fail "$name: exit $? ($(head -c 400 "$work/$name.err"))"
}
field() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$work/$1.json"; }
figures() { field "$1" "[(o['name'], o['cosine'], o['nonfinite'], o['max_abs_error']) for o in d['accuracy']['outputs']]"; }

run emulated "$m/fp32.onnx" "$m/fp16.onnx" "${S[@]}"
run plain "$m/fp32.onnx" "$m/fp16.onnx" "${S[@]}" --run plain
run emulated_io "$m/fp32.onnx" "$m/fp16_io.onnx" "${S[@]}"
echo "emulated float16:   $(figures emulated)"
echo "ONNX Runtime as-is: $(figures plain)"

# 1. The overflow is seen emulated; the plain run's figures differ; each says what ran.
[ "$(field emulated "d['accuracy']['outputs'][0]['nonfinite'] > 0")" = True ] ||
  fail "emulated: y shows no overflow: $(figures emulated)"
[ "$(figures emulated)" != "$(figures plain)" ] || fail "plain and emulated give the same figures"
[ "$(field emulated "d['candidate_run']") / $(field plain "d['candidate_run']")" = \
  "emulated float16 / ONNX Runtime as-is" ] || fail "what ran: $(field emulated "d['candidate_run']")"
# 2. float16 inputs and outputs: the same figures emulated, the conversion said.
[ "$(figures emulated_io)" = "$(figures emulated)" ] ||
  fail "fp16_io: $(figures emulated_io), fp16: $(figures emulated)"
[ "$(field emulated_io "[c['name'] + ':' + c['kind'] for c in d['conversions']]")" = \
  "['x:input', 'y:output', 'tiny:output']" ] || fail "fp16_io: conversions $(field emulated_io "d['conversions']")"
# 3. NumPy's emulation of the converter's graph gives the same figures.
"$PY" "$SOURCE_DIR/tests/tools/compare_numpy_check.py" --loose "$m/fp32.onnx" "$m/fp16.onnx" "$m/samples" \
  "$work/emulated.json" >/dev/null || fail "the emulated figures differ from NumPy's emulation"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "test_compare_converted: all passed"
