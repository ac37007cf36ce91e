#!/usr/bin/env python3
"""Small models at old opsets, one per --target-opset adapter, for test_target_opset.sh:
ONNX Runtime runs each as written and as npucc raised it; they must agree.

usage: make_opset_models.py OUTDIR
writes NAME.onnx and prints "NAME TARGET_OPSET COMPARE_JS_SHAPE_OPTIONS" lines
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

out = sys.argv[1]


def save(name, opset, nodes, inputs, outputs, inits=(), ir=None, target=22):
    graph = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                         [h.make_tensor_value_info(n, t, s) for n, t, s in outputs], list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = ir or {9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 16: 8, 17: 8}[opset]
    onnx.save(model, f"{out}/{name}.onnx")
    shapes = " ".join(f"--shape {n}:{','.join(map(str, s))}" for n, t, s in inputs)
    print(name, target, shapes)


F = T.FLOAT
rng = np.random.default_rng(7)
# Softmax-11 at an inner axis: the 2-D coercion, written as Flatten/Softmax/Reshape at 13.
save("softmax11_axis1", 11, [h.make_node("Softmax", ["x"], ["y"], axis=1),
                             h.make_node("LogSoftmax", ["x"], ["z"])],
     [("x", F, [2, 3, 4])], [("y", F, [2, 3, 4]), ("z", F, [2, 3, 4])])
# Attributes that became inputs.
save("attributes9", 9, [
    h.make_node("Slice", ["x"], ["s"], starts=[1], ends=[3], axes=[0]),
    h.make_node("TopK", ["x"], ["v", "i"], k=2),
    h.make_node("Clip", ["x"], ["c"], min=-0.5, max=0.25),
    h.make_node("Pad", ["x"], ["p"], pads=[1, 0, 1, 2], value=0.5),
    h.make_node("Pad", ["x"], ["q"], pads=[0, 1, 0, 1], mode="edge"),
    h.make_node("Dropout", ["x"], ["d"], ratio=0.3),
], [("x", F, [4, 6])], [("s", F, [2, 6]), ("v", F, [4, 2]), ("i", T.INT64, [4, 2]),
                        ("c", F, [4, 6]), ("p", F, [6, 8]), ("q", F, [4, 8]), ("d", F, [4, 6])])
save("axes12", 12, [
    h.make_node("ReduceMean", ["x"], ["m"], axes=[1]),
    h.make_node("ReduceSum", ["x"], ["r"], axes=[0, 2], keepdims=0),
    h.make_node("Squeeze", ["m"], ["q"], axes=[1]),
    h.make_node("Unsqueeze", ["r"], ["u"], axes=[0, 2]),
    h.make_node("Split", ["x"], ["a", "b"], axis=2, split=[1, 3]),
    h.make_node("Split", ["x"], ["c", "d"], axis=1),
    h.make_node("ReduceMax", ["x"], ["all"], keepdims=0),
], [("x", F, [2, 4, 4])], [("q", F, [2, 4]), ("u", F, [1, 4, 1]), ("a", F, [2, 4, 1]),
                           ("b", F, [2, 4, 3]), ("c", F, [2, 2, 4]), ("d", F, [2, 2, 4]),
                           ("all", F, [])])
# GridSample-16 with the old mode names.
save("gridsample16", 16, [h.make_node("GridSample", ["x", "g"], ["y"], mode="bilinear"),
                          h.make_node("GridSample", ["x", "g"], ["z"], mode="bicubic",
                                      align_corners=1)],
     [("x", F, [1, 2, 5, 5]), ("g", F, [1, 3, 3, 2])], [("y", F, [1, 2, 3, 3]),
                                                         ("z", F, [1, 2, 3, 3])])
# DFT-17's axis attribute.
save("dft17", 17, [h.make_node("DFT", ["x"], ["y"], axis=1)], [("x", F, [2, 8, 1])],
     [("y", F, [2, 8, 2])])
# RoiAlign-10: its coordinates are RoiAlign-16's output_half_pixel. (Raised to 21 only: ONNX
# Runtime 1.30 has no RoiAlign-22 kernel.)
rois = nh.from_array(np.array([[0.5, 0.5, 3.5, 3.0]], np.float32), "rois")
index = nh.from_array(np.array([0], np.int64), "index")
save("roialign10", 10, [h.make_node("RoiAlign", ["x", "rois", "index"], ["y"], output_height=2,
                                    output_width=2, sampling_ratio=2)],
     [("x", F, [1, 1, 5, 5])], [("y", F, [1, 1, 2, 2])], [rois, index], target=21)
# A BatchNormalization-9 + Conv chain with an If body using Squeeze-11 (bodies are raised).
w = nh.from_array(rng.standard_normal((2, 2, 3, 3)).astype(np.float32), "w")
stats = [nh.from_array(rng.uniform(0.5, 1.5, 2).astype(np.float32), n) for n in ("s", "b", "mu", "var")]
then_g = h.make_graph([h.make_node("Squeeze", ["n"], ["t"], axes=[0])], "then", [],
                      [h.make_tensor_value_info("t", F, None)])
else_g = h.make_graph([h.make_node("Neg", ["n"], ["e0"]), h.make_node("Squeeze", ["e0"], ["e"], axes=[0])],
                      "else", [], [h.make_tensor_value_info("e", F, None)])
save("bn9_if", 11, [
    h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
    h.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["n"]),
    h.make_node("ReduceMean", ["n"], ["m"], keepdims=0),
    h.make_node("Greater", ["m", "zero"], ["cond"]),
    h.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
], [("x", F, [1, 2, 4, 4])], [("y", F, [2, 4, 4])],
     [w, *stats, nh.from_array(np.array(0, np.float32), "zero")])
