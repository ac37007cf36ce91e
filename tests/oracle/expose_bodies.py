#!/usr/bin/python3
"""The oracle's own exposure of If/Loop/Scan body values (drift_check.js calls it): for each
value of OUTDIR/drift.json whose "body" names a path, high.onnx and emulation.onnx are
rewritten here with ONNX's Python API (not npucc's code) so that the value leaves its
bodies level by level: a Loop or Scan gets a new scan output (every iteration's value,
stacked on a new first axis), an If a new output of both branches (the branch that does not
compute the value gives an empty tensor of its type). Written as OUTDIR/oracle-body-high.onnx
and oracle-body-emulation.onnx (beside their weights; none without body values), which
drift_check.js deletes after the run; prints {"index": "output name"} as JSON.

Usage: expose_bodies.py OUTDIR   (Debian's /usr/bin/python3: onnx)
"""

import json
import os
import sys

import onnx
from onnx import TensorProto, helper


def owner_of(graph, step):
    for node in graph.node:
        if node.output and node.output[0] == step["output"]:
            return node
    raise SystemExit("expose_bodies: no node with output %r" % step["output"])


def attribute_graph(node, name):
    for attribute in node.attribute:
        if attribute.name == name:
            return attribute.g
    raise SystemExit("expose_bodies: %s has no attribute %s" % (node.name, name))


def element_type(graph, name):
    for value in list(graph.value_info) + list(graph.output) + list(graph.input):
        if value.name == name and value.type.tensor_type.elem_type:
            return value.type.tensor_type.elem_type
    for node in graph.node:
        if node.op_type == "Cast" and node.output[0] == name:
            return next(a.i for a in node.attribute if a.name == "to")
    return TensorProto.FLOAT


def lift(parent, step, inner, outer, elem):
    """`inner`, defined in the body `step` names, becomes `outer`: a new output of its node."""
    node = owner_of(parent, step)
    body = attribute_graph(node, step["attribute"])
    carried = "%s.%s" % (outer, step["attribute"])
    body.node.append(helper.make_node("Identity", [inner], [carried]))
    body.output.append(helper.make_tensor_value_info(carried, elem, None))
    if step["op_type"] == "If":
        other = "else_branch" if step["attribute"] == "then_branch" else "then_branch"
        sibling = attribute_graph(node, other)
        empty = helper.make_tensor(carried, elem, [0], [])
        sibling.node.append(helper.make_node("Constant", [], [carried], value=empty))
        sibling.output.append(helper.make_tensor_value_info(carried, elem, None))
    elif step["op_type"] == "Scan":
        for attribute in node.attribute:
            if attribute.name in ("scan_output_axes", "scan_output_directions"):
                attribute.ints.append(0)
    node.output.append(outer)


def expose(model, index, value, path):
    graphs = [model.graph]
    for step in path:
        graphs.append(attribute_graph(owner_of(graphs[-1], step), step["attribute"]))
    elem = element_type(graphs[-1], value)
    inner = value
    for level in range(len(path) - 1, -1, -1):
        outer = "oracle_body_%d_%d" % (index, level)
        lift(graphs[level], path[level], inner, outer, elem)
        inner = outer
    model.graph.output.append(helper.make_tensor_value_info(inner, elem, None))
    return inner


def main():
    outdir = sys.argv[1]
    with open(os.path.join(outdir, "drift.json")) as f:
        report = json.load(f)
    names = {}
    if not any(value.get("body") for value in report["values"]):
        print(json.dumps(names))
        return
    for role in ("high", "emulation"):
        model = onnx.load(os.path.join(outdir, role + ".onnx"), load_external_data=False)
        for index, value in enumerate(report["values"]):
            body = value.get("body")
            if body:
                names[index] = expose(model, index, value["value"], body["path"])
        onnx.save(model, os.path.join(outdir, "oracle-body-%s.onnx" % role))
    print(json.dumps(names))


if __name__ == "__main__":
    main()
