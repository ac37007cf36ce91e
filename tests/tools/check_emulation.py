#!/usr/bin/python3
"""Checks that an emulation graph rounds what its low graph holds, read by ONNX's own
Python package (onnx.load and its shape inference; nothing of npucc's).

    check_emulation.py LOW.onnx EMULATION.onnx [LOW.onnx EMULATION.onnx ...]

A float16 graph's accuracy is judged by running npucc's emulation graph in ONNX Runtime
(float32 ops, every low value rounded by a Cast to its type and back), because ONNX
Runtime's own run of low.onnx computes many float16 ops in float32 (at level "disabled" it
removes the Cast pairs and gives the float32 result exactly). That judgement is only worth
something if the emulation rounds every value low.onnx holds in float16/bfloat16. So, for
every node of low.onnx other than a Cast: the emulation holds it (the same op type, name and
place among the nodes of that type; subgraphs too), and each of its inputs that low.onnx holds in a low type T reaches it
there through T: produced by a Cast to float32 from a T value (a single-input Max after it,
npucc's fusion guard, is allowed), or a T initializer. Exit 1 naming each input that is
not rounded, or a node missing; exit 1 too when no low.onnx given holds a low value
(nothing checked). Where ONNX 1.12's shape inference does not know a model's opset, the
types the file declares (value_info, inputs, outputs, initializers) are used.
"""

import sys

import onnx
from onnx import TensorProto, shape_inference

LOW = {TensorProto.FLOAT16, TensorProto.BFLOAT16}


def graphs(graph):
    """The graph and every subgraph (If branches, Loop and Scan bodies) under it."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            for sub in ([attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else []) + list(attribute.graphs):
                yield from graphs(sub)


def nodes(model):
    return [node for graph in graphs(model.graph) for node in graph.node]


def value_types(model):
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # honest: ONNX 1.12 knows opsets up to 17; the declared types are read instead
        inferred = model
    types = {}
    for graph in graphs(inferred.graph):
        for value in list(graph.input) + list(graph.output) + list(graph.value_info):
            types[value.name] = value.type.tensor_type.elem_type
        for tensor in graph.initializer:
            types[tensor.name] = tensor.data_type
        for node in graph.node:
            if node.op_type == "Constant":
                for attribute in node.attribute:
                    if attribute.name == "value":
                        types.setdefault(node.output[0], attribute.t.data_type)
    return types


def cast_to(node):
    return next((a.i for a in node.attribute if a.name == "to"), None)


def rounded(name, low_type, producers, types, depth=0):
    """Whether the emulation's value `name` passed through `low_type` on its way here."""
    if types.get(name) == low_type:
        return True  # a low initializer or value read as is (the op then runs in that type)
    node = producers.get(name)
    if node is None or depth > 4:
        return False
    if node.op_type == "Cast" and cast_to(node) == TensorProto.FLOAT:
        return types.get(node.input[0]) == low_type
    if node.op_type == "Max" and len([i for i in node.input if i]) == 1:
        return rounded(node.input[0], low_type, producers, types, depth + 1)
    return False


def is_guard(node):
    return node.op_type == "Max" and len([i for i in node.input if i]) == 1


def ordinals(node_list):
    """(op type, n): the nth node of that op type, Casts left out."""
    counts = {}
    out = {}
    for node in node_list:
        if node.op_type == "Cast":
            continue
        n = counts.get(node.op_type, 0)
        counts[node.op_type] = n + 1
        out[(node.op_type, n)] = node
    return out


def check_pair(low_path, emulation_path, problems):
    """Appends each input of low_path's nodes the emulation does not round; returns the count checked."""
    low = onnx.load(low_path)
    emulation = onnx.load(emulation_path)
    low_types = value_types(low)
    emu_types = value_types(emulation)
    producers = {o: node for node in nodes(emulation) for o in node.output if o}
    # Nodes pair up by op type and order (names may be empty): the emulation keeps the low
    # graph's nodes in order and adds only Casts and single-input Max guards.
    emu_nodes = ordinals([n for n in nodes(emulation) if not is_guard(n)])
    checked = 0
    for key, node in ordinals(nodes(low)).items():
        low_inputs = [(i, name) for i, name in enumerate(node.input) if name and low_types.get(name) in LOW]
        if not low_inputs:
            continue
        twin = emu_nodes.get(key)
        if twin is None or twin.op_type != node.op_type or twin.name != node.name:
            problems.append("%s: %s (%s): not in the emulation graph" % (emulation_path, node.name, node.op_type))
            continue
        for i, name in low_inputs:
            checked += 1
            want = low_types[name]
            got = twin.input[i] if i < len(twin.input) else ""
            if not rounded(got, want, producers, emu_types):
                problems.append("%s: %s (%s) input %d '%s': %s in low.onnx, not rounded to it"
                                % (emulation_path, node.name, node.op_type, i, got,
                                   TensorProto.DataType.Name(want).lower()))
    return checked


def main():
    paths = sys.argv[1:]
    if not paths or len(paths) % 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    problems = []
    checked = 0
    for low_path, emulation_path in zip(paths[0::2], paths[1::2]):
        checked += check_pair(low_path, emulation_path, problems)
    for problem in problems[:20]:
        print("check_emulation: " + problem)
    if len(problems) > 20:
        print("check_emulation: ... and %d more" % (len(problems) - 20))
    if checked == 0:
        print("check_emulation: no low graph holds a float16/bfloat16 input of a node: nothing was checked")
        return 1
    if not problems:
        print("check_emulation: %d low inputs in %d graph(s), each rounded to its type in the emulation"
              % (checked, len(paths) // 2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
