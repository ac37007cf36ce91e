#!/usr/bin/python3
"""The element types of each node's inputs and outputs in an ONNX graph, as ONNX's own
Python package reads them (onnx.load and onnx.shape_inference; nothing of npucc's), so a
test can check what npucc reports about precision (kept_float32, per-node types) against a
reader npucc did not write.

    onnx_node_types.py GRAPH                      prints "NAME OP in_types -> out_types"
    onnx_node_types.py GRAPH --expect TYPE=N1,N2 [--expect TYPE=...]
    onnx_node_types.py GRAPH --count TYPE          prints "NODES CASTS"

--expect: each named node computes in TYPE (float, float16, bfloat16): its outputs and its
float inputs have that type. Exit 1 naming each node that does not, or is not in the graph.
--count: how many nodes other than Cast write only TYPE outputs, and how many Cast nodes.
"""

import argparse
import sys

import onnx
from onnx import TensorProto, shape_inference

FLOATS = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}


def value_types(model):
    """Every value's element type: graph inputs, outputs, initializers, inferred values."""
    inferred = shape_inference.infer_shapes(model)
    types = {}
    graph = inferred.graph
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        types[value.name] = value.type.tensor_type.elem_type
    for tensor in graph.initializer:
        types[tensor.name] = tensor.data_type
    for node in graph.node:  # Constant outputs that inference did not list
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    types.setdefault(node.output[0], attribute.t.data_type)
    return types


def name_of(code):
    return TensorProto.DataType.Name(code).lower() if code else "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("graph")
    parser.add_argument("--expect", action="append", default=[])
    parser.add_argument("--count")
    args = parser.parse_args()
    model = onnx.load(args.graph)
    types = value_types(model)
    if args.count:
        wanted = getattr(TensorProto, args.count.upper())
        casts = sum(1 for node in model.graph.node if node.op_type == "Cast")
        typed = sum(1 for node in model.graph.node if node.op_type != "Cast" and
                    all(types.get(o) == wanted for o in node.output if o))
        print(typed, casts)
        return 0
    nodes = {node.name: node for node in model.graph.node}
    if not args.expect:
        for node in model.graph.node:
            ins = ",".join(name_of(types.get(i, 0)) for i in node.input if i)
            outs = ",".join(name_of(types.get(o, 0)) for o in node.output if o)
            print("%s %s %s -> %s" % (node.name, node.op_type, ins, outs))
        return 0
    problems = []
    checked = 0
    for expectation in args.expect:
        wanted_name, _, names = expectation.partition("=")
        wanted = getattr(TensorProto, wanted_name.upper())
        for name in filter(None, names.split(",")):
            node = nodes.get(name)
            if node is None:
                problems.append("%s: no node of that name in %s" % (name, args.graph))
                continue
            checked += 1
            values = [o for o in node.output if o] + [i for i in node.input if i and types.get(i) in FLOATS]
            wrong = ["%s is %s" % (v, name_of(types.get(v, 0))) for v in values if types.get(v) != wanted]
            if wrong:
                problems.append("%s (%s): not %s: %s" % (name, node.op_type, wanted_name, "; ".join(wrong)))
    for problem in problems:
        print("onnx_node_types: " + problem)
    if checked == 0 and not problems:
        print("onnx_node_types: no node named: nothing was checked")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
