#!/usr/bin/env bash
# Every weight layout exporters write is read like raw_data (issue 32 item 3) and comes out
# right: tests/bench/make_layout_models.py writes the same small graphs with their one 2 MB
# weight as a raw_data initializer, a Constant node (PaddlePaddle), a Constant in an If
# branch, packed and unpacked float_data, double_data, int64_data and int32_data (older
# TensorFlow and Keras converters). Each is compiled inline and with --external-data:
# - high.onnx and low.onnx pass ONNX's checker, and every large weight in them is byte for
#   byte the input's (onnx.numpy_helper on both sides);
# - ONNX Runtime gives high.onnx's outputs the original's (tests/oracle/compare.js);
# - a file cut inside its float_data or int64_data is refused in one line, with no output.
set -euo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
source "$(dirname "$0")/oracle_common.sh" # sets oracle
work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-layouts.XXXXXX")
trap 'rm -rf "$work"' EXIT
make_model="$SOURCE_DIR/tests/bench/make_layout_models.py"
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

layouts=(raw constant if_body float_data unpacked double_data int64_data int32_data)
entries=()
for layout in "${layouts[@]}"; do
  /usr/bin/python3 "$make_model" "$work/$layout.onnx" "$layout" --mb 2
  for variant in inline external; do
    extra=()
    [ "$variant" = external ] && extra=(--external-data)
    out="$work/$layout.$variant"
    if ! "$NPUCC" compile "$work/$layout.onnx" -o "$out" --accelerate-train-mode 'fast|step|0.9' \
        --no-cache "${extra[@]}" > "$out.log" 2>&1; then
      fail "$layout ($variant) did not compile"
      cat "$out.log"
      continue
    fi
    case $layout in
      int64_data | int32_data) shapes='{"ids":[4]}' ranges='{"ids":[0,7]}' values='{}' ;;
      if_body) shapes='{}' ranges='{}' values='{"c":1}' ;;
      *) shapes='{}' ranges='{}' values='{}' ;;
    esac
    entries+=("{\"name\":\"$layout.$variant\",\"original\":\"$work/$layout.onnx\",\"compiled\":\"$out/high.onnx\",\"shapes\":$shapes,\"values\":$values,\"ranges\":$ranges,\"seed\":3}")
  done
done

echo "== checker, and the weights byte for byte"
/usr/bin/python3 - "$work" "${layouts[@]}" <<'EOF' || status=1
import sys
import onnx
from onnx import numpy_helper

work, layouts = sys.argv[1], sys.argv[2:]


def large_tensors(graph, found):
    """Initializers and Constant values (at any depth) of 16 KiB or more, by name."""
    for tensor in graph.initializer:
        found[tensor.name] = tensor
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                found[node.output[0]] = attribute.t
            for sub in [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else attribute.graphs:
                large_tensors(sub, found)
    return found


failed = False
for layout in layouts:
    original = large_tensors(onnx.load(f"{work}/{layout}.onnx").graph, {})
    for variant in ("inline", "external"):
        for graph in ("high", "low"):
            path = f"{work}/{layout}.{variant}/{graph}.onnx"
            onnx.checker.check_model(path)
            compiled = large_tensors(onnx.load(path).graph, {})
            for name, tensor in original.items():
                want = numpy_helper.to_array(tensor)
                if want.nbytes < 16384:
                    continue
                got = compiled.get(name)
                if got is None:
                    print(f"FAIL: {path}: no weight {name}")
                    failed = True
                    continue
                got = numpy_helper.to_array(got)
                if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                    print(f"FAIL: {path}: weight {name} differs ({got.dtype} {got.shape}, want {want.dtype} {want.shape})")
                    failed = True
print("weights equal, checker passes" if not failed else "")
sys.exit(1 if failed else 0)
EOF

echo "== ONNX Runtime: original vs npucc high.onnx"
(IFS=','; echo "[${entries[*]}]") > "$work/cases.json"
node "$oracle/compare.js" --cases "$work/cases.json" --strict --max-rel 1e-5 --abs-floor 1e-6 \
  --scale-floor 1e-3 || status=1

echo "== a file cut inside its typed field"
for layout in float_data int64_data; do
  /usr/bin/python3 "$make_model" "$work/cut-$layout.onnx" "$layout" --mb 1 --truncate 1000
  set +e
  "$NPUCC" compile "$work/cut-$layout.onnx" -o "$work/cut-$layout" --no-cache > "$work/cut.out" 2> "$work/cut.err"
  code=$?
  set -e
  if [ "$code" = 0 ] || [ "$code" -ge 128 ]; then
    fail "cut $layout: exit status $code (want an error, not success or a crash)"
  fi
  if [ "$(wc -l < "$work/cut.err")" != 1 ] || ! grep -q "^npucc: error: .*cut-$layout.onnx" "$work/cut.err"; then
    fail "cut $layout: want one line naming the file, got:"
    cat "$work/cut.err"
  fi
  [ -e "$work/cut-$layout" ] && fail "cut $layout: an output folder was left"
  echo "refused: $(cat "$work/cut.err")"
done

if [ "$status" = 0 ]; then
  echo "PASS: ${#entries[@]} compiles of ${#layouts[@]} weight layouts, weights and outputs as the originals"
fi
exit "$status"
