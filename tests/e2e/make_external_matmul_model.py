#!/usr/bin/python3
"""Writes a 64x64 MatMul model whose weight is external data in weights.bin beside it.
usage: make_external_matmul_model.py OUT.onnx"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(np.arange(4096, dtype=np.float32).reshape(64, 64), "w")
n = helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")
g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1], save_as_external_data=True, location="weights.bin", size_threshold=0)
