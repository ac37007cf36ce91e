#!/usr/bin/python3
"""Writes damaged and hostile ONNX models for tests/e2e/test_hostile_inputs.sh.

Usage: make_hostile_models.py OUTDIR REAL_MODEL

Every model goes to OUTDIR/models/<name>.onnx; each must be refused by
`npucc compile` and `npucc inspect` with exit status 1 and a one-line error.
OUTDIR/outside.bin is a data file outside the models' folder that the external
data escape attempts point at (it holds valid data, so only the location rule can
refuse them). Run with /usr/bin/python3 (the interpreter that has onnx).
"""

import os
import random
import sys

import onnx
from onnx import TensorProto, helper

OPSET = 13
BIG = 2**40


def model(graph, ir_version=8, opset=OPSET, domain=""):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    m.ir_version = ir_version
    return m


def relu_graph(input_dims=(2, 3)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_dims))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(input_dims))
    return helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])


def external_weight_graph(location, offset=0, length=64):
    """Add(x, w) where w (16 floats) lives in an external file."""
    w = TensorProto()
    w.name = "w"
    w.data_type = TensorProto.FLOAT
    w.dims.append(16)
    w.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = w.external_data.add()
        entry.key = key
        entry.value = value
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])
    node = helper.make_node("Add", ["x", "w"], ["y"], name="add")
    return helper.make_graph([node], "g", [x], [y], initializer=[w])


def save(m, path):
    # Raw bytes: onnx.save would try to resolve external data or check the model.
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def nested_if(levels):
    """`levels` Ifs, each in the then-branch of the one above."""

    def branch(depth, name):
        out = helper.make_tensor_value_info(name, TensorProto.FLOAT, [1])
        if depth == 0:
            node = helper.make_node("Identity", ["x"], [name])
            return helper.make_graph([node], f"leaf{name}", [], [out])
        then_g = branch(depth - 1, f"t{depth}")
        else_g = branch(0, f"e{depth}")
        node = helper.make_node("If", ["cond"], [name], then_branch=then_g, else_branch=else_g)
        return helper.make_graph([node], f"level{depth}", [], [out])

    sys.setrecursionlimit(10000)
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    inner = branch(levels, "y")
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph(list(inner.node), "nested", [cond, x], [y])
    return model(graph)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root = os.path.abspath(sys.argv[1])
    real_model = sys.argv[2]
    folder = os.path.join(root, "models")
    os.makedirs(folder, exist_ok=True)
    outside = os.path.join(root, "outside.bin")
    with open(outside, "wb") as f:
        f.write(bytes(64))

    def path(name):
        return os.path.join(folder, name + ".onnx")

    open(path("empty"), "wb").close()

    rng = random.Random(1234)
    with open(path("random_bytes"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(4096)))

    with open(real_model, "rb") as f:
        data = f.read()
    with open(path("truncated"), "wb") as f:
        f.write(data[: len(data) // 2])

    # a -> b -> a: no topological order exists.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        helper.make_node("Add", ["x", "b"], ["a"], name="first"),
        helper.make_node("Relu", ["a"], ["b"], name="second"),
        helper.make_node("Identity", ["a"], ["y"], name="out"),
    ]
    save(model(helper.make_graph(nodes, "cycle", [x], [y])), path("cycle"))

    nodes = [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")]
    save(model(helper.make_graph(nodes, "dangling", [x], [y])), path("dangling_input"))

    # An initializer claiming 2^40 floats while holding 4 bytes.
    huge = TensorProto()
    huge.name = "w"
    huge.data_type = TensorProto.FLOAT
    huge.dims.append(BIG)
    huge.raw_data = bytes(4)
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    xb = helper.make_tensor_value_info("x", TensorProto.FLOAT, [BIG])
    yb = helper.make_tensor_value_info("y", TensorProto.FLOAT, [BIG])
    save(model(helper.make_graph(nodes, "huge", [xb], [yb], initializer=[huge])),
         path("huge_initializer"))

    # A graph input of 2^40 floats (4 TiB): the memory plan must not overflow or allocate.
    save(model(relu_graph((BIG,))), path("huge_input_dim"))
    # 2^20 x 2^20 inputs whose product only appears through shape inference.
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2**20, 1])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 2**20])
    c = helper.make_tensor_value_info("c", TensorProto.FLOAT, ["m", "n"])
    nodes = [helper.make_node("MatMul", ["a", "b"], ["c"], name="outer")]
    save(model(helper.make_graph(nodes, "outer", [a, b], [c])), path("huge_inferred_tensor"))

    save(model(external_weight_graph(outside)), path("external_absolute"))
    save(model(external_weight_graph("../outside.bin")), path("external_dotdot"))
    os.symlink(outside, os.path.join(folder, "link.bin"))
    save(model(external_weight_graph("link.bin")), path("external_symlink"))
    with open(os.path.join(folder, "short.bin"), "wb") as f:
        f.write(bytes(16))
    save(model(external_weight_graph("short.bin")), path("external_past_end"))
    save(model(external_weight_graph("short.bin", offset=1 << 62)), path("external_offset_past_end"))
    save(model(external_weight_graph("missing.bin")), path("external_missing"))

    # one past what npucc reads (IR 13, opset 26)
    save(model(relu_graph(), ir_version=14), path("ir_version_14"))
    save(model(relu_graph(), opset=27), path("opset_27"))

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="first"),
        helper.make_node("Neg", ["x"], ["y"], name="second"),
    ]
    save(model(helper.make_graph(nodes, "dup", [x], [y])), path("duplicate_node_output"))
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    save(model(helper.make_graph(nodes, "dup", [x], [y, y])), path("duplicate_graph_output"))

    neg = TensorProto()
    neg.name = "w"
    neg.data_type = TensorProto.FLOAT
    neg.dims.extend([-1, 4])
    nodes = [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    save(model(helper.make_graph(nodes, "neg", [x], [y], initializer=[neg])),
         path("negative_initializer_dims"))
    save(model(relu_graph((-5, 3))), path("negative_input_dims"))

    save(nested_if(150), path("nested_if_150"))

    # 3 GiB (sparse, so it costs no disk): more than one protobuf message can hold;
    # refused before anything reads it into memory.
    with open(path("oversized"), "wb") as f:
        f.truncate(3 << 30)

    # Names with a newline and a terminal escape sequence: the error must stay one line.
    m = model(external_weight_graph("missing\n\x1b[2J.bin"))
    m.graph.initializer[0].name = "w\nnpucc: error: forged"
    m.graph.node[0].input[1] = m.graph.initializer[0].name
    save(m, path("control_characters"))


if __name__ == "__main__":
    main()
