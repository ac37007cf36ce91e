#!/usr/bin/python3
"""Writes the hostile models tests/e2e/test_resource_limits.sh feeds to npucc.

    make_resource_models.py KIND OUT.onnx [N]

KIND: huge_initializer, huge_constant, huge_sparse_constant, huge_input_shape,
constant_of_shape, expand, nested_if (N levels), relu_chain (N nodes),
if_chain (N If nodes),
external_10g (writes a sparse 10 GB weights.bin beside OUT).
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def model(nodes, inputs, outputs, initializers=(), value_info=()):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, list(initializers),
                              value_info=list(value_info))
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 8
    return result


def tensor_claiming(name, dims):
    # Claims `dims` elements but stores one value.
    tensor = TensorProto(name=name, data_type=FLOAT, dims=dims)
    tensor.float_data.append(1.0)
    return tensor


def huge_initializer(_):
    w = tensor_claiming("w", [1 << 20, 1 << 20])
    return model([helper.make_node("Add", ["x", "w"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, None)], [w])


def huge_constant(_):
    value = tensor_claiming("c", [1 << 40])
    return model([helper.make_node("Constant", [], ["c"], value=value),
                  helper.make_node("Add", ["x", "c"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, None)])


def huge_sparse_constant(_):
    values = helper.make_tensor("values", FLOAT, [1], [1.0])
    indices = helper.make_tensor("indices", INT64, [1], [0])
    sparse = helper.make_sparse_tensor(values, indices, [1 << 40])
    return model([helper.make_node("Constant", [], ["c"], sparse_value=sparse),
                  helper.make_node("Add", ["x", "c"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, None)])


def huge_input_shape(_):
    big = [1 << 30, 1 << 30, 1 << 30]
    return model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, big)],
                 [helper.make_tensor_value_info("y", FLOAT, big)],
                 value_info=[helper.make_tensor_value_info("a", FLOAT, big)])


def constant_of_shape(_):
    shape = helper.make_tensor("shape", INT64, [3], [1 << 20, 1 << 20, 1 << 20])
    return model([helper.make_node("ConstantOfShape", ["shape"], ["z"]),
                  helper.make_node("Add", ["z", "x"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, [1 << 20] * 3)], [shape])


def expand(_):
    shape = helper.make_tensor("shape", INT64, [4], [1 << 16, 1 << 16, 1 << 16, 1 << 16])
    return model([helper.make_node("Expand", ["x", "shape"], ["e"]),
                  helper.make_node("Relu", ["e"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, [1 << 16] * 4)], [shape])


def nested_if(levels):
    # then_branch nests one level deeper each time; else_branch stays flat.
    def leaf(name):
        return helper.make_graph([helper.make_node("Identity", ["x"], [name])], "leaf", [],
                                 [helper.make_tensor_value_info(name, FLOAT, [1])])

    body = leaf("r0")
    for level in range(1, levels):
        out = "r%d" % level
        node = helper.make_node("If", ["c"], [out], then_branch=body, else_branch=leaf(out + "e"))
        body = helper.make_graph([node], "level%d" % level, [],
                                 [helper.make_tensor_value_info(out, FLOAT, [1])])
    top = helper.make_node("If", ["c"], ["y"], then_branch=body, else_branch=leaf("ye"))
    return model([top], [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                         helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, [1])])


def relu_chain(count):
    graph = onnx.GraphProto(name="chain")
    graph.input.append(helper.make_tensor_value_info("t0", FLOAT, [1, 16]))
    graph.output.append(helper.make_tensor_value_info("t%d" % count, FLOAT, [1, 16]))
    nodes = graph.node
    for i in range(count):
        node = nodes.add()
        node.op_type = "Relu"
        node.input.append("t%d" % i)
        node.output.append("t%d" % (i + 1))
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 8
    return result


def if_chain(count):
    # Every node is an If whose branches read the previous value from the outer
    # graph: many bodies, each seeing many outer names.
    graph = onnx.GraphProto(name="ifs")
    graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    graph.input.append(helper.make_tensor_value_info("t0", FLOAT, [1]))
    graph.output.append(helper.make_tensor_value_info("t%d" % count, FLOAT, [1]))
    for i in range(count):
        branches = []
        for side in ("a", "b"):
            out = "t%d%s" % (i + 1, side)
            branches.append(helper.make_graph(
                [helper.make_node("Identity", ["t%d" % i], [out])], "b", [],
                [helper.make_tensor_value_info(out, FLOAT, [1])]))
        graph.node.append(helper.make_node("If", ["c"], ["t%d" % (i + 1)],
                                           then_branch=branches[0], else_branch=branches[1]))
    result = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    result.ir_version = 8
    return result


def external_10g(path):
    folder = os.path.dirname(os.path.abspath(path))
    data = os.path.join(folder, "weights.bin")
    with open(data, "wb") as out:
        out.truncate(10 * 10**9)  # sparse: no disk used
    w = TensorProto(name="w", data_type=FLOAT, dims=[2500000000])
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", "10000000000")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    return model([helper.make_node("Add", ["x", "w"], ["y"])],
                 [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, None)], [w])


def external_many(path, count):
    """count tensors of 256 MB each, every one within the limits alone, in one sparse
    10 GB file: only their sum is too much."""
    folder = os.path.dirname(os.path.abspath(path))
    with open(os.path.join(folder, "many.bin"), "wb") as out:
        out.truncate(10 * 10**9)
    size = 256 * 2**20
    tensors, nodes, previous = [], [], "x"
    for i in range(count):
        w = TensorProto(name="w%d" % i, data_type=FLOAT, dims=[size // 4])
        w.data_location = TensorProto.EXTERNAL
        for key, value in (("location", "many.bin"), ("offset", str(i * size)),
                           ("length", str(size))):
            entry = w.external_data.add()
            entry.key, entry.value = key, value
        tensors.append(w)
        nodes.append(helper.make_node("Add", [previous, "w%d" % i], ["t%d" % i]))
        previous = "t%d" % i
    nodes.append(helper.make_node("Identity", [previous], ["y"]))
    return model(nodes, [helper.make_tensor_value_info("x", FLOAT, [1])],
                 [helper.make_tensor_value_info("y", FLOAT, None)], tensors)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    makers = {
        "huge_initializer": huge_initializer, "huge_constant": huge_constant,
        "huge_sparse_constant": huge_sparse_constant, "huge_input_shape": huge_input_shape,
        "constant_of_shape": constant_of_shape, "expand": expand, "nested_if": nested_if,
        "relu_chain": relu_chain, "if_chain": if_chain,
    }
    if kind == "external_10g":
        result = external_10g(out)
    elif kind == "external_many":
        result = external_many(out, count)
    else:
        result = makers[kind](count)
    with open(out, "wb") as stream:
        stream.write(result.SerializeToString())


main()
