#!/usr/bin/env bash
# `npucc inspect` on the real models: the --json figures must match what the onnx
# Python package counts independently, plus a few figures known by hand; the text
# output must show the same facts.
set -uo pipefail

: "${NPUCC:?set NPUCC to the npucc binary}"
: "${TESTDATA:?set TESTDATA to the testdata folder}"
PYTHON=/usr/bin/python3
models="$TESTDATA/models"

work=$(mktemp -d "${TMPDIR:-/tmp}/npucc-inspect.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

for name in oww_hello_deepa ppocr_cls ppocrv4_det silero_vad_legacy; do
  if ! "$NPUCC" inspect --json "$models/$name.onnx" >"$work/$name.json" 2>"$work/$name.err"; then
    fail "inspect --json $name: $(cat "$work/$name.err")"
    continue
  fi
  if [ -s "$work/$name.err" ]; then
    fail "inspect --json $name wrote to stderr: $(cat "$work/$name.err")"
  fi
  "$PYTHON" "$(dirname "$0")/../tools/validate_json.py" npucc-inspect "$work/$name.json" ||
    fail "inspect --json $name: not a valid npucc-inspect document"
  # Independent oracle: count with the onnx package and compare.
  if ! "$PYTHON" - "$models/$name.onnx" "$work/$name.json" <<'EOF'; then
import collections, json, sys
import numpy as np
import onnx

model = onnx.load(sys.argv[1])
report = json.load(open(sys.argv[2]))
ops = collections.Counter()
state = {"subgraphs": 0, "depth": 0, "main": 0, "sub": 0}
params = collections.Counter()

def elements(tensor):
    return int(np.prod(tensor.dims)) if len(tensor.dims) else 1

def walk(graph, depth):
    state["depth"] = max(state["depth"], depth)
    for t in graph.initializer:
        params["initializer", onnx.TensorProto.DataType.Name(t.data_type)] += elements(t)
    for node in graph.node:
        ops[node.domain or "ai.onnx", node.op_type] += 1
        state["main" if depth == 0 else "sub"] += 1
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value":
                    params["constant", onnx.TensorProto.DataType.Name(a.t.data_type)] += elements(a.t)
        for a in node.attribute:
            graphs = [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)
            for g in graphs:
                state["subgraphs"] += 1
                walk(g, depth + 1)

walk(model.graph, 0)
problems = []
def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: report says {got}, onnx says {want}")

expect("ir_version", report["model"]["ir_version"], model.ir_version)
expect("producer", report["model"]["producer"]["name"], model.producer_name)
expect("opsets", report["model"]["opsets"],
       {(o.domain or "ai.onnx"): o.version for o in model.opset_import})
expect("main graph nodes", report["graph"]["main_graph_nodes"], state["main"])
expect("subgraph nodes", report["graph"]["subgraph_nodes"], state["sub"])
expect("subgraphs", report["graph"]["subgraphs"], state["subgraphs"])
expect("max depth", report["graph"]["max_depth"], state["depth"])
expect("ops", {(o["domain"], o["op_type"]): o["count"] for o in report["ops"]}, dict(ops))
dtype_names = {"FLOAT": "float32", "INT64": "int64", "INT32": "int32"}
expect("parameters", {(g["source"], g["dtype"]): g["elements"]
                      for g in report["parameters"]["by_dtype"]},
       {(s, dtype_names[d]): n for (s, d), n in params.items()})
initializer_names = {t.name for t in model.graph.initializer}
want_inputs = [i.name for i in model.graph.input if i.name not in initializer_names]
expect("inputs", [i["name"] for i in report["inputs"]], want_inputs)
expect("outputs", [o["name"] for o in report["outputs"]], [o.name for o in model.graph.output])
for value, info in zip(report["inputs"] + report["outputs"],
                       [i for i in model.graph.input if i.name not in initializer_names]
                       + list(model.graph.output)):
    dims = [d.dim_param if d.dim_param else d.dim_value for d in info.type.tensor_type.shape.dim]
    expect(f"shape of {value['name']}", value["shape"], dims)
if problems:
    print("\n".join(problems))
    sys.exit(1)
EOF
    fail "$name: --json disagrees with the onnx package"
  fi
done

# Figures known by hand (python onnx, checked when this test was written).
"$PYTHON" - "$work" <<'EOF' || fail "known figures"
import json, sys
work = sys.argv[1]
load = lambda name: json.load(open(f"{work}/{name}.json"))
problems = []
def expect(what, got, want):
    if got != want:
        problems.append(f"{what}: got {got!r}, want {want!r}")

det = load("ppocrv4_det")
expect("det format", (det["format"], det["format_version"]), ("npucc-inspect", 1))
expect("det Constant-held weights", det["parameters"]["constant"]["tensors"], 342)
expect("det constant elements", det["parameters"]["constant"]["elements"], 1171841)
expect("det constant bytes", det["parameters"]["constant"]["bytes"], 4 * 1171841)
expect("det initializers", det["parameters"]["initializer"]["tensors"], 0)
expect("det nodes", det["graph"]["nodes"], 672)
expect("det input shape", det["inputs"][0]["shape"],
       ["p2o.DynamicDimension.0", 3, "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"])
expect("det plan", det["memory_plan"]["available"], False)
if "p2o.DynamicDimension" not in det["memory_plan"].get("reason", ""):
    problems.append("det: the plan's reason does not name the dynamic dim")

sil = load("silero_vad_legacy")
expect("silero subgraphs", sil["graph"]["subgraphs"], 18)
expect("silero depth", sil["graph"]["max_depth"], 2)
expect("silero main nodes", sil["graph"]["main_graph_nodes"], 2)
if_op = [o for o in sil["ops"] if o["op_type"] == "If"]
expect("silero If", [(o["count"], o["main_graph"], o["subgraphs"]) for o in if_op], [(9, 1, 8)])
expect("silero initializers", sil["parameters"]["initializer"]["tensors"], 259)
expect("silero elements", sil["parameters"]["elements"], 445117)
expect("silero opsets", len(sil["model"]["opsets"]), 9)
expect("silero unregistered", sil["unregistered_ops"], [])
expect("silero sr", sil["inputs"][1], {"name": "sr", "kind": "tensor", "dtype": "int64", "shape": []})

oww = load("oww_hello_deepa")
expect("oww producer", oww["model"]["producer"], {"name": "pytorch", "version": "2.8.0"})
plan = oww["memory_plan"]
expect("oww plan", plan["available"], True)
expect("oww plan tensors", plan.get("tensor_count"), 29)
if plan["available"] and not plan["lower_bound_bytes"] <= plan["arena_bytes"] <= plan["unshared_bytes"]:
    problems.append(f"oww plan figures out of order: {plan}")
if problems:
    print("\n".join(problems))
    sys.exit(1)
EOF

# --input-shape fixes the dynamic dims, so the plan becomes available.
if "$NPUCC" inspect --json --input-shape "x:1,3,640,640" "$models/ppocrv4_det.onnx" >"$work/det640.json"; then
  "$PYTHON" - "$work/det640.json" <<'EOF' || fail "ppocrv4_det plan with --input-shape"
import json, sys
r = json.load(open(sys.argv[1]))
plan = r["memory_plan"]
assert r["input_shapes"] == {"x": [1, 3, 640, 640]}, r["input_shapes"]
assert plan["available"], plan
assert plan["tensor_count"] == 672, plan
assert 0 < plan["lower_bound_bytes"] <= plan["arena_bytes"] <= plan["unshared_bytes"], plan
# The first conv output alone is 1 x 16 x 320 x 320 floats or so: far above a MiB.
assert plan["arena_bytes"] > (1 << 20), plan
# The reported inputs still show the model as stored.
assert r["inputs"][0]["shape"][0] == "p2o.DynamicDimension.0", r["inputs"]
EOF
else
  fail "inspect --input-shape on ppocrv4_det"
fi

# Text output: the same facts, readable.
"$NPUCC" inspect "$models/silero_vad_legacy.onnx" >"$work/silero.txt" || fail "inspect silero (text)"
for pattern in '^model +.*silero_vad_legacy.onnx$' \
  '^nodes +250 \(2 in the main graph, 248 in 18 subgraphs, max depth 2\)$' \
  '^  If +9 +1 +8$' '^  input +float32 +\[batch, sequence\]$' \
  '^  initializer +float32 +100 +444,944 ' '^memory plan: unavailable: .*--input-shape'; do
  grep -Eq "$pattern" "$work/silero.txt" || fail "silero text output lacks /$pattern/"
done
"$NPUCC" inspect --input-shape "x:1,3,640,640" "$models/ppocrv4_det.onnx" >"$work/det.txt" ||
  fail "inspect ppocrv4_det (text)"
grep -Eq '^  constant +float32 +342 +1,171,841 +4\.5 MiB$' "$work/det.txt" ||
  fail "ppocrv4_det text lacks the constant weights line"
grep -Eq '^memory plan: arena [0-9.]+ MiB for 672 tensors' "$work/det.txt" ||
  fail "ppocrv4_det text lacks the memory plan"

# A compiled graph with external data: inspect reads the data file and reports the
# same parameters as the original model (only the sort runs: the default passes merge
# duplicate weights, which would change the counts).
if "$NPUCC" compile -q --no-cache --passes topological_sort --external-data "$models/oww_hello_deepa.onnx" -o "$work/oww" &&
  "$NPUCC" inspect --json "$work/oww/high.onnx" >"$work/oww_high.json"; then
  "$PYTHON" - "$work/oww_hello_deepa.json" "$work/oww_high.json" <<'EOF' || fail "inspect of a compiled graph with external data"
import json, sys
original, compiled = (json.load(open(p)) for p in sys.argv[1:])
files = compiled["model"]["external_data"]
assert [f["location"] for f in files] == ["high.onnx.data"], files
# Tensors under 1 KiB stay inside the graph.
assert 300000 < files[0]["bytes"] <= 4 * 78049, files
assert compiled["parameters"]["elements"] == original["parameters"]["elements"], (
    compiled["parameters"], original["parameters"])
assert compiled["model"]["bytes"] < original["model"]["bytes"] // 10, compiled["model"]
EOF
else
  fail "compile --external-data then inspect"
fi

# Bad command lines: exit 2, one line naming the problem.
"$NPUCC" inspect --input-shape "nope:1" "$models/oww_hello_deepa.onnx" >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 2 ] || fail "unknown --input-shape name: exit $status, expected 2"
grep -q 'no input "nope"' "$work/err" || fail "unknown --input-shape name: $(cat "$work/err")"
"$NPUCC" inspect "$work/missing.onnx" >/dev/null 2>"$work/err"
status=$?
[ "$status" -eq 1 ] || fail "missing model: exit $status, expected 1"
grep -q '^npucc: error: .*missing.onnx' "$work/err" || fail "missing model: $(cat "$work/err")"

echo "$failures failures"
[ "$failures" -eq 0 ]
