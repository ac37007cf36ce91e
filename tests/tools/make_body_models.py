#!/usr/bin/env python3
"""Models whose drift begins inside If/Loop/Scan bodies, for the drift report's body values
(tests/e2e/test_accuracy_drift.sh). Written to OUT with their samples:

loop.onnx: a Loop of 3 iterations carrying h[1,16]; its body: t = MatMul(h, W) with W near
2e-8..1e-7, so t's values (~6e-7) fall in float16's subnormals and lose most of their digits there;
u = Mul(t, 1e6) brings them back; h' = Tanh(u). The drift begins at the body's MatMul, not
in the main graph, whose Loop output only shows it afterwards:

    x[1,16] -> Relu -> h0 -> Loop(3) { t = MatMul(h, W); u = Mul(t, 1e6); h' = Tanh(u);
                                       scan out: h' } -> h_final, hs[3,1,16] -> Add -> y

if.onnx: cond = ReduceSum(x) > 0 chooses a branch; then: the same subnormal MatMul and
rescale, with a Loop of 2 iterations inside (a body in a body); else: a plain MatMul and
Relu. Samples: set 0 takes then, set 1 takes else.

scan.onnx: a Scan over x[5,16] (the sequence axis first) carrying s[1,16]; its body:
a = MatMul(x_t, W) with W as small again, b = Mul(a, 1e6), s' = Tanh(Add(b, s)); scan out s'.

growing.onnx: a Loop whose carried value grows each iteration (g' = Concat(g, MatMul-free
Mul(g, 0.5))): its body values change shape between iterations, so they cannot be stacked;
the report measures the main graph's values and lists the body as not covered, with the
runtime's error.

nested.onnx: a Loop of 2 iterations whose body holds loop.onnx's Loop (3 iterations: its
values stacked on two axes, [2, 3, ...]) and an If choosing by the carried value's sum (an If
inside a Loop: its branches cannot be stacked when iterations choose differently, so the
report lists them as not covered).

loop_overflow.onnx: loop.onnx's Loop with weights near 6e3 and a rescale of 1e-5: the body's
MatMul reaches ~1e5 on its samples (inputs near 10), past float16's 65504, in every
iteration: the activation-range rule keeps it, inside the body.

Samples: OUT/{loop,if,scan,growing,nested,loop_overflow}_samples/test_data_set_{0,1}/input_0.pb; and OUT/silero_samples for
testdata/models/silero_vad_legacy.onnx (a model whose nodes lie in If branches): 512 samples
of a tone in noise at 16 kHz, its LSTM states small and random.

Usage: make_body_models.py OUT   (Debian's /usr/bin/python3: onnx 1.12, opset 17)
"""

import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

OPSET = 17
TINY = (0.2e-7, 1e-7)


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def tiny_weights(seed, shape):
    rng = np.random.default_rng(seed)
    return rng.uniform(*TINY, shape).astype(np.float32)


def subnormal_chain(prefix, source, weights, out):
    """MatMul by weights near 5e-8, rescaled by 1e6, then Tanh: the drift's start."""
    return [
        helper.make_node("MatMul", [source, weights], [prefix + "_t"], name=prefix + "_matmul"),
        helper.make_node("Mul", [prefix + "_t", "rescale"], [prefix + "_u"], name=prefix + "_rescale"),
        helper.make_node("Tanh", [prefix + "_u"], [out], name=prefix + "_tanh"),
    ]


def loop_graph(name, source, trips, weights, final, stacked):
    """A Loop node of `trips` iterations carrying `source` through subnormal_chain."""
    body = helper.make_graph(
        subnormal_chain(name, "h_in", weights, "h_out")
        + [helper.make_node("Identity", ["cond_in"], ["cond_out"], name=name + "_cond"),
           helper.make_node("Identity", ["h_out"], ["h_scan"], name=name + "_scan")],
        name + "_body",
        [tensor("iter", [], TensorProto.INT64), tensor("cond_in", [], TensorProto.BOOL),
         tensor("h_in", [1, 16])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("h_out", [1, 16]),
         tensor("h_scan", [1, 16])])
    return [
        helper.make_node("Constant", [], [name + "_trips"],
                         value=numpy_helper.from_array(np.array(trips, dtype=np.int64))),
        helper.make_node("Constant", [], [name + "_true"],
                         value=numpy_helper.from_array(np.array(True))),
        helper.make_node("Loop", [name + "_trips", name + "_true", source], [final, stacked],
                         name=name, body=body),
    ]


def save_model(path, graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="make_body_models")
    model.ir_version = 8
    checker.check_model(model, full_check=True)
    save(model, path)


def loop_model(path):
    nodes = [helper.make_node("Relu", ["x"], ["h0"], name="relu_in")]
    nodes += loop_graph("loop", "h0", 3, "w", "h_final", "hs")
    nodes += [helper.make_node("ReduceSum", ["hs", "axis0"], ["hs_sum"], keepdims=0, name="sum"),
              helper.make_node("Add", ["h_final", "hs_sum"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "loop_drift", [tensor("x", [1, 16])], [tensor("y", [1, 16])],
                              [const("w", tiny_weights(1, (16, 16))), const("rescale", 1e6),
                               numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0")])
    save_model(path, graph)


def if_model(path):
    then_nodes = subnormal_chain("then", "x", "w", "then_h")
    then_nodes += loop_graph("inner_loop", "then_h", 2, "w", "then_final", "then_hs")
    then_nodes += [helper.make_node("Relu", ["then_final"], ["then_y"], name="then_relu")]
    then_branch = helper.make_graph(then_nodes, "then_branch", [], [tensor("then_y", [1, 16])])
    else_branch = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w_plain"], ["else_m"], name="else_matmul"),
         helper.make_node("Relu", ["else_m"], ["else_y"], name="else_relu")],
        "else_branch", [], [tensor("else_y", [1, 16])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0, name="total"),
        helper.make_node("Greater", ["total", "zero"], ["positive"], name="positive"),
        helper.make_node("If", ["positive"], ["branch_y"], name="choose",
                         then_branch=then_branch, else_branch=else_branch),
        helper.make_node("Add", ["branch_y", "x"], ["y"], name="add"),
    ]
    rng = np.random.default_rng(2)
    graph = helper.make_graph(
        nodes, "if_drift", [tensor("x", [1, 16])], [tensor("y", [1, 16])],
        [const("w", tiny_weights(3, (16, 16))), const("rescale", 1e6), const("zero", 0.0),
         const("w_plain", rng.uniform(-0.5, 0.5, (16, 16)))])
    save_model(path, graph)


def scan_model(path):
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x_t", "axis0"], ["x_row"], name="row"),
         helper.make_node("MatMul", ["x_row", "w"], ["scan_a"], name="scan_matmul"),
         helper.make_node("Mul", ["scan_a", "rescale"], ["scan_b"], name="scan_rescale"),
         helper.make_node("Add", ["scan_b", "s_in"], ["scan_c"], name="scan_add"),
         helper.make_node("Tanh", ["scan_c"], ["s_out"], name="scan_tanh"),
         helper.make_node("Identity", ["s_out"], ["s_scan"], name="scan_out")],
        "scan_body", [tensor("s_in", [1, 16]), tensor("x_t", [16])],
        [tensor("s_out", [1, 16]), tensor("s_scan", [1, 16])])
    nodes = [helper.make_node("Scan", ["s0", "x"], ["s_final", "ss"], num_scan_inputs=1,
                              name="scan", body=body),
             helper.make_node("Relu", ["s_final"], ["y"], name="relu_out")]
    graph = helper.make_graph(
        nodes, "scan_drift", [tensor("x", [5, 16])], [tensor("y", [1, 16]), tensor("ss", [5, 1, 16])],
        [const("w", tiny_weights(4, (16, 16))), const("rescale", 1e6),
         const("s0", np.zeros((1, 16))),
         numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0")])
    save_model(path, graph)


def silero_samples(folder, rng):
    t = np.arange(512) / 16000.0
    for i in range(2):
        path = os.path.join(folder, "test_data_set_%d" % i)
        os.makedirs(path, exist_ok=True)
        audio = 0.3 * np.sin(2 * np.pi * (200 + 100 * i) * t) + 0.05 * rng.normal(size=512)
        tensors = [("input", audio.astype(np.float32)[None, :]),
                   ("sr", np.array(16000, dtype=np.int64)),
                   ("h", (0.1 * rng.normal(size=(2, 1, 64))).astype(np.float32)),
                   ("c", (0.1 * rng.normal(size=(2, 1, 64))).astype(np.float32))]
        for k, (name, array) in enumerate(tensors):
            with open(os.path.join(path, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(array, name).SerializeToString())


def growing_model(path):
    body = helper.make_graph(
        [helper.make_node("Mul", ["g_in", "half"], ["g_half"], name="grow_half"),
         helper.make_node("Concat", ["g_in", "g_half"], ["g_out"], axis=1, name="grow_concat"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="grow_cond")],
        "grow_body",
        [tensor("iter", [], TensorProto.INT64), tensor("cond_in", [], TensorProto.BOOL),
         tensor("g_in", [1, None])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("g_out", [1, None])])
    nodes = [
        helper.make_node("Relu", ["x"], ["g0"], name="relu_in"),
        helper.make_node("Constant", [], ["trips"],
                         value=numpy_helper.from_array(np.array(3, dtype=np.int64))),
        helper.make_node("Constant", [], ["always"], value=numpy_helper.from_array(np.array(True))),
        helper.make_node("Loop", ["trips", "always", "g0"], ["g_final"], name="grow", body=body),
        helper.make_node("ReduceSum", ["g_final"], ["y"], keepdims=1, name="total"),
    ]
    graph = helper.make_graph(nodes, "growing_drift", [tensor("x", [1, 16])], [tensor("y", [1, 1])],
                              [const("half", 0.5)])
    save_model(path, graph)


def nested_model(path):
    choose = helper.make_node(
        "If", ["o_positive"], ["o_branch"], name="o_choose",
        then_branch=helper.make_graph(
            [helper.make_node("Relu", ["o_final"], ["o_then"], name="o_then_relu")],
            "o_then_branch", [], [tensor("o_then", [1, 16])]),
        else_branch=helper.make_graph(
            [helper.make_node("Neg", ["o_final"], ["o_else"], name="o_else_neg")],
            "o_else_branch", [], [tensor("o_else", [1, 16])]))
    body_nodes = loop_graph("inner", "o_in", 3, "w", "o_final", "o_stacked")
    body_nodes += [
        helper.make_node("ReduceSum", ["o_final"], ["o_total"], keepdims=0, name="o_total"),
        helper.make_node("Greater", ["o_total", "zero"], ["o_positive"], name="o_greater"),
        choose,
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="o_cond")]
    body = helper.make_graph(
        body_nodes, "outer_body",
        [tensor("iter", [], TensorProto.INT64), tensor("cond_in", [], TensorProto.BOOL),
         tensor("o_in", [1, 16])],
        [tensor("cond_out", [], TensorProto.BOOL), tensor("o_branch", [1, 16])])
    nodes = [
        helper.make_node("Constant", [], ["outer_trips"],
                         value=numpy_helper.from_array(np.array(2, dtype=np.int64))),
        helper.make_node("Constant", [], ["outer_true"], value=numpy_helper.from_array(np.array(True))),
        helper.make_node("Loop", ["outer_trips", "outer_true", "x"], ["y"], name="outer", body=body),
    ]
    graph = helper.make_graph(nodes, "nested_drift", [tensor("x", [1, 16])], [tensor("y", [1, 16])],
                              [const("w", tiny_weights(6, (16, 16))), const("rescale", 1e6),
                               const("zero", 0.0)])
    save_model(path, graph)


def loop_overflow_model(path):
    nodes = [helper.make_node("Relu", ["x"], ["h0"], name="relu_in")]
    nodes += loop_graph("big", "h0", 2, "w", "h_final", "hs")
    nodes += [helper.make_node("Mul", ["h_final", "ten"], ["y"], name="scale_out")]
    rng = np.random.default_rng(8)
    graph = helper.make_graph(nodes, "loop_overflow", [tensor("x", [1, 16])], [tensor("y", [1, 16])],
                              [const("w", rng.uniform(5000, 8000, (16, 16))), const("rescale", 1e-5),
                               const("ten", 10.0)])
    save_model(path, graph)


def write_samples(folder, arrays):
    for i, array in enumerate(arrays):
        path = os.path.join(folder, "test_data_set_%d" % i)
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(array.astype(np.float32), "x").SerializeToString())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    loop_model(os.path.join(out, "loop.onnx"))
    if_model(os.path.join(out, "if.onnx"))
    scan_model(os.path.join(out, "scan.onnx"))
    growing_model(os.path.join(out, "growing.onnx"))
    nested_model(os.path.join(out, "nested.onnx"))
    loop_overflow_model(os.path.join(out, "loop_overflow.onnx"))
    rng = np.random.default_rng(5)
    write_samples(os.path.join(out, "loop_samples"),
                  [rng.uniform(0.2, 1.0, (1, 16)) for _ in range(2)])
    # Set 0 sums above zero (then), set 1 below (else).
    write_samples(os.path.join(out, "if_samples"),
                  [rng.uniform(0.2, 1.0, (1, 16)), rng.uniform(-1.0, -0.2, (1, 16))])
    write_samples(os.path.join(out, "scan_samples"),
                  [rng.uniform(-1.0, 1.0, (5, 16)) for _ in range(2)])
    write_samples(os.path.join(out, "growing_samples"),
                  [rng.uniform(-1.0, 1.0, (1, 16)) for _ in range(2)])
    write_samples(os.path.join(out, "nested_samples"),
                  [rng.uniform(0.2, 1.0, (1, 16)) for _ in range(2)])
    write_samples(os.path.join(out, "loop_overflow_samples"),
                  [rng.uniform(8.0, 12.0, (1, 16)) for _ in range(2)])
    silero_samples(os.path.join(out, "silero_samples"), rng)


if __name__ == "__main__":
    main()
