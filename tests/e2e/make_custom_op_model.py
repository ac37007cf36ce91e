#!/usr/bin/python3
"""Writes a model with a custom-domain op (com.acme Magic after a Relu): one the cache
bypasses, as it cannot know what the op computes. usage: make_custom_op_model.py OUT.onnx"""
import sys

import onnx
from onnx import TensorProto, helper

n1 = helper.make_node("Relu", ["x"], ["a"], name="relu")
n2 = helper.make_node("Magic", ["a"], ["y"], name="magic_node", domain="com.acme")
g = helper.make_graph([n1, n2], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.acme", 1)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
