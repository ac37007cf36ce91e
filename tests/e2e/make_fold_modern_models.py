"""Models at opsets 18 to 21 (IR 8 to 10) for test_fold_modern_opsets.sh. Each exercises
forms the passes fold at those opsets (Shape/Size with start/end, ConstantOfShape-20/21,
Split-18 with num_outputs, ReduceProd/Max/Min-18 and ReduceSum-13 with axes inputs,
ReduceMax-20 on bool, Pad-18 with axes and Pad-19 wrap on constants, Reshape/Squeeze/
Unsqueeze-21, Cast-19/21 with saturate, CastLike-21 of an activation, Equal-19, If/
Identity/Constant-19 and 21) or must leave alone (float Reduce* with axes inputs, Split
and Pad of an input, Resize-19, ScatterElements/ScatterND with max/min), or is an IR-10
local function with an overload. Writes MODEL.onnx into the folder given and prints one
line per model: its name, the ops compiling must fold away, the ops it must keep.

With --raise SOURCE TARGET OPSET, writes the opset-17 model SOURCE raised to OPSET (18-22)
as exporters write it: Reduce* axes as inputs, the IR version of that release.

With --shapes, the models are Shape(op(...)) for each op whose shape inference is npucc's
own, at opsets 18 to 26 (nothing need fold: fold_shapes folds what inference makes static).

onnx 1.12's helper writes any opset when its checker is not run; ir_version is set here.
"""
import os, sys
import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as T

out = sys.argv[1] if len(sys.argv) > 1 else "."
V = h.make_tensor_value_info
N = h.make_node

def i64(name, values):
    return nh.from_array(np.array(values, np.int64), name)

def f32(name, values):
    return nh.from_array(np.array(values, np.float32), name)

def varint(n):
    data = b""
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            return data + bytes([low])
        data += bytes([low | 0x80])

def field(number, payload):  # a length-delimited field ONNX 1.12 does not know
    return varint(number << 3 | 2) + varint(len(payload)) + payload

def with_fields(message, raw):
    copy = type(message)()
    copy.ParseFromString(message.SerializeToString() + raw)
    return copy

# name: (opset, ir, nodes, initializers, inputs, outputs, functions, ops folded away, ops kept)
models = {}
x = V("x", T.FLOAT, [2, 3, 4])

models["shapes21"] = (21, 10, [
    N("Shape", ["x"], ["s_head"], end=1),                       # [2]
    N("Shape", ["x"], ["s_tail"], start=-2),                    # [3, 4]
    N("Size", ["x"], ["n"]),                                    # 24
    N("ConstantOfShape", ["one"], ["minus"], value=h.make_tensor("v", T.INT64, [1], [-1])),
    N("Concat", ["s_head", "minus"], ["flat"], axis=0),         # [2, -1]
    N("Reshape", ["x", "flat"], ["r"]),
    N("Unsqueeze", ["n", "axis0"], ["n1"]),                     # [24]
    N("Unsqueeze", ["n1", "axis0"], ["n11"]),                   # [[24]]
    N("Squeeze", ["n11", "axis0"], ["n1b"]),                    # [24]
    N("Cast", ["n1b"], ["nf"], to=T.FLOAT, saturate=1),
    N("Gather", ["nf", "zero"], ["nf0"]),
    N("Div", ["r", "nf0"], ["y1"]),
    N("Equal", ["s_tail", "three_four"], ["same"]),
    N("Where", ["same", "s_tail", "zeros2"], ["w"]),            # [3, 4]
    N("Concat", ["s_head", "w"], ["back"], axis=0),             # [2, 3, 4]
    N("Reshape", ["r", "back"], ["r3"]),
    N("CastLike", ["one", "x"], ["scale"]),                     # float [1]: x's type only
    N("Mul", ["r3", "scale"], ["r3s"]),
    N("Relu", ["r3s"], ["y2"]),
], [i64("one", [1]), i64("axis0", [0]), i64("zero", 0), i64("three_four", [3, 4]),
    i64("zeros2", [0, 0])],
   [x], [V("y1", T.FLOAT, [2, 12]), V("y2", T.FLOAT, [2, 3, 4])], [],
   ["Shape", "Size", "ConstantOfShape", "Concat", "Unsqueeze", "Squeeze", "Cast", "CastLike",
    "Gather", "Equal", "Where"], ["Reshape", "Div", "Mul", "Relu"])

reduce_nodes, reduce_outputs = [], []
for i, op in enumerate(["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]):
    reduce_nodes.append(N(op, ["pos", "axis1"], [f"red{i}"], keepdims=i % 2))
    reduce_outputs.append(V(f"red{i}", T.FLOAT, [2, 1, 4] if i % 2 else [2, 4]))
models["reduce_split_pad18"] = (18, 8, [
    N("Abs", ["x"], ["ax"]),
    N("Add", ["ax", "one_f"], ["pos"]),
    *reduce_nodes,
    N("ReduceSum", ["x", ""], ["same"], noop_with_empty_axes=1),     # axes omitted: a no-op
    N("ReduceSum", ["x", "axis1"], ["sum1"], keepdims=0),
    N("Shape", ["x"], ["s"]),
    N("ReduceProd", ["s", "axis0"], ["count"], keepdims=1),          # int64 [24], left alone
    N("Reshape", ["x", "count"], ["flat"]),
    N("Split", ["x"], ["p0", "p1", "p2"], axis=1, num_outputs=3),
    N("Split", ["x"], ["h0", "h1"], axis=2, num_outputs=2),
    N("Split", ["s", "one_two"], ["d0", "d12"], axis=0),             # shape parts [2], [3, 4]
    N("Reshape", ["x", "shape_again"], ["again"]),
    N("Concat", ["d0", "d12"], ["shape_again"], axis=0),
    N("Pad", ["x", "pads", "half", "axis2"], ["padded"]),            # Pad-18: axes input
    N("ScatterElements", ["x", "indices", "updates"], ["smax"], axis=2, reduction="max"),
    N("ScatterND", ["x", "nd_indices", "nd_updates"], ["smin"], reduction="min"),
], [f32("one_f", 1.0), i64("axis0", [0]), i64("axis1", [1]), i64("axis2", [2]),
    i64("one_two", [1, 2]), i64("pads", [1, 2]), f32("half", 0.5),
    i64("indices", np.zeros([2, 3, 1])), f32("updates", np.full([2, 3, 1], 0.25)),
    i64("nd_indices", [[0, 1]]), f32("nd_updates", np.full([1, 4], -0.5))],
   [x], reduce_outputs + [V("same", T.FLOAT, [2, 3, 4]), V("sum1", T.FLOAT, [2, 4]),
                          V("flat", T.FLOAT, [24]),
                          V("p0", T.FLOAT, [2, 1, 4]), V("p2", T.FLOAT, [2, 1, 4]),
                          V("h1", T.FLOAT, [2, 3, 2]), V("again", T.FLOAT, [2, 3, 4]),
                          V("padded", T.FLOAT, [2, 3, 7]), V("smax", T.FLOAT, [2, 3, 4]),
                          V("smin", T.FLOAT, [2, 3, 4])], [],
   ["Shape"], ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ReduceSum", "Split", "Pad",
               "ScatterElements", "ScatterND"])

models["reduce_split_fold20"] = (20, 9, [
    N("Shape", ["x"], ["s"]),                                          # [2, 3, 4]
    N("ReduceProd", ["s", "axis0"], ["count"], keepdims=1),            # [24]: axes an input
    N("Reshape", ["x", "count"], ["flat"]),
    N("Split", ["s"], ["head", "tail"], num_outputs=2),                # [2, 3], [4]
    N("ReduceProd", ["head", "axis0"], ["rows"], keepdims=1),          # [6]
    N("Concat", ["rows", "tail"], ["rows_cols"], axis=0),
    N("Reshape", ["x", "rows_cols"], ["y2"]),
    N("ReduceMax", ["s"], ["biggest"], keepdims=0),                    # 4: axes omitted
    N("ReduceMin", ["s", "no_axes"], ["smallest"], keepdims=1, noop_with_empty_axes=0),  # [2]
    N("Unsqueeze", ["biggest", "axis0"], ["biggest1"]),
    N("Concat", ["smallest", "biggest1", "minus1"], ["dims"], axis=0),  # [2, 4, -1]
    N("Reshape", ["x", "dims"], ["y3"]),
    N("ReduceSum", ["s", "axis0"], ["total"], keepdims=1),             # [9]
    N("Cast", ["total"], ["total_f"], to=T.FLOAT),
    N("Add", ["flat", "total_f"], ["y1"]),
    N("Equal", ["s", "s"], ["same"]),
    N("ReduceMax", ["same", "axis0"], ["any"], keepdims=1),            # bool: ReduceMax-20
    N("Neg", ["x"], ["neg"]),
    N("Where", ["any", "x", "neg"], ["y4"]),
], [i64("axis0", [0]), i64("no_axes", np.zeros([0])), i64("minus1", [-1])],
   [x], [V("y1", T.FLOAT, [24]), V("y2", T.FLOAT, [6, 4]), V("y3", T.FLOAT, [2, 4, 3]),
         V("y4", T.FLOAT, [2, 3, 4])], [],
   ["Shape", "ReduceProd", "Split", "ReduceMax", "ReduceMin", "ReduceSum", "Concat",
    "Unsqueeze", "Cast", "Equal"], ["Reshape", "Add", "Where", "Neg"])

models["pad_fold19"] = (19, 9, [
    N("Pad", ["table", "wrap_pads"], ["wrapped"], mode="wrap"),         # [6, 4]: Pad-19 wrap
    N("Add", ["z", "wrapped"], ["y1"]),
    N("Shape", ["x"], ["s"], start=1),                                  # [3, 4]
    N("Pad", ["s", "front", "two", "axis0"], ["dims"]),                 # [2, 3, 4]: axes, value
    N("Reshape", ["z", "dims"], ["y2"]),
    N("Pad", ["table", "crop", "", "axis1"], ["cropped"]),              # [3, 1]: cropping
    N("Pad", ["cropped", "sides"], ["edged"], mode="edge"),             # [3, 3]
    N("Pad", ["edged", "sides"], ["mirrored"], mode="reflect"),         # [3, 5]
    N("Mul", ["mirrored", "w"], ["y3"]),
], [f32("table", [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]]), i64("wrap_pads", [2, 1, 1, 1]),
    i64("front", [1, 0]), i64("two", 2), i64("axis0", [0]), i64("crop", [0, -1]),
    i64("axis1", [1]), i64("sides", [0, 1, 0, 1])],
   [V("z", T.FLOAT, [6, 4]), x, V("w", T.FLOAT, [3, 5])],
   [V("y1", T.FLOAT, [6, 4]), V("y2", T.FLOAT, [2, 3, 4]), V("y3", T.FLOAT, [3, 5])], [],
   ["Pad", "Shape"], ["Add", "Reshape", "Mul"])

img = V("img", T.FLOAT, [1, 2, 4, 4])
models["pad_resize_if19"] = (19, 9, [
    N("Pad", ["img", "pads", "", "axes23"], ["wrapped"], mode="wrap"),   # Pad-19 wrap
    N("Pad", ["img", "pads", "", "axes23"], ["edged"], mode="edge"),
    N("Resize", ["img", "", "", "sizes"], ["resized"], mode="linear", antialias=1,
      keep_aspect_ratio_policy="not_larger", axes=[2, 3]),
    N("Cast", ["img"], ["as_int"], to=T.INT32, saturate=1),  # ORT refuses saturate=0 here
    N("Cast", ["img"], ["wide"], to=T.DOUBLE),                # exact: the next Cast reads img
    N("Cast", ["wide"], ["half"], to=T.FLOAT16),
    N("CastLike", ["half", "img"], ["rounded"]),
    N("Constant", [], ["k"], value_floats=[2.0]),
    N("Identity", ["k"], ["k2"]),
    N("If", ["cond"], ["picked"],
      then_branch=h.make_graph([N("Mul", ["img", "k2"], ["t"])], "then", [],
                               [V("t", T.FLOAT, [1, 2, 4, 4])]),
      else_branch=h.make_graph([N("Neg", ["img"], ["e"])], "else", [],
                               [V("e", T.FLOAT, [1, 2, 4, 4])])),
    N("Identity", ["picked"], ["y"]),
], [i64("pads", [1, 2, 1, 0]), i64("axes23", [2, 3]), i64("sizes", [3, 6]),
    nh.from_array(np.array(True), "cond")],
   [img], [V("wrapped", T.FLOAT, [1, 2, 6, 6]), V("edged", T.FLOAT, [1, 2, 6, 6]),
           V("resized", T.FLOAT, [1, 2, 3, 3]), V("as_int", T.INT32, [1, 2, 4, 4]),
           V("rounded", T.FLOAT, [1, 2, 4, 4]),
           V("y", T.FLOAT, [1, 2, 4, 4])], [],
   ["If", "Constant", "Identity"], ["Pad", "Resize", "Cast", "CastLike", "Mul"])

models["generate20"] = (20, 9, [
    N("Shape", ["x"], ["s"], start=1),                                # [3, 4]
    N("ConstantOfShape", ["s"], ["ones"], value=h.make_tensor("v", T.INT32, [1], [1])),
    N("Range", ["start", "limit", "delta"], ["steps"]),               # [0, 2, 4]
    N("Cast", ["steps"], ["steps_f"], to=T.FLOAT),
    N("Cast", ["ones"], ["ones_f"], to=T.FLOAT),
    N("Slice", ["ones_f", "zero", "two", "axis1"], ["cut"]),          # [3, 2]
    N("Sub", ["s", "one"], ["s_minus"]),                              # [2, 3]
    N("Mul", ["s_minus", "s"], ["prod"]),                             # [6, 12]
    N("Expand", ["x", "full"], ["big"]),
    N("Concat", ["two_l", "s"], ["full"], axis=0),                    # [2, 3, 4]
    N("Add", ["big", "ones_f"], ["y1"]),
    N("Add", ["steps_f", "steps_f"], ["y2"]),
    N("Cast", ["prod"], ["prod_f"], to=T.FLOAT),
    N("Mul", ["cut", "cut"], ["y3"]),
    N("Identity", ["prod_f"], ["y4"]),
], [i64("start", 0), i64("limit", 5), i64("delta", 2), i64("zero", [0]), i64("two", [2]),
    i64("axis1", [1]), i64("one", [1]), i64("two_l", [2])],
   [x], [V("y1", T.FLOAT, [2, 3, 4]), V("y2", T.FLOAT, [3]), V("y3", T.FLOAT, [3, 2]),
         V("y4", T.FLOAT, [2])], [],
   ["Shape", "ConstantOfShape", "Range", "Slice", "Sub", "Concat"], ["Expand"])

# IR 10: a model-local function with an overload, and metadata the ONNX 1.12 protobuf has no
# field for (they travel as unknown fields and must be written back unchanged).
body = [with_fields(N("Add", ["a", "a"], ["b"]), field(9, field(1, b"body") + field(2, b"M1")))]
double = h.make_function("local", "Double", ["a"], ["b"], body, [h.make_opsetid("", 21)])
double = with_fields(double, field(13, b"twice") + field(14, field(1, b"fn") + field(2, b"M2")))
call = with_fields(N("Double", ["x"], ["d"], domain="local"), field(8, b"twice"))
models["function21"] = (21, 10, [
    call,
    N("Constant", [], ["shape"], value_ints=[2, 12]),
    N("Reshape", ["d", "shape"], ["r"]),
    N("If", ["cond"], ["picked"],
      then_branch=h.make_graph([N("Identity", ["r"], ["t"])], "then", [],
                               [V("t", T.FLOAT, [2, 12])]),
      else_branch=h.make_graph([N("Neg", ["r"], ["e"])], "else", [],
                               [V("e", T.FLOAT, [2, 12])])),
    with_fields(N("Relu", ["picked"], ["y"]), field(9, field(1, b"relu") + field(2, b"M3"))),
], [nh.from_array(np.array(True), "cond")], [x], [V("y", T.FLOAT, [2, 12])], [double],
   ["If", "Constant", "Identity"], ["Double", "Reshape", "Relu"])

rng = np.random.default_rng(0)
# Shape(op(...)) for the ops whose shape inference is npucc's own (src/schemas): fold_shapes
# folds the Shape when inference gives the output a static shape, and ONNX Runtime must then
# compute the same shape from the original. (name, opset, ir, inputs, nodes, initializers)
shape_cases = []
x = V("x", T.FLOAT, [2, 3, 7])
img = V("img", T.FLOAT, [1, 2, 6, 5])
shape_cases.append(("reducemean18", 18, 8, [x], [N("ReduceMean", ["x", "ax"], ["o"], keepdims=0)], [i64("ax", [-1, 0])]))
shape_cases.append(("split18", 18, 8, [x], [N("Split", ["x"], ["o", "o2", "o3"], axis=2, num_outputs=3)], []))
shape_cases.append(("pad18", 18, 8, [x], [N("Pad", ["x", "pads", "", "ax"], ["o"])], [i64("pads", [1, 2, 0, 3]), i64("ax", [0, -1])]))
shape_cases.append(("pad19", 19, 9, [x], [N("Pad", ["x", "pads", "", "ax"], ["o"], mode="wrap")], [i64("pads", [1, 2]), i64("ax", [2])]))
shape_cases.append(("resize18", 18, 8, [img], [N("Resize", ["img", "", "", "sizes"], ["o"], mode="nearest", axes=[2, 3], keep_aspect_ratio_policy="not_smaller")], [i64("sizes", [4, 4])]))
shape_cases.append(("resize19", 19, 9, [img], [N("Resize", ["img", "", "scales"], ["o"], mode="linear", antialias=1)], [f32("scales", [1, 1, 0.5, 0.7])]))
shape_cases.append(("centercroppad18", 18, 8, [img], [N("CenterCropPad", ["img", "shape"], ["o"], axes=[2, 3])], [i64("shape", [4, 8])]))
shape_cases.append(("col2im18", 18, 8, [V("c", T.FLOAT, [1, 4, 12])], [N("Col2Im", ["c", "isz", "bsz"], ["o"])], [i64("isz", [4, 5]), i64("bsz", [2, 2])]))
shape_cases.append(("lppool18", 18, 8, [img], [N("LpPool", ["img"], ["o"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)], []))
shape_cases.append(("avgpool19", 19, 9, [img], [N("AveragePool", ["img"], ["o"], kernel_shape=[2, 2], dilations=[2, 2], ceil_mode=1, strides=[2, 1])], []))
shape_cases.append(("dft20", 20, 9, [V("s", T.FLOAT, [2, 8, 1])], [N("DFT", ["s", "", "ax"], ["o"], onesided=1)], [i64("ax", 1)]))
shape_cases.append(("affinegrid20", 20, 9, [V("th", T.FLOAT, [2, 2, 3])], [N("AffineGrid", ["th", "sz"], ["o"])], [i64("sz", [2, 3, 4, 5])]))
shape_cases.append(("gridsample20", 20, 9, [img, V("grid", T.FLOAT, [1, 3, 4, 2])], [N("GridSample", ["img", "grid"], ["o"], mode="linear")], []))
shape_cases.append(("gelu20", 20, 9, [x], [N("Gelu", ["x"], ["o"], approximate="tanh")], []))
shape_cases.append(("groupnorm21", 21, 10, [img], [N("GroupNormalization", ["img", "sc", "b"], ["o"], num_groups=2)], [f32("sc", [1, 1]), f32("b", [0, 0])]))
shape_cases.append(("topk24", 24, 12, [x], [N("TopK", ["x", "k"], ["o", "o2"], axis=1)], [i64("k", [2])]))
shape_cases.append(("attention23", 23, 11, [V("q", T.FLOAT, [1, 2, 4, 8]), V("k", T.FLOAT, [1, 2, 5, 8])], [N("Attention", ["q", "k", "k"], ["o"])], []))
shape_cases.append(("attention23_3d", 23, 11, [V("q", T.FLOAT, [1, 4, 16]), V("k", T.FLOAT, [1, 5, 8])], [N("Attention", ["q", "k", "k"], ["o", "o2", "o3"], q_num_heads=2, kv_num_heads=1)], []))
shape_cases.append(("rmsnorm23", 23, 11, [x], [N("RMSNormalization", ["x", "sc"], ["o"], axis=-1)], [f32("sc", np.ones(7))]))
shape_cases.append(("rotary23", 23, 11, [V("r", T.FLOAT, [1, 2, 3, 8]), V("pos", T.INT64, [1, 3])], [N("RotaryEmbedding", ["r", "cos", "sin", "pos"], ["o"])], [f32("cos", rng.random([4, 4])), f32("sin", rng.random([4, 4]))]))
shape_cases.append(("swish24", 24, 12, [x], [N("Swish", ["x"], ["o"], alpha=1.5)], []))
shape_cases.append(("cumprod26", 26, 13, [x], [N("CumProd", ["x", "ax"], ["o"])], [i64("ax", 1)]))

def shape_model(name, opset, ir, inputs, nodes, inits):
    ranks = {"reducemean18": 1, "col2im18": 4, "affinegrid20": 4}  # AffineGrid: [N, H, W, 2]
    types = {("topk24", "o2"): T.INT64}
    rank = ranks.get(name, len(inputs[0].type.tensor_type.shape.dim))
    extra, outputs = [], []
    for o in [o for n in nodes for o in n.output if o]:
        # Through an Identity: a Shape that is itself a graph output is never folded.
        extra += [N("Shape", [o], ["sh_" + o]), N("Identity", ["sh_" + o], ["shape_" + o])]
        r = 4 if name == "attention23_3d" and o != "o" else rank
        outputs += [V(o, types.get((name, o), T.FLOAT), [f"{o}_{i}" for i in range(r)]),
                    V("shape_" + o, T.INT64, [r])]
    graph = h.make_graph(nodes + extra, name, inputs, outputs, initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = ir
    return model

# A model of opset 17 raised to `opset` as exporters write it now: Reduce* axes attributes
# become inputs (opset 18), and the IR version is the one of the release (IR.md).
REDUCE_18 = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}

def raise_opset(graph):
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                raise_opset(attribute.g)
        axes = [a for a in node.attribute if a.name == "axes"]
        if node.domain in ("", "ai.onnx") and node.op_type in REDUCE_18 and axes:
            name = node.output[0] + "__axes"
            graph.initializer.append(i64(name, list(axes[0].ints)))
            node.attribute.remove(axes[0])
            node.input.append(name)

if len(sys.argv) > 2 and sys.argv[1] == "--raise":
    source, target, opset = sys.argv[2], sys.argv[3], int(sys.argv[4])
    model = onnx.load(source)
    if any(o.version != 17 for o in model.opset_import if o.domain in ("", "ai.onnx")):
        sys.exit(f"{source}: not an opset-17 model")
    raise_opset(model.graph)
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = opset
    model.ir_version = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10}[opset]
    onnx.save(model, target)
    sys.exit(0)

os.makedirs(out, exist_ok=True)
if len(sys.argv) > 2 and sys.argv[2] == "--shapes":
    for name, opset, ir, inputs, nodes, inits in shape_cases:
        onnx.save(shape_model(name, opset, ir, inputs, nodes, inits),
                  os.path.join(out, name + ".onnx"))
        print(name, "-", nodes[0].op_type)
    sys.exit(0)
for name, (opset, ir, nodes, inits, inputs, outputs, functions, gone, kept) in models.items():
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=inits)
    imports = [h.make_opsetid("", opset)] + ([h.make_opsetid("local", 1)] if functions else [])
    model = h.make_model(graph, opset_imports=imports, functions=functions)
    model.ir_version = ir  # onnx 1.12's helper would write 8; the checker is skipped
    onnx.save(model, os.path.join(out, name + ".onnx"))
    print(name, ",".join(gone), ",".join(kept))
