#!/usr/bin/env bash
# Issue 33: the classics lower too. torchvision's AlexNet, VGG-11, SqueezeNet 1.0, GoogLeNet,
# ResNet-18 and MobileNetV2 exported at opsets 7 to 11 (with their inference Dropouts and
# unfolded BatchNormalizations, as the model zoo's models of that era are), and small
# onnx.helper models for LRN, Upsample, BatchNormalization's `spatial`, Pad/Slice attributes
# and Dropout with and without a read mask at versions 7, 10 and 12
# (tests/tools/make_classic_corpus.py). Each is compiled with fast1 and with fast
# (--emit-emulation):
# - no warning that nothing was lowered or that the low graph stays at the model's opset;
#   fast1's low graph is at opset 22 and every Conv in it is bfloat16, fast's every Conv
#   float16, fast's low graph at opset 15 when the model is below it and holds a
#   BatchNormalization (whose statistics stay float32 from 15 on), else at the model's; the
#   high graph keeps the model's opset and passes ONNX's full checker;
# - ONNX Runtime (tests/oracle/classic_check.js), on a rendered image, at every
#   optimisation level: high = original, emulation within cosine 0.99 (fast) of high, and
#   fast1's within a bound argued from fast's drift on the same image (bfloat16's rounding
#   error is 8 times float16's, 1 - cosine about 64 times: fast1 within 128 times fast's
#   1 - cosine, classic_check.js says why); fast's low graph runs with the high graph's
#   outputs (its accuracy is the emulation's: ORT computes float16 Conv in float32), fast1's
#   low graph loads up to "Could not find an implementation".
# The corpus is generated into the build tree once (build/classic-corpus, regenerated when
# the generator changes: about 2 minutes); NPUCC_CLASSIC_FILTER=REGEX picks models.
set -euo pipefail
: "${NPUCC:?}" "${SOURCE_DIR:?}"
export NPUCC_CACHE_DISABLE=true
source "$(dirname "$0")/oracle_common.sh" # sets oracle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
filter=${NPUCC_CLASSIC_FILTER:-}
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

generator="$SOURCE_DIR/tests/tools/make_classic_corpus.py"
corpus="$(dirname "$NPUCC")/classic-corpus"
if [ ! -f "$corpus/cases.json" ] || [ "$generator" -nt "$corpus/cases.json" ]; then
  rm -rf "$corpus"
  /usr/bin/python3 "$generator" "$corpus" 2>"$work/generate.log" >/dev/null ||
    { echo "FAIL: corpus generation: $(tail -5 "$work/generate.log")"; exit 1; }
fi
mapfile -t names < <(/usr/bin/python3 -c '
import json, re, sys
for c in json.load(open(sys.argv[1])):
    if re.search(sys.argv[2], c["name"]):
        print(c["name"])' "$corpus/cases.json" "$filter")
[ "${#names[@]}" -gt 0 ] || { echo "FAIL: no model matches '$filter'"; exit 1; }

check_graphs() { # DIR MODEL MODE: opsets, Conv types, checker
  /usr/bin/python3 - "$@" <<'EOF'
import json, sys, onnx
out, original, mode = sys.argv[1], onnx.load(sys.argv[2], load_external_data=False), sys.argv[3]
opset = lambda m: {o.domain or "ai.onnx": o.version for o in m.opset_import}["ai.onnx"]
graphs = {r: onnx.load(f"{out}/{r}.onnx", load_external_data=False) for r in ("high", "low", "emulation")}
assert opset(graphs["high"]) == opset(original), ("high opset", opset(graphs["high"]))
assert graphs["high"].ir_version == original.ir_version, ("high IR", graphs["high"].ir_version)
onnx.checker.check_model(f"{out}/high.onnx", full_check=True)  # by path: finds weights.data
low = graphs["low"]
assert low.SerializeToString() != graphs["high"].SerializeToString(), "low.onnx equals high.onnx"
want = onnx.TensorProto.BFLOAT16 if mode == "fast1" else onnx.TensorProto.FLOAT16
if mode == "fast1":
    assert opset(low) == 22 and opset(graphs["emulation"]) == 22, ("low opset", opset(low))
elif opset(original) < 15 and any(n.op_type == "BatchNormalization" for n in original.graph.node):
    assert opset(low) == 15 and opset(graphs["emulation"]) == 15, ("low opset", opset(low))
else:
    assert opset(low) == opset(original), ("low opset", opset(low))
types = {v.name: v.type.tensor_type.elem_type for v in list(low.graph.value_info) + list(low.graph.output)}
convs = [n for n in low.graph.node if n.op_type == "Conv"]
wrong = [n.name or n.output[0] for n in convs if types.get(n.output[0]) != want]
assert convs and not wrong, f"{len(wrong)} of {len(convs)} Conv not {onnx.TensorProto.DataType.Name(want)}: {wrong[:3]}"
report = json.load(open(f"{out}/manifest.json"))["precision_report"]
assert set(report["nodes"]["Conv"]) == {onnx.TensorProto.DataType.Name(want).lower()}, report["nodes"]["Conv"]
EOF
}

for name in "${names[@]}"; do
  model="$corpus/$name.onnx"
  for mode in fast1 fast; do
    out="$work/compiled/$name/$mode"
    train_mode='fast|step|0.9'
    [ "$mode" = fast1 ] && train_mode='fast1|loss|1.05'
    mkdir -p "$(dirname "$out")"
    if ! "$NPUCC" compile "$model" -o "$out" --accelerate-train-mode "$train_mode" \
      --emit-emulation >"$out.log" 2>&1; then
      fail "$name $mode: compile failed: $(tail -3 "$out.log")"
      continue
    fi
    if grep -q "warning:" "$out.log"; then
      fail "$name $mode: $(grep "warning:" "$out.log" | head -2)"
    fi
    if [ "$mode" = fast1 ] && ! grep -q "opset: low graph raised from" "$out.log"; then
      fail "$name fast1: the low graph was not raised: $(cat "$out.log")"
    fi
    check_graphs "$out" "$model" "$mode" >"$out.check" 2>&1 ||
      fail "$name $mode: $(tail -1 "$out.check")"
  done
done

oracle_status=0
(cd "$oracle" && node classic_check.js "$corpus/cases.json" "$work/compiled" \
  ${filter:+--filter "$filter"}) >"$work/oracle.log" 2>&1 || oracle_status=$?
cat "$work/oracle.log"
[ "$oracle_status" = 0 ] || fail "classic_check.js exited $oracle_status"
grep -q "^classic_check: [0-9]* passed, 0 failed" "$work/oracle.log" ||
  fail "ONNX Runtime: $(grep -c '^FAIL' "$work/oracle.log") graph set(s) failed"

# The oracle must be able to fail: a high graph that is fast's float16 one is not the original
# (at level "all": at "disabled" ORT 1.30 runs float16 Conv as float32 through Casts it
# inserts and then folds with npucc's, so the float16 rounding vanishes).
first=${names[0]}
if [ -f "$work/compiled/$first/fast/low.onnx" ]; then
  mkdir -p "$work/perturbed"
  cp -r "$work/compiled/$first" "$work/perturbed/$first"
  cp "$work/compiled/$first/fast/low.onnx" "$work/perturbed/$first/fast1/high.onnx"
  if (cd "$oracle" && node classic_check.js "$corpus/cases.json" "$work/perturbed" \
    --filter "^$first\$" --levels all) >"$work/perturbed.log" 2>&1; then
    fail "self-check: classic_check.js passed a float16 graph as $first's high graph"
  fi
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "ok: ${#names[@]} classic models lower with fast1 (bfloat16) and fast (float16)"
