#!/usr/bin/env python3
"""Writes the second oracle's cases (issue 45 item 3): one tiny float32 model per op npucc
lowers (src/precision/op_lists.cpp: allow, infer and clear lists), with inputs that hold the
values where float16 and bfloat16 arithmetic goes wrong: overflow, underflow, subnormals,
ties for round-to-nearest-even, signed zeros, infinities and NaN.

    make_cases.py OUT_DIR [--op-lists src/precision/op_lists.cpp]

OUT_DIR/NAME/model.onnx and OUT_DIR/NAME/input_K.pb (TensorProto) for each case, and
OUT_DIR/cases.json: [{name, op, modes, keep_io, flags, inputs: [names]}] (flags: npucc
compile's options beyond the mode). `modes` lists the precisions the
case runs at ("fast": float16, "fast1": bfloat16): OneHot, Size and Erf are lowered at
float16 only (op_lists.cpp). The test lowers the op with --modify-mixlist (the op moved to
the white list): alone in a model whose inputs and outputs are float32, an infer or clear op
follows float32 inputs and would stay float32. Same seed, same files. With --op-lists it
fails when an op of those lists has no case.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

RNG = np.random.default_rng(45)
F16_TIES = [1 + 2**-11, 1 + 3 * 2**-11, 2049.0, 2051.0, -(1 + 2**-11)]
BF16_TIES = [1 + 2**-8, 1 + 3 * 2**-8, 257.0, 259.0, -(1 + 2**-8)]
F16_EDGES = [65504.0, 65519.0, 65520.0, 70000.0, -70000.0, 1e5,  # largest, overflow
             6e-8, 2.98e-8, 1e-5, 6.1e-5, -3e-6, 1e-8, -1e-8]    # subnormals, underflow
BF16_EDGES = [3.38e38, 3.4e38, -3.4e38, 1e-39, 5e-41, -1e-39, 1.2e-38, 1e-45]
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan]


def edge_values(count, scale=4.0):
    """`count` float32 values: every edge value once, then seeded randoms in [-scale, scale]."""
    edges = np.array(SPECIALS + F16_TIES + BF16_TIES + F16_EDGES + BF16_EDGES, np.float32)
    rest = RNG.uniform(-scale, scale, max(0, count - len(edges))).astype(np.float32)
    return np.concatenate([edges, rest])[:count]


def finite_edges(count, scale=4.0):
    """As edge_values without infinities and NaN (for ops whose inputs mix: a NaN in a
    matrix product spreads over a whole row and hides every other difference)."""
    values = edge_values(count + 3, scale)
    return values[np.isfinite(values)][:count]


def scaled_rows(shape):
    """Matrix-op input: rows at the scales where the low types fail: ordinary, float16's
    overflow (products near 65504), float16's subnormals, bfloat16's overflow and
    subnormals, and ties (values on the half-ulp of both types)."""
    values = RNG.uniform(-1, 1, shape).astype(np.float32)
    flat = values.reshape(shape[0], -1) if len(shape) > 1 else values.reshape(1, -1)
    scales = [1.0, 300.0, 3e-3, 1e19, 1e-20, 1.0]
    for row in range(flat.shape[0]):
        flat[row] *= np.float32(scales[row % len(scales)])
    ties = np.array(F16_TIES + BF16_TIES, np.float32)
    flat[-1, : min(len(ties), flat.shape[1])] = ties[: flat.shape[1]]
    return flat.reshape(shape)


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


class Case:
    def __init__(self, name, op, nodes, inputs, outputs, opset=18, modes=("fast", "fast1"),
                 initializers=(), keep_io=False, flags=()):
        self.name, self.op, self.modes, self.keep_io = name, op, list(modes), keep_io
        self.flags = ["--keep-io-types" if keep_io else "--no-keep-io-types", *flags]
        self.inputs = inputs  # [(name, numpy array)]
        graph = helper.make_graph(
            nodes, name,
            [tensor(n, list(v.shape), helper.np_dtype_to_tensor_dtype(v.dtype)) for n, v in inputs],
            outputs, initializer=list(initializers))
        self.model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        self.model.ir_version = 10
        # The outputs' shapes, from the float32 model run by the reference evaluator (npucc
        # wants every output typed and shaped).
        feeds = dict(inputs)
        results = ReferenceEvaluator(self.model).run(None, feeds)
        for value, result in zip(self.model.graph.output, results):
            value.CopyFrom(helper.make_tensor_value_info(
                value.name, value.type.tensor_type.elem_type, list(result.shape)))
        onnx.checker.check_model(self.model, full_check=True)

    def write(self, root):
        folder = os.path.join(root, self.name)
        os.makedirs(folder, exist_ok=True)
        onnx.save(self.model, os.path.join(folder, "model.onnx"))
        for k, (name, value) in enumerate(self.inputs):
            proto = numpy_helper.from_array(value, name)
            with open(os.path.join(folder, f"input_{k}.pb"), "wb") as f:
                f.write(proto.SerializeToString())
        return {"name": self.name, "op": self.op, "modes": self.modes, "keep_io": self.keep_io,
                "flags": self.flags,
                "inputs": [n for n, _ in self.inputs]}


def out(name="y", elem=TensorProto.FLOAT):
    return [helper.make_tensor_value_info(name, elem, None)]


def unary(op, opset=18, modes=("fast", "fast1"), out_type=TensorProto.FLOAT, **attrs):
    x = edge_values(96)
    return Case(op, op, [helper.make_node(op, ["x"], ["y"], **attrs)], [("x", x)],
                out("y", out_type), opset, modes)


# Pairs whose result leaves the low type's range: float16 sum and product overflow and
# underflow, bfloat16's the same, and a float16 subnormal product.
PAIRS = np.array([40000.0, 300.0, 2e38, 1e-4, 1e-20, 3e-5, 1e-3, 2e19], np.float32)


def binary(op, opset=18, name=None, second=None, out_type=TensorProto.FLOAT, **attrs):
    a = np.concatenate([edge_values(88), PAIRS])
    b = second if second is not None else np.concatenate([np.roll(edge_values(88), 7), PAIRS])
    return Case(name or op, op, [helper.make_node(op, ["a", "b"], ["y"], **attrs)],
                [("a", a), ("b", b)], out("y", out_type), opset)


def node_case(op, nodes, inputs, opset=18, modes=("fast", "fast1"), name=None, outputs=None,
              initializers=(), flags=()):
    return Case(name or op, op, nodes, inputs, outputs or out(), opset, modes, initializers,
                flags=flags)


def elementwise_cases():
    """The element-wise ops: one rounding of a float32 result in both evaluators."""
    cases = [unary(op) for op in (
        "Abs", "Ceil", "Floor", "Round", "Sign", "Neg", "Relu", "Sigmoid", "Softsign", "Sqrt",
        "Tanh", "HardSwish", "Identity", "Mish")]
    cases += [unary("Erf", modes=("fast",)), unary("Elu", alpha=0.7), unary("Selu"),
              unary("LeakyRelu", alpha=0.01), unary("HardSigmoid", alpha=0.3, beta=0.4),
              unary("Celu", alpha=1.3), unary("ThresholdedRelu", alpha=0.9),
              unary("Gelu", opset=20), unary("Gelu", opset=20, approximate="tanh"),
              unary("Swish", opset=24, alpha=1.5)]
    cases[-2].name = "Gelu_tanh"
    cases += [binary(op) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")]
    # PRelu's slope within float16's range: the reference computes slope * x before it picks
    # the branch, so x = 0 with an infinite slope gives 0 * inf = NaN, where the spec's
    # x >= 0 branch (and ONNX Runtime) gives x.
    slope = np.clip(np.concatenate([np.roll(finite_edges(88), 7), PAIRS]), -65504, 65504)
    cases.append(binary("PRelu", second=slope))
    for op in ("Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"):
        cases.append(binary(op, out_type=TensorProto.BOOL))
    for op in ("IsInf", "IsNaN"):
        cases.append(unary(op, out_type=TensorProto.BOOL, opset=20))  # IsInf: float16 from 20
    three = [("a", edge_values(96)), ("b", np.roll(edge_values(96), 5)),
             ("c", np.roll(edge_values(96), 11))]
    for op in ("Sum", "Mean"):
        cases.append(node_case(op, [helper.make_node(op, ["a", "b", "c"], ["y"])], three))
    lo, hi = np.array(-2.0, np.float32), np.array(60000.0, np.float32)
    cases.append(node_case("Clip", [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
                           [("x", edge_values(96)), ("lo", lo), ("hi", hi)]))
    cond = RNG.uniform(size=96) > 0.5
    cases.append(node_case("Where", [helper.make_node("Where", ["c", "a", "b"], ["y"])],
                           [("c", cond), ("a", edge_values(96)), ("b", np.roll(edge_values(96), 3))]))
    dropout = helper.make_node("Dropout", ["x"], ["y"])
    cases.append(node_case("Dropout", [dropout], [("x", edge_values(96))]))
    return cases


def movement_cases():
    """Ops that move or select values: exact in the low type (one rounding, at the Cast)."""
    x4 = edge_values(2 * 8 * 4 * 4).reshape(2, 8, 4, 4)
    x2 = edge_values(96).reshape(8, 12)
    # NaN's place in an order is each runtime's own (ONNX Runtime's float32 Max kernels skip
    # it, NumPy's propagate it): the ops that compare values get no NaN, and Resize (whose
    # reference weights its nearest values by 0 and 1: 0 * inf = NaN) no value that is or
    # becomes infinite in float16.
    x2_ordered = np.where(np.isnan(x2), np.float32(2.0), x2)
    x4_ordered = np.where(np.isnan(x4), np.float32(2.0), x4)
    x4_finite = np.clip(finite_edges(x4.size), -65504, 65504).reshape(x4.shape)
    i64 = lambda *v: np.array(v, np.int64)
    make = helper.make_node
    cases = [
        node_case("Concat", [make("Concat", ["a", "b"], ["y"], axis=1)], [("a", x2), ("b", x2[:, ::-1].copy())]),
        node_case("DepthToSpace", [make("DepthToSpace", ["x"], ["y"], blocksize=2)], [("x", x4)]),
        node_case("SpaceToDepth", [make("SpaceToDepth", ["x"], ["y"], blocksize=2)], [("x", x4)]),
        node_case("Expand", [make("Expand", ["x", "s"], ["y"])], [("x", x2[:1]), ("s", i64(3, 12))]),
        node_case("Gather", [make("Gather", ["x", "i"], ["y"], axis=1)], [("x", x2), ("i", i64(0, 5, 11, 5))]),
        node_case("GatherElements", [make("GatherElements", ["x", "i"], ["y"], axis=1)],
                  [("x", x2), ("i", RNG.integers(0, 12, (8, 12)).astype(np.int64))]),
        node_case("GatherND", [make("GatherND", ["x", "i"], ["y"])], [("x", x2), ("i", i64(1, 3, 7).reshape(3, 1))]),
        node_case("Pad", [make("Pad", ["x", "p", "v"], ["y"], mode="constant")],
                  [("x", x2), ("p", i64(1, 2, 0, 1)), ("v", np.array(1 + 2**-11, np.float32))]),
        node_case("Reshape", [make("Reshape", ["x", "s"], ["y"])], [("x", x2), ("s", i64(4, 24))]),
        node_case("Flatten", [make("Flatten", ["x"], ["y"], axis=2)], [("x", x4)]),
        node_case("Unsqueeze", [make("Unsqueeze", ["x", "a"], ["y"])], [("x", x2), ("a", i64(0))]),
        node_case("Squeeze", [make("Squeeze", ["x", "a"], ["y"])], [("x", x2[None]), ("a", i64(0))]),
        node_case("Slice", [make("Slice", ["x", "s", "e"], ["y"])], [("x", x2), ("s", i64(1, 2)), ("e", i64(7, 11))]),
        node_case("Tile", [make("Tile", ["x", "r"], ["y"])], [("x", x2), ("r", i64(2, 1))]),
        node_case("Transpose", [make("Transpose", ["x"], ["y"], perm=[1, 0])], [("x", x2)]),
        node_case("ReverseSequence", [make("ReverseSequence", ["x", "l"], ["y"], batch_axis=1, time_axis=0)],
                  [("x", x2), ("l", RNG.integers(1, 9, 12).astype(np.int64))]),
        node_case("Split", [make("Split", ["x"], ["y", "z"], axis=1, num_outputs=2)], [("x", x2)],
                  outputs=out("y") + out("z")),
        node_case("ReduceMax", [make("ReduceMax", ["x", "a"], ["y"])], [("x", x2_ordered), ("a", i64(1))]),
        node_case("ReduceMin", [make("ReduceMin", ["x", "a"], ["y"])], [("x", x2_ordered), ("a", i64(1))]),
        node_case("MaxPool", [make("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[1, 2])], [("x", x4_ordered)]),
        node_case("GlobalMaxPool", [make("GlobalMaxPool", ["x"], ["y"])], [("x", x4_ordered)]),
        node_case("CenterCropPad", [make("CenterCropPad", ["x", "s"], ["y"])], [("x", x2), ("s", i64(6, 14))]),
        node_case("Resize", [make("Resize", ["x", "", "sc"], ["y"], mode="nearest")],
                  [("x", x4_finite), ("sc", np.array([1, 1, 2, 1.5], np.float32))]),
        # Upsample exists to opset 9 only (deprecated at 10); fast1 raises the low graph to 22.
        node_case("Upsample", [make("Upsample", ["x", "sc"], ["y"], mode="nearest")],
                  [("x", x4_finite), ("sc", np.array([1, 1, 2, 3], np.float32))], opset=9),
        node_case("TopK", [make("TopK", ["x", "k"], ["y", "i"], axis=1)], [("x", x2_ordered), ("k", i64(4))],
                  outputs=out("y") + [tensor("i", None, TensorProto.INT64)], opset=24),
    ]
    for op in ("ArgMax", "ArgMin"):
        cases.append(node_case(op, [make(op, ["x"], ["y"], axis=1)], [("x", x2_ordered)],
                               outputs=[tensor("y", None, TensorProto.INT64)]))
    for op in ("Shape", "Size"):
        cases.append(node_case(op, [make(op, ["x"], ["y"])], [("x", x2)],
                               modes=("fast", "fast1") if op == "Shape" else ("fast",),
                               outputs=[tensor("y", None, TensorProto.INT64)]))
    cases.append(node_case("OneHot", [make("OneHot", ["i", "d", "v"], ["y"])],
                           [("i", i64(0, 3, 9)), ("d", np.array(10, np.int64)), ("v", np.array([1e-8, 65519], np.float32))],
                           modes=("fast",)))
    cases.append(node_case("TensorScatter", [make("TensorScatter", ["c", "u", "w"], ["y"])],
                           [("c", x4[:, :, :3, :]), ("u", x4[:, :, :1, :] * 3), ("w", i64(1, 2))], opset=24))
    return cases


def pooling_cases():
    """Averages and normalisations: a few terms summed, in float32 by both evaluators here."""
    make = helper.make_node
    x4 = finite_edges(2 * 4 * 6 * 6).reshape(2, 4, 6, 6)
    channel = lambda *v: np.array(v, np.float32)
    cases = [
        node_case("AveragePool", [make("AveragePool", ["x"], ["y"], kernel_shape=[3, 3])], [("x", x4)]),
        node_case("GlobalAveragePool", [make("GlobalAveragePool", ["x"], ["y"])], [("x", x4)]),
        node_case("BatchNormalization", [make("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
                  [("x", x4), ("s", channel(1.5, 300, 1e-3, 1)), ("b", channel(0, 1, 65000, -1e-6)),
                   ("m", channel(0.1, 0, -2, 1)), ("v", channel(1, 4, 1e-4, 0.25))]),
        node_case("InstanceNormalization", [make("InstanceNormalization", ["x", "s", "b"], ["y"])],
                  [("x", scaled_rows((2, 4, 6, 6))), ("s", channel(1, 300, 1e-3, 2)), ("b", channel(0, 1, -1, 3))]),
        node_case("Col2Im", [make("Col2Im", ["x", "i", "k"], ["y"])],
                  [("x", finite_edges(1 * 4 * 9).reshape(1, 4, 9)), ("i", np.array([4, 4], np.int64)),
                   ("k", np.array([2, 2], np.int64))]),
    ]
    return cases


def matrix_cases():
    """The allow list: products summed, where the order of the sum is each evaluator's own."""
    make = helper.make_node
    cases = [
        node_case("MatMul", [make("MatMul", ["a", "b"], ["y"])],
                  [("a", scaled_rows((6, 16))), ("b", RNG.uniform(-1, 1, (16, 5)).astype(np.float32))]),
        node_case("Gemm", [make("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transB=1)],
                  [("a", scaled_rows((6, 16))), ("b", RNG.uniform(-1, 1, (5, 16)).astype(np.float32)),
                   ("c", RNG.uniform(-1, 1, (5,)).astype(np.float32))]),
        node_case("Einsum", [make("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")],
                  [("a", scaled_rows((6, 16))), ("b", RNG.uniform(-1, 1, (16, 5)).astype(np.float32))]),
        node_case("Conv", [make("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                  [("x", scaled_rows((6, 2, 5, 5))), ("w", RNG.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)),
                   ("b", np.array([0.5, -1, 1 + 2**-11], np.float32))]),
        node_case("ConvTranspose", [make("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3, 3], strides=[2, 2])],
                  [("x", scaled_rows((6, 2, 4, 4))), ("w", RNG.uniform(-1, 1, (2, 3, 3, 3)).astype(np.float32))]),
    ]
    cases += recurrent_cases() + attention_cases()
    return cases


def recurrent_cases():
    make = helper.make_node
    cases = []
    for op, gates in (("RNN", 1), ("GRU", 3), ("LSTM", 4)):
        hidden, size = 4, 6
        x = scaled_rows((6, 1, size))  # time steps at the scales of scaled_rows
        w = RNG.uniform(-1, 1, (1, gates * hidden, size)).astype(np.float32)
        r = RNG.uniform(-1, 1, (1, gates * hidden, hidden)).astype(np.float32)
        cases.append(node_case(op, [make(op, ["x", "w", "r"], ["y"], hidden_size=hidden)],
                               [("x", x), ("w", w), ("r", r)], opset=22))
    return cases


def attention_cases():
    make = helper.make_node
    q = scaled_rows((1, 2, 6, 8))
    k = RNG.uniform(-1, 1, (1, 2, 5, 8)).astype(np.float32)
    v = RNG.uniform(-2, 2, (1, 2, 5, 8)).astype(np.float32)
    cos = np.cos(np.arange(6 * 4).reshape(6, 4) * 0.3).astype(np.float32)
    sin = np.sin(np.arange(6 * 4).reshape(6, 4) * 0.3).astype(np.float32)
    positions = np.arange(6, dtype=np.int64).reshape(1, 6)
    return [
        node_case("Attention", [make("Attention", ["q", "k", "v"], ["y"])],
                  [("q", q), ("k", k), ("v", v)], opset=23),
        node_case("RotaryEmbedding", [make("RotaryEmbedding", ["x", "c", "s", "p"], ["y"])],
                  [("x", q), ("c", cos), ("s", sin), ("p", positions)], opset=23),
    ]


def weight_cases():
    """Weights as initializers and Constant nodes (npucc converts them, or keeps float32 master
    weights behind a Cast), and a chain compiled with the graph's float32 inputs and outputs
    kept (keep_io: the low graph's own Casts, the emulation's way back through them)."""
    make = helper.make_node
    # npucc converts these itself (--low-precision-weights): ties, the largest values that
    # round down, subnormals of both types and values that underflow to zero.
    weights = np.array(F16_TIES + BF16_TIES + [65519.0, 2.98e-8, 6e-8, 1e-39, -5e-41, 1e-5],
                       np.float32).reshape(16, 1) * np.array([1, -1, 0.5, 0.25, 1e-3], np.float32)
    w = numpy_helper.from_array(weights.astype(np.float32), "w")
    k = numpy_helper.from_array(RNG.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32), "k")
    # No constant may overflow: npucc keeps the op float32 then (reason overflow).
    bias = numpy_helper.from_array(np.array([65519.0, 1e-8, 1 + 2**-8], np.float32), "bias")
    big = helper.make_tensor("c", TensorProto.FLOAT, [6],
                             [65519.0, 1 + 2**-11, 2.98e-8, 1 + 3 * 2**-8, 6e-8, -1e-39])
    chain = [make("MatMul", ["a", "w"], ["m"]), make("Relu", ["m"], ["r"]),
             make("Sigmoid", ["r"], ["s"]), make("Add", ["s", "m"], ["y"])]
    return [
        node_case("MatMul", [make("MatMul", ["a", "w"], ["y"])], [("a", scaled_rows((6, 16)))],
                  name="MatMul_weights", initializers=[w]),
        node_case("MatMul", [make("MatMul", ["a", "w"], ["y"])], [("a", scaled_rows((6, 16)))],
                  name="MatMul_low_weights", initializers=[w], flags=["--low-precision-weights"]),
        node_case("Conv", [make("Conv", ["x", "k", "bias"], ["y"], kernel_shape=[3, 3])],
                  [("x", scaled_rows((6, 2, 5, 5)))], name="Conv_weights", initializers=[k, bias]),
        node_case("Add", [make("Constant", [], ["c"], value=big), make("Add", ["x", "c"], ["y"])],
                  [("x", finite_edges(6 * 8).reshape(8, 6))], name="Add_constant"),
        Case("MatMul_chain_io_kept", "MatMul", chain, [("a", scaled_rows((6, 16)))], out(),
             initializers=[w], keep_io=True),
    ]


def graph_cases():
    """Where the emulation rewrites more than one node list: an If whose branches compute in
    the low type on outer values (each branch taken once; a branch's output stays float32,
    as a graph output), and a model that computes in float16 itself (its own Cast: the
    output is low in the original too, so the emulation adds only the way back)."""
    make = helper.make_node
    a = scaled_rows((6, 16))
    w = RNG.uniform(-1, 1, (16, 16)).astype(np.float32)
    then_branch = helper.make_graph(
        [make("MatMul", ["a", "w"], ["m1"]), make("Relu", ["m1"], ["then_y"])], "then", [], out("then_y"))
    else_branch = helper.make_graph(
        [make("MatMul", ["a", "w"], ["m2"]), make("Mul", ["m2", "m2"], ["p"]), make("Abs", ["p"], ["else_y"])],
        "else", [], out("else_y"))
    cases = []
    for taken in (True, False):
        node = make("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)
        cases.append(node_case("MatMul" if taken else "Mul", [node],
                               [("c", np.array(taken)), ("a", a), ("w", w)],
                               name="If_then_MatMul" if taken else "If_else_Mul"))
    own_cast = [make("Cast", ["x"], ["h"], to=TensorProto.FLOAT16), make("Sqrt", ["h"], ["s"]),
                make("Cast", ["s"], ["y"], to=TensorProto.FLOAT)]
    cases.append(Case("Cast_in_model", "Sqrt", own_cast, [("x", np.abs(edge_values(96)))], out(),
                      modes=("fast",), keep_io=True))
    return cases


def all_cases():
    return (elementwise_cases() + movement_cases() + pooling_cases() + matrix_cases()
            + weight_cases() + graph_cases())


def listed_ops(op_lists_cpp):
    """The ops of the allow, infer and clear lists, and the float16-only additions, as
    src/precision/op_lists.cpp writes them."""
    import re
    text = open(op_lists_cpp).read()
    ops = set()
    for name in ("k_allow_float16", "k_infer_common", "k_clear_common"):
        ops |= set(re.findall(r'"(\w+)"', re.search(name + r"\s*=\s*\{(.*?)\};", text, re.S).group(1)))
    additions = re.search(r"if \(low == LowPrecision::float16\) \{(.*?)\}", text, re.S).group(1)
    return ops | set(re.findall(r'"(\w+)"', additions))


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    cases = all_cases()
    if "--op-lists" in sys.argv:  # every op npucc lowers has a case
        missing = listed_ops(sys.argv[sys.argv.index("--op-lists") + 1]) - {c.op for c in cases}
        if missing:
            sys.exit(f"make_cases.py: no case for {sorted(missing)}, in op_lists.cpp's lists: add one")
    listing = [case.write(root) for case in cases]
    with open(os.path.join(root, "cases.json"), "w") as f:
        json.dump(listing, f, indent=1)
    print(f"{len(listing)} cases in {root}")


if __name__ == "__main__":
    main()
