#!/usr/bin/env bash
# `npucc inspect --nodes`: every node of every graph with its op, element types and the
# graph holding it, checked against an independent walk by the onnx Python package; the
# names it lists are the ones --keep-dtype accepts.
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
: "${SOURCE_DIR:?set SOURCE_DIR to the source tree}"
PYTHON=/usr/bin/python3

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-inspect-nodes.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A model with an If whose else branch holds a Loop, and an unnamed node.
"$PYTHON" - "$work/nested.onnx" <<'EOF_PY' || { echo "FAIL: cannot build the test model"; exit 1; }
import sys
from onnx import TensorProto, helper, save
F, B, I = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
loop_body = helper.make_graph(
    [helper.make_node("Mul", ["v_in", "x"], ["v_out"], name="loop_mul"),
     helper.make_node("Identity", ["c_in"], ["c_out"], name="loop_cond")],
    "loop_body",
    [helper.make_tensor_value_info("i", I, []), helper.make_tensor_value_info("c_in", B, []),
     helper.make_tensor_value_info("v_in", F, [2, 3])],
    [helper.make_tensor_value_info("c_out", B, []), helper.make_tensor_value_info("v_out", F, [2, 3])])
then_branch = helper.make_graph(
    [helper.make_node("Add", ["relu_out", "x"], ["then_out"], name="then_add")],
    "then_branch", [], [helper.make_tensor_value_info("then_out", F, [2, 3])])
else_branch = helper.make_graph(
    [helper.make_node("Loop", ["trip", "cond", "relu_out"], ["else_out"], name="inner_loop",
                      body=loop_body)],
    "else_branch", [], [helper.make_tensor_value_info("else_out", F, [2, 3])])
graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["relu_out"], name="relu_main"),
     helper.make_node("If", ["cond"], ["if_out"], name="branch", then_branch=then_branch,
                      else_branch=else_branch),
     helper.make_node("Cast", ["if_out"], ["y"], to=TensorProto.FLOAT16)],
    "nested",
    [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("cond", B, []),
     helper.make_tensor_value_info("trip", I, [])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 3])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
EOF_PY

"$NPUCC" inspect --nodes --json "$work/nested.onnx" >"$work/nested.json" 2>"$work/err" ||
  fail "inspect --nodes --json: $(cat "$work/err")"
"$PYTHON" "$(dirname "$0")/../tools/validate_json.py" npucc-inspect-nodes "$work/nested.json" ||
  fail "inspect --nodes --json: not a valid npucc-inspect-nodes document"
"$PYTHON" - "$work/nested.json" <<'EOF_PY' || fail "nested model: wrong node list"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "npucc-inspect-nodes" and doc["format_version"] == 1, doc
got = {(n["graph"], n["name"] or "#%d" % n["index"]): n for n in doc["nodes"]}
want = {
    ("main", "relu_main"): ("Relu", ["float32"]),
    ("main", "branch"): ("If", ["float32"]),
    ("main", "#2"): ("Cast", ["float16", "float32"]),
    ("main/branch.then_branch", "then_add"): ("Add", ["float32"]),
    ("main/branch.else_branch", "inner_loop"): ("Loop", ["float32"]),
    ("main/branch.else_branch/inner_loop.body", "loop_mul"): ("Mul", ["float32"]),
    ("main/branch.else_branch/inner_loop.body", "loop_cond"): ("Identity", []),
}
assert set(got) == set(want), sorted(got)
for key, (op, floats) in want.items():
    assert got[key]["op_type"] == op and got[key]["float_types"] == floats, (key, got[key])
# The outer x is seen from inside the Loop body, with its type.
mul = got[("main/branch.else_branch/inner_loop.body", "loop_mul")]
assert mul["inputs"][1] == {"name": "x", "dtype": "float32"}, mul
assert got[("main", "#2")]["name"] == "", got[("main", "#2")]
EOF_PY

"$NPUCC" inspect --nodes "$work/nested.onnx" >"$work/nested.txt" 2>"$work/err" ||
  fail "inspect --nodes (text): $(cat "$work/err")"
for pattern in '^main/branch\.else_branch/inner_loop\.body +loop_mul +Mul +float32 +-> +float32$' \
  '^main +#2 \(unnamed\) +Cast +float32 +-> +float16$' '^main +relu_main +Relu ' \
  '^7 nodes;.*--keep-dtype'; do
  grep -qE -- "$pattern" "$work/nested.txt" || fail "text output lacks /$pattern/: $(cat "$work/nested.txt")"
done

# A real model: the same nodes as the onnx package finds, graph by graph.
model="$TESTDATA/models/silero_vad_legacy.onnx"
"$NPUCC" inspect --nodes --json "$model" >"$work/silero.json" || fail "inspect --nodes silero"
"$PYTHON" - "$model" "$work/silero.json" <<'EOF_PY' || fail "silero: node list differs from onnx's"
import json, sys
import onnx
def walk(graph, path, out):
    for i, node in enumerate(graph.node):
        out.append((path, node.name, node.op_type))
    for i, node in enumerate(graph.node):
        label = node.name or "#%d" % i
        for attr in node.attribute:
            bodies = [attr.g] if attr.HasField("g") else list(attr.graphs)
            for body in bodies:
                walk(body, "%s/%s.%s" % (path, label, attr.name), out)
want = []
walk(onnx.load(sys.argv[1]).graph, "main", want)
got = [(n["graph"], n["name"], n["op_type"]) for n in json.load(open(sys.argv[2]))["nodes"]]
assert got == want, [x for x in got if x not in want][:5] or [x for x in want if x not in got][:5]
assert any(g != "main" for g, _, _ in got), "no subgraph nodes"
EOF_PY

# The names feed --keep-dtype: a listed Loop-body node is accepted and kept.
echo loop_mul >"$work/keep.txt"
if "$NPUCC" compile -q --no-cache --precision-mode allow_mix_precision --keep-dtype "$work/keep.txt" \
  "$work/nested.onnx" -o "$work/out" --json >"$work/manifest.json" 2>"$work/err"; then
  grep -q '"keep_dtype": 1' "$work/manifest.json" || fail "--keep-dtype loop_mul: the manifest does not count it as kept"
else
  fail "--keep-dtype with a listed name: $(cat "$work/err")"
fi

# Every node's precision is explained: the manifest lists each node with its precision and,
# unless low, a reason that npucc-precision(7) defines; inspect --nodes on the compiled graph
# shows the same; `keep_dtype` only for what the user pinned.
model="$TESTDATA/models/ppocr_cls.onnx"
echo p2o.Relu.2 >"$work/keep_head.txt"
for pin in no yes; do
  extra=(); [ "$pin" = yes ] && extra=(--keep-dtype "$work/keep_head.txt")
  "$NPUCC" compile -q --no-cache "$model" -o "$work/pc-$pin" --accelerate-train-mode 'fast|step|0.9' "${extra[@]}" ||
    { fail "compile of ppocr_cls (pin $pin)"; continue; }
  "$NPUCC" inspect --nodes --json "$work/pc-$pin/low.onnx" >"$work/nodes-$pin.json" || fail "inspect --nodes of low.onnx"
  "$NPUCC" inspect --nodes "$work/pc-$pin/low.onnx" >"$work/nodes-$pin.txt" || fail "inspect --nodes (text) of low.onnx"
  grep -q "precision  *reason" "$work/nodes-$pin.txt" || fail "inspect --nodes of a compiled graph has no precision column"
  "$PYTHON" - "$work/pc-$pin/manifest.json" "$work/nodes-$pin.json" "$SOURCE_DIR/man/npucc-precision.7" "$pin" <<'EOF_PY' || fail "node precisions (pin $pin)"
import json, re, sys
manifest, nodes, page, pin = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read(), sys.argv[4]
report = manifest["precision_report"]
section = page.split(".SH REASONS", 1)[1].split(".SH ", 1)[0]
defined = set(re.findall(r"^\.B ([a-z_0-9]+)$", section, re.M))
listed = report["node_precisions"]
counts = {}
for n in listed:
    counts.setdefault(n["op_type"], {}).setdefault(n["precision"], 0)
    counts[n["op_type"]][n["precision"]] += 1
assert counts == report["nodes"], "node_precisions disagree with the per-op counts"
kept = [n for n in listed if n["precision"] == "float32"]
assert kept and all(n.get("reason") in defined for n in kept), \
    [n for n in kept if n.get("reason") not in defined][:3]
low = [n for n in listed if n["precision"] == report["low_type"]]
assert low and all("reason" not in n for n in low)
reasons = {n.get("reason") for n in listed} | {c["reason"] for c in report["constants"]["kept_float32"]}
assert "pinned" not in reasons, "pinned is not a reason any more"
assert ("keep_dtype" in reasons) == (pin == "yes"), reasons
by_output = {n["output"]: n for n in listed}
shown = [n for n in nodes["nodes"] if n.get("precision") not in (None, "inserted")]
assert len(shown) == len(listed), (len(shown), len(listed))
for n in shown:
    want = by_output[n["outputs"][0]["name"]]
    assert (n["precision"], n["reason"]) == (want["precision"], want.get("reason")), n["name"]
assert any(n.get("precision") == "inserted" for n in nodes["nodes"]), "no inserted Cast shown"
EOF_PY
done
# A node name the model lacks: the error says where the names come from.
echo no_such_node >"$work/keep_bad.txt"
"$NPUCC" compile -q --no-cache "$model" -o "$work/pc-bad" --accelerate-train-mode 'fast|step|0.9' \
  --keep-dtype "$work/keep_bad.txt" 2>"$work/err" && fail "an unknown --keep-dtype name was accepted"
grep -q "npucc inspect --nodes" "$work/err" || fail "the --keep-dtype error does not point to inspect --nodes: $(cat "$work/err")"

"$NPUCC" inspect --nodes "$work/missing.onnx" >/dev/null 2>"$work/err" && fail "a missing model was accepted"
grep -q '^npucc: error: .*missing.onnx' "$work/err" || fail "missing model: $(cat "$work/err")"

echo "$failures failures"
[ "$failures" -eq 0 ]
