#!/usr/bin/python3
"""Models whose accuracy check writes sizeable files for ONNX Runtime (issue 41 item 5,
issue 42 item 3: tests/e2e/test_accuracy_interrupt.sh, test_accuracy_private_files.sh).

wide_overflow.onnx: make_accuracy_models.py's overflow MLP, 1024 wide, so that each graph
npucc writes for its runtime child is about 4 MB and a repair spends its time writing and
running them (as the ~10 MB graphs of the issue did). On that generator's samples (inputs
near 1000, x[1,16]) fc2's outputs reach ~3e6, past float16's 65504: a --accuracy-target
repair keeps fc2 and fc3 float32.

    x[1,16] -> MatMul fc1 (16x1024, [0, 0.5)) -> Relu -> MatMul fc2 (1024x1024, [0.5, 1))
            -> Relu -> MatMul fc3 (1024x10, [-0.5, 0.5)) -> Mul rescale (1e-6) -> y[1,10]

big_input.onnx: x[1,3,300,300] -> Conv (4 3x3 filters) -> Relu -> y. One random input set
is 1,080,000 bytes, past the 1 MiB above which npucc hands input sets to the runtime in a
file (runtime/runtime_process.cpp), so a check of it writes an inputs file too.

Usage: make_runtime_file_models.py OUT
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def finish(nodes, name, x_dims, y_dims, inits):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def wide_overflow_model(width=1024):
    rng = np.random.default_rng(7)
    weights = {
        "w1": rng.uniform(0.0, 0.5, (16, width)).astype(np.float32),
        "w2": rng.uniform(0.5, 1.0, (width, width)).astype(np.float32),
        "w3": rng.uniform(-0.5, 0.5, (width, 10)).astype(np.float32),
        "scale": np.array(1e-6, np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Relu", ["h0"], ["h"], name="relu1"),
        helper.make_node("MatMul", ["h", "w2"], ["g0"], name="fc2"),
        helper.make_node("Relu", ["g0"], ["g"], name="relu2"),
        helper.make_node("MatMul", ["g", "w3"], ["z"], name="fc3"),
        helper.make_node("Mul", ["z", "scale"], ["y"], name="rescale"),
    ]
    inits = [numpy_helper.from_array(value, name) for name, value in weights.items()]
    return finish(nodes, "wide_overflow", [1, 16], [1, 10], inits)


def big_input_model():
    rng = np.random.default_rng(11)
    w = rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"], name="relu"),
    ]
    return finish(nodes, "big_input", [1, 3, 300, 300], [1, 4, 300, 300],
                  [numpy_helper.from_array(w, "w")])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(wide_overflow_model(), os.path.join(out, "wide_overflow.onnx"))
    save(big_input_model(), os.path.join(out, "big_input.onnx"))


main()
