#!/usr/bin/python3
"""make_big_model.py OUT.onnx N: one MatMul with a 1024 x N float weight (4 KiB per column):
a compile that takes long enough to be interrupted."""
import sys, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
n = int(sys.argv[2])
w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((1024, n), dtype=np.float32) * 0.01, "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]); m.ir_version = 8
onnx.save(m, sys.argv[1])
