#!/usr/bin/env bash
# Precision options of `npucc compile`: single-variant modes, user lists, pinned nodes,
# I/O types, weight storage, and the errors (exit 2, one line naming the culprit, no
# output folder left behind).
set -euo pipefail
: "${NPUCC:?}" "${TESTDATA:?}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
model="$TESTDATA/models/oww_hello_deepa.onnx"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# expect_error NAME TEXT ARGS...: exit status 2, TEXT in the message, no output folder.
expect_error() {
  local name=$1 text=$2
  shift 2
  local out="$work/err-$name"
  local status=0
  "$NPUCC" compile "$model" -o "$out" "$@" >"$out.stdout" 2>"$out.stderr" || status=$?
  if [ "$status" != 2 ]; then
    fail "$name: exit status $status, expected 2 ($(cat "$out.stderr"))"
  elif ! grep -qF -- "$text" "$out.stderr"; then
    fail "$name: message lacks '$text': $(cat "$out.stderr")"
  elif [ -e "$out" ]; then
    fail "$name: output folder left behind"
  fi
}

# json FILE EXPR: evaluates a Python expression over the manifest `m`.
json() {
  /usr/bin/python3 -c "import json,sys; m=json.load(open(sys.argv[1])); assert $2, $2" "$1" \
    2>/dev/null
}

check_onnx() {
  /usr/bin/python3 -c "
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)" "$1"
}

# Single-variant modes: one graph with the mode's meaning.
for row in "force_fp16::float16" "allow_fp32_to_fp16::matrix_float16" \
  "allow_mix_precision_bf16::mixed_bfloat16" "must_keep_origin_dtype::float32" \
  ":fp16:float16" ":mixed_bfloat16:mixed_bfloat16" ":origin:float32"; do
  IFS=: read -r v1 v2 precision <<<"$row"
  out="$work/mode-$v1$v2"
  args=()
  [ -n "$v1" ] && args+=(--precision-mode "$v1")
  [ -n "$v2" ] && args+=(--precision-mode-v2 "$v2")
  "$NPUCC" compile "$model" -o "$out" "${args[@]}" >/dev/null || fail "mode $v1$v2: compile failed"
  role=low
  [ "$precision" = float32 ] && role=high
  json "$out/manifest.json" "[(g['role'], g['precision']) for g in m['graphs']] == [('$role', '$precision')]" ||
    fail "mode $v1$v2: graphs $(cat "$out/manifest.json" | head -c 0)"
  check_onnx "$out/$role.onnx" || fail "mode $v1$v2: invalid graph"
done
json "$work/mode-allow_fp32_to_fp16/manifest.json" \
  "m['precision_report']['nodes']['Relu'] == {'float32': 2}" || fail "allow_fp32_to_fp16 lowered a vector op"

# --modify-mixlist: the lists change the output, their content is in the cache key.
printf '{"black-list": {"to-add": ["Gemm"]}}' >"$work/deny_gemm.json"
out="$work/mixlist"
"$NPUCC" compile "$model" -o "$out" --accelerate-train-mode 'fast|step' \
  --modify-mixlist "$work/deny_gemm.json" >/dev/null || fail "mixlist: compile failed"
json "$out/manifest.json" "m['precision_report']['nodes']['Gemm'] == {'float32': 3}" ||
  fail "mixlist: Gemm not kept float32"
json "$out/manifest.json" "'Gemm' in m['options']['precision']['modify_mixlist']" ||
  fail "mixlist: content not in the options"
printf '{"white-list": {"to-add": ["Gemmm"]}}' >"$work/typo.json"
expect_error mixlist-unknown 'unknown ONNX op "Gemmm"' --accelerate-train-mode 'fast|step' \
  --modify-mixlist "$work/typo.json"
printf '{"white-list": {"to-add": ["Exp"]}, "gray-list": {"to-add": ["Exp"]}}' >"$work/twice.json"
expect_error mixlist-twice '"Exp" is added to both' --accelerate-train-mode 'fast|step' \
  --modify-mixlist "$work/twice.json"
expect_error mixlist-missing "--modify-mixlist $work/none.json" --accelerate-train-mode 'fast|step' \
  --modify-mixlist "$work/none.json"
expect_error mixlist-not-mixed "--modify-mixlist has no effect" --precision-mode force_fp16 \
  --modify-mixlist "$work/deny_gemm.json"

# --keep-dtype: named nodes keep float32; an unknown name is an error with a suggestion.
printf '# keep the classifier head\n/last_layer/Gemm\n' >"$work/keep.txt"
out="$work/keep"
"$NPUCC" compile "$model" -o "$out" --accelerate-train-mode 'fast|step' \
  --keep-dtype "$work/keep.txt" >/dev/null || fail "keep-dtype: compile failed"
json "$out/manifest.json" "m['precision_report']['nodes']['Gemm'] == {'float16': 2, 'float32': 1}" ||
  fail "keep-dtype: head not kept"
printf '/last_layer/Gem\n' >"$work/keep_typo.txt"
expect_error keep-unknown 'did you mean "/last_layer/Gemm"' --accelerate-train-mode 'fast|step' \
  --keep-dtype "$work/keep_typo.txt"
expect_error keep-no-effect "--keep-dtype has no effect" --keep-dtype "$work/keep.txt"

# I/O types and weight storage.
out="$work/io"
"$NPUCC" compile "$model" -o "$out" --accelerate-train-mode 'fast|step' --no-keep-io-types \
  --low-precision-weights >/dev/null || fail "no-keep-io-types: compile failed"
/usr/bin/python3 - "$out/low.onnx" "$out/high.onnx" <<'EOF' || fail "no-keep-io-types: input types"
import onnx, sys
low, high = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
assert low.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT16
assert high.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
EOF
json "$out/manifest.json" "m['precision_report']['constants']['weight_bytes_saved'] > 100000 and m['precision_report']['constants']['master_weight_bytes'] == 0" ||
  fail "low-precision-weights: no bytes saved"
json "$work/keep/manifest.json" "m['precision_report']['constants']['master_weight_bytes'] > 200000" ||
  fail "master weights not reported"

# Incompatible and meaningless combinations.
expect_error accelerate-force 'cannot be combined with precision_mode "force_fp16"' \
  --accelerate-train-mode 'fast|step' --precision-mode force_fp16
expect_error both-modes "" --precision-mode force_fp16 --precision-mode-v2 fp16
expect_error bad-mode "" --precision-mode fp8
expect_error emulation-alone "--emit-emulation has no effect" --emit-emulation

# Non-results are warnings (issue 31): a mixlist that leaves nothing to lower, and a model
# already in float16, whose graphs are labelled with the types they hold.
det="$TESTDATA/models/ppocrv4_det.onnx"
printf '{"white-list": {"to-remove": ["Conv", "ConvTranspose", "MatMul", "Gemm"]}}\n' >"$work/no_white.json"
"$NPUCC" compile "$det" -o "$work/nothing-low" --no-cache --accelerate-train-mode 'fast|step|0.9' \
  --modify-mixlist "$work/no_white.json" >"$work/nothing-low.txt" || fail "nothing-low: compile failed"
grep -q "warning: no node runs in float16: the low graph computes what the high graph does" "$work/nothing-low.txt" ||
  fail "nothing-low: no warning: $(cat "$work/nothing-low.txt")"
json "$work/nothing-low/manifest.json" "any('no node runs in float16' in w for w in m['precision_report']['warnings'])" ||
  fail "nothing-low: the manifest's report lacks the warning"
"$NPUCC" compile "$det" -o "$work/some-low" --no-cache --accelerate-train-mode 'fast|step|0.9' >"$work/some-low.txt" ||
  fail "some-low: compile failed"
grep -q "warning: no node runs" "$work/some-low.txt" && fail "some-low: a warning although Convs run low"
/usr/bin/python3 - "$work/fp16.onnx" <<'EOF_PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
H = TensorProto.FLOAT16
w = numpy_helper.from_array(np.full((4, 4), 0.5, dtype=np.float16), "w")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
     helper.make_node("Relu", ["m"], ["y"], name="relu")],
    "fp16", [helper.make_tensor_value_info("x", H, [1, 4])],
    [helper.make_tensor_value_info("y", H, [1, 4])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
open(sys.argv[1], "wb").write(model.SerializeToString())
EOF_PY
"$NPUCC" compile "$work/fp16.onnx" -o "$work/fp16" --no-cache --accelerate-train-mode 'fast|step|0.9' \
  >"$work/fp16.txt" || fail "fp16: compile failed"
json "$work/fp16/manifest.json" "[g['precision'] for g in m['graphs'] if g['role'] == 'high'] == ['float16']" ||
  fail "fp16: the high graph of a float16 model is not labelled float16: $(grep -A3 '"role": "high"' "$work/fp16/manifest.json")"
grep -q "warning: no node runs in float16" "$work/fp16.txt" || fail "fp16: no warning that nothing was lowered"
"$NPUCC" compile "$work/fp16.onnx" -o "$work/fp16-plain" --no-cache >/dev/null || fail "fp16 plain: compile failed"
json "$work/fp16-plain/manifest.json" "[g['precision'] for g in m['graphs']] == ['float16']" ||
  fail "fp16 plain: the graph is not labelled float16"

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all precision CLI checks passed"
