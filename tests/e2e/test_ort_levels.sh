#!/usr/bin/env bash
# Every graph npucc emits for the bundled models (testdata/models and testdata/models/torch) —
# high, the float16 and bfloat16 low graphs, and both emulation graphs — loads and runs in ONNX
# Runtime at every graph optimisation level (disabled, basic, extended, all). A user's runtime
# fuses what it finds: a graph that only runs with its optimiser off is broken for them. The
# one failure allowed is a bfloat16 low graph's "Could not find an implementation" (ONNX
# Runtime has almost no bfloat16 CPU kernels). A crash (a signal) fails, naming the level.
set -euo pipefail
: "${NPUCC:?}" "${TESTDATA:?}" "${SOURCE_DIR:?}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-ort-levels.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
graphs=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# Input shapes for dynamic dims and fixed values, as run_levels.js options.
declare -A inputs=(
  [ppocrv4_det]="--shape x:1,3,160,160 --range x=0,1"
  [ppocr_cls]="--shape x:1,3,48,192 --range x=0,1"
  [oww_hello_deepa]="--shape onnx::Flatten_0:1,25,96"
  [silero_vad_legacy]="--shape input:1,512 --value sr=16000 --shape h:2,1,64 --shape c:2,1,64"
  [torch/resnet_small]="--shape image:2,3,64,64"
  [torch/transformer_encoder]="--shape tokens:2,16 --range tokens=0,99"
  [torch/lstm_tagger]="--shape features:2,7,20 --shape h0:2,2,24 --shape c0:2,2,24"
)
models=${NPUCC_ORT_LEVEL_MODELS:-"ppocrv4_det ppocr_cls silero_vad_legacy oww_hello_deepa torch/resnet_small torch/transformer_encoder torch/lstm_tagger"}

# run_graph LABEL MODEL [run_levels.js options...]: one process per graph, so a crash inside
# ONNX Runtime fails this graph only; the last "try" line names the level it crashed at.
run_graph() {
  local label=$1 model=$2
  shift 2
  local log="$work/levels.log" rc=0
  # shellcheck disable=SC2086 # the input options are words
  (cd "$oracle" && node run_levels.js "$@" "$model") > "$log" 2> "$log.err" || rc=$?
  graphs=$((graphs + 1))
  grep '^ERROR' "$log" | sed "s|$work/||" || true  # honest: prints the errors; rc and the counts decide
  local allowed
  allowed=$(grep -c '^allowed' "$log" || true)  # honest: grep -c prints 0 and exits 1 when there is none: the count is used
  [ "$allowed" != 0 ] && echo "$label: no CPU kernel (allowed) at $allowed level(s)"
  if [ "$rc" -ge 128 ]; then
    fail "$label: ONNX Runtime crashed (signal $((rc - 128))) at $(grep '^try' "$log" | tail -n 1 | awk '{print $NF}')"
  elif [ "$rc" != 0 ]; then
    fail "$label: does not run at every level"
  fi
}

for model in $models; do
  for type in fast fast1; do
    out="$work/$model-$type"
    mkdir -p "$(dirname "$out")"
    if ! "$NPUCC" compile --no-cache "$TESTDATA/models/$model.onnx" -o "$out" \
      --accelerate-train-mode "$type|step|0.9" --emit-emulation > "$out.log" 2>&1; then
      fail "$model $type: compile failed: $(cat "$out.log")"
      continue
    fi
    # shellcheck disable=SC2086
    set -- ${inputs[$model]}
    # high.onnx is the same graph for fast and fast1: checked once.
    [ "$type" = fast ] && run_graph "$model high" "$out/high.onnx" "$@"
    if [ "$type" = fast ]; then
      run_graph "$model fast low" "$out/low.onnx" "$@"
    else
      run_graph "$model fast1 low" "$out/low.onnx" --allow-missing-kernel "$@"
    fi
    run_graph "$model $type emulation" "$out/emulation.onnx" "$@"
  done
done

# The check must be able to fail: a bfloat16 Add has no CPU kernel, which fails a graph unless
# allowed; a decomposed layer norm read through a bfloat16 round trip is the pattern ONNX
# Runtime 1.30 fuses into a LayerNormalization it cannot run (extended and all).
/usr/bin/python3 - "$work" <<'EOF'
import sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
work = sys.argv[1]
add = h.make_graph([h.make_node("Add", ["x", "x"], ["y"])], "bf16_add",
                   [h.make_tensor_value_info("x", T.BFLOAT16, [4])],
                   [h.make_tensor_value_info("y", T.BFLOAT16, [4])])
onnx.save(h.make_model(add, opset_imports=[h.make_opsetid("", 13)]), f"{work}/bf16_add.onnx")
nodes = [h.make_node("Cast", ["x"], ["l"], to=T.BFLOAT16), h.make_node("Cast", ["l"], ["r"], to=T.FLOAT),
         h.make_node("ReduceMean", ["r"], ["m"], axes=[-1]), h.make_node("Sub", ["r", "m"], ["d"]),
         h.make_node("Pow", ["d", "two"], ["p"]), h.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
         h.make_node("Add", ["v", "eps"], ["ve"]), h.make_node("Sqrt", ["ve"], ["s"]),
         h.make_node("Div", ["d", "s"], ["n"]), h.make_node("Mul", ["n", "w"], ["nw"]),
         h.make_node("Add", ["nw", "b"], ["y"])]
inits = [nh.from_array(np.array(2, np.float32), "two"), nh.from_array(np.array(1e-5, np.float32), "eps"),
         nh.from_array(np.ones(8, np.float32), "w"), nh.from_array(np.zeros(8, np.float32), "b")]
norm = h.make_graph(nodes, "bf16_norm", [h.make_tensor_value_info("x", T.FLOAT, [2, 8])],
                    [h.make_tensor_value_info("y", T.FLOAT, [2, 8])], inits)
onnx.save(h.make_model(norm, opset_imports=[h.make_opsetid("", 13)]), f"{work}/bf16_norm.onnx")
EOF
for self in "bf16_add.onnx" "bf16_norm.onnx" "--allow-missing-kernel bf16_add.onnx"; do
  # shellcheck disable=SC2086
  set -- $self
  expected=1
  [ "$1" = --allow-missing-kernel ] && expected=0
  rc=0
  (cd "$oracle" && node run_levels.js "${@:1:$#-1}" "$work/${!#}") > "$work/self.log" 2>&1 || rc=$?
  if [ "$rc" != "$expected" ]; then
    fail "self-check: run_levels.js $self exited $rc, expected $expected: $(grep -v '^try' "$work/self.log" | head -n 2)"
  fi
done

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS: all $graphs emitted graphs run at every ONNX Runtime optimisation level"
