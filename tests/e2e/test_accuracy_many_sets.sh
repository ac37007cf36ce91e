#!/usr/bin/env bash
# Issue 41 finding 7: sample sets are read and run a batch at a time, so a check on 300 sets
# of float32[1,3,224,224] (180 MB, a folder of .npz files) peaks at most 2x the
# RSS of the same check on 4 of them (largest process of the tree: npucc or its runtime;
# main held every set, its encoded copy and the runtime's copies: several times more). Off a
# terminal the summary counts the sets; with -v the progress lines count them as they run.
# No timings: peak memory only.
set -uo pipefail
source "$(dirname "$0")/accuracy_common.sh"

"$PY" - "$work" <<'PY' || { echo "FAIL: generator"; exit 1; }
import os, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper, save
work = sys.argv[1]
rng = np.random.default_rng(3)
w = numpy_helper.from_array(rng.uniform(-0.2, 0.2, (4, 3, 4, 4)).astype(np.float32), "w")
fc = numpy_helper.from_array(rng.uniform(-0.2, 0.2, (4, 10)).astype(np.float32), "fc")
nodes = [helper.make_node("Conv", ["image", "w"], ["c"], strides=[4, 4], name="conv"),
         helper.make_node("Relu", ["c"], ["r"], name="relu"),
         helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
         helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
         helper.make_node("MatMul", ["f", "fc"], ["logits"], name="classifier")]
graph = helper.make_graph(nodes, "tiny224",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 224, 224])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], [w, fc])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
save(model, os.path.join(work, "tiny224.onnx"))
os.makedirs(os.path.join(work, "many"))
os.makedirs(os.path.join(work, "few"))
for i in range(300):
    image = rng.standard_normal((1, 3, 224, 224), np.float32)
    np.savez(os.path.join(work, "many", "%03d.npz" % i), image=image)
    if i < 4:
        np.savez(os.path.join(work, "few", "%03d.npz" % i), image=image)
PY

# peak_rss OUT ARGS...: runs npucc compile; prints the peak RSS (KiB) of its process tree.
peak_rss() {
  local out=$1
  shift
  "$PY" - "$NPUCC" "$out" "$@" <<'PY'
import os, subprocess, sys
npucc, out, args = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(out + ".log", "wb") as log:
    proc = subprocess.Popen([npucc, "-v", "compile", "-o", out, "--no-cache", *args], stdout=log, stderr=log)
    _, status, usage = os.wait4(proc.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("compile failed: " + open(out + ".log").read())
print(usage.ru_maxrss)
PY
}

model="$work/tiny224.onnx"
fast=(--accelerate-train-mode 'fast|step|0.9')
few=$(peak_rss "$work/few-out" "$model" "${fast[@]}" --sample-inputs "$work/few") || fail "4 sets: $few"
many=$(peak_rss "$work/many-out" "$model" "${fast[@]}" --sample-inputs "$work/many") || fail "300 sets: $many"
echo "peak RSS: 4 sets $few KiB, 300 sets $many KiB"
if [ "$failures" -eq 0 ]; then
  [ "$many" -le $((2 * few)) ] ||
    fail "300 sets peak at $many KiB, more than 2x the $few KiB of 4 sets"
  json "$work/many-out/manifest.json" "a['samples'] == 300" || fail "300 sets: $(cat "$work/many-out/manifest.json")"
  grep -q "300 sample set(s)" "$work/many-out.log" || fail "the summary does not count the sets: $(cat "$work/many-out.log")"
  grep -q "accuracy: 300/300 sample sets run" "$work/many-out.log" ||
    fail "no progress count of the sets: $(cat "$work/many-out.log")"
fi
no_graph_files_left "after the checks"
if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "accuracy many sets: ok"
