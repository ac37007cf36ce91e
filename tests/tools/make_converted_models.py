#!/usr/bin/env python3
"""A float32 model and its float16 conversions by onnxconverter-common, for
tests/e2e/test_compare_converted.sh and the README tour. Run with the test venv's python
(scripts/install-test-deps), which has onnxconverter-common; npucc never runs this code.

    make_converted_models.py OUTDIR

OUTDIR gets:
  fp32.onnx             x[1,64] -> MatMul -> Mul 1e-3 -> Add -> Relu -> MatMul -> y[1,16];
                        the first MatMul's values reach about 1e5 (float16 overflows at 65504),
                        and `tiny` = Relu(...) * 2e-7 holds float16 subnormals and values
                        float16 flushes to zero (2e-7 itself is a subnormal)
  fp16.onnx             convert_float_to_float16(keep_io_types=True): float32 inputs and
                        outputs, float16 inside
  fp16_io.onnx          convert_float_to_float16(keep_io_types=False): float16 inputs and
                        outputs too
  samples/set{0..3}.npz inputs in [-10, 10)"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxconverter_common import float16


def float32_model():
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((64, 64)) * 1200).astype(np.float32)   # |x W1| up to ~1e5
    w2 = (rng.standard_normal((64, 16)) * 0.2).astype(np.float32)
    inits = [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(w2, "W2"),
             numpy_helper.from_array(np.array(1e-3, np.float32), "c"),
             numpy_helper.from_array((rng.standard_normal(64) * 0.1).astype(np.float32), "b"),
             numpy_helper.from_array(np.array(2e-7, np.float32), "t")]
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["wide"], name="wide_matmul"),
        helper.make_node("Mul", ["wide", "c"], ["scaled"], name="scale_down"),
        helper.make_node("Add", ["scaled", "b"], ["biased"], name="bias"),
        helper.make_node("Relu", ["biased"], ["hidden"], name="relu"),
        helper.make_node("MatMul", ["hidden", "W2"], ["y"], name="head"),
        helper.make_node("Mul", ["hidden", "t"], ["tiny"], name="tiny_scale"),
    ]
    graph = helper.make_graph(
        nodes, "converted_case", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16]),
         helper.make_tensor_value_info("tiny", TensorProto.FLOAT, [1, 64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "samples"), exist_ok=True)
    model = float32_model()
    onnx.save(model, os.path.join(out, "fp32.onnx"))
    onnx.save(float16.convert_float_to_float16(model, keep_io_types=True),
              os.path.join(out, "fp16.onnx"))
    onnx.save(float16.convert_float_to_float16(model, keep_io_types=False),
              os.path.join(out, "fp16_io.onnx"))
    rng = np.random.default_rng(11)
    for i in range(4):
        x = rng.uniform(-10, 10, (1, 64)).astype(np.float32)
        np.savez(os.path.join(out, "samples", f"set{i}.npz"), x=x)


if __name__ == "__main__":
    main()
