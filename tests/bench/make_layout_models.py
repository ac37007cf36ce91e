#!/usr/bin/python3
"""Writes one model whose single large weight is stored in the layout LAYOUT.

Exporters store weights differently: torch.onnx.export as an initializer's raw_data,
PaddlePaddle's as Constant nodes, older TensorFlow and Keras converters in the typed
fields (float_data, int64_data). The model is the same small graph each time, so a
compile's cost is the layout's:

    raw         y = x @ W, W a float32 initializer in raw_data
    constant    y = x @ W, W the value of a Constant node (raw_data inside)
    float_data  y = x @ W, W an initializer in packed float_data
    unpacked    y = x @ W, W an initializer in float_data written one element per field
    double_data y = x @ W, W a float64 initializer in packed double_data
    int64_data  y = Cast(Gather(T, ids)), T an int64 table in packed int64_data
    int32_data  y = Cast(Gather(T, ids)), T an int8 table in packed int32_data
    if_body     y = If(c, then: x @ W with W a Constant in the branch, else: zeros)

    /usr/bin/python3 tests/bench/make_layout_models.py OUT.onnx LAYOUT [--mb MB] [--seed N]
                     [--truncate BYTES]

The large tensor's bytes are written straight to the wire format (never through a
protobuf message of that size, which is slow in Python). --truncate cuts BYTES off the
end of the file: a damaged download.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper

LAYOUTS = ("raw", "constant", "float_data", "unpacked", "double_data", "int64_data", "int32_data", "if_body")

# Field numbers of onnx.proto.
GRAPH_NODE, GRAPH_INITIALIZER = 1, 5
NODE_ATTRIBUTE = 5
ATTRIBUTE_T, ATTRIBUTE_G = 5, 6
TENSOR_FLOAT, TENSOR_INT32, TENSOR_INT64, TENSOR_RAW, TENSOR_DOUBLE = 4, 5, 7, 9, 10


def varint(value):
    out = bytearray()
    value &= (1 << 64) - 1
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def varints(values):
    """Packed varints of int64 `values` (negative ones take ten bytes, as protobuf writes
    them), a million at a time (numpy's temporaries stay small)."""
    return b"".join(varint_chunk(values[i:i + 1000000]) for i in range(0, values.size, 1000000))


def varint_chunk(values):
    values = values.astype(np.int64).view(np.uint64)
    # The number of bytes of each value: one past its highest non-zero group of 7 bits.
    length = np.ones(values.shape, np.int64)
    for i in range(1, 10):
        length[values >> np.uint64(7 * i) != 0] = i + 1
    table = np.zeros((values.size, 10), np.uint8)
    for i in range(10):
        group = ((values >> np.uint64(7 * i)) & np.uint64(0x7F)).astype(np.uint8)
        table[:, i] = group | np.where(length > i + 1, 0x80, 0).astype(np.uint8)
    keep = np.arange(10)[None, :] < length[:, None]
    return table[keep].tobytes()


def tensor_bytes(name, array, layout):
    """A TensorProto holding `array`, its data in the field `layout` names."""
    header = TensorProto(name=name, data_type=onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype],
                         dims=array.shape)
    head = header.SerializeToString()
    flat = array.reshape(-1)
    if layout == "float_data":
        return head + field(TENSOR_FLOAT, flat.astype("<f4").tobytes())
    if layout == "unpacked":
        tag = varint(TENSOR_FLOAT << 3 | 5)
        rows = np.frombuffer(flat.astype("<f4").tobytes(), np.uint8).reshape(-1, 4)
        prefix = np.frombuffer(tag, np.uint8)[None, :].repeat(rows.shape[0], 0)
        return head + np.concatenate([prefix, rows], 1).tobytes()
    if layout == "double_data":
        return head + field(TENSOR_DOUBLE, flat.astype("<f8").tobytes())
    if layout == "int64_data":
        return head + field(TENSOR_INT64, varints(flat))
    if layout == "int32_data":
        return head + field(TENSOR_INT32, varints(flat.astype(np.int64)))
    return head + field(TENSOR_RAW, flat.tobytes())


def constant_node(output, value):
    node = helper.make_node("Constant", [], [output], name=output + "_Constant").SerializeToString()
    attribute = helper.AttributeProto(name="value", type=helper.AttributeProto.TENSOR).SerializeToString()
    return field(NODE_ATTRIBUTE, attribute + field(ATTRIBUTE_T, value)) + node


def matmul_graph(side, weight, layout):
    """y = x @ W, W of side x side, `weight` the TensorProto's bytes (x and y float64 with a
    float64 W)."""
    elem = TensorProto.DOUBLE if layout == "double_data" else TensorProto.FLOAT
    x = helper.make_tensor_value_info("x", elem, [1, side])
    y = helper.make_tensor_value_info("y", elem, [1, side])
    matmul = helper.make_node("MatMul", ["x", "W"], ["y"], name="matmul")
    if layout == "constant":
        graph = helper.make_graph([matmul], "layout", [x], [y]).SerializeToString()
        return field(GRAPH_NODE, constant_node("W", weight)) + graph
    graph = helper.make_graph([matmul], "layout", [x], [y]).SerializeToString()
    return graph + field(GRAPH_INITIALIZER, weight)


def gather_graph(rows, cols, weight):
    """y = Cast(Gather(T, ids), float): an integer table looked up by index."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, cols])
    nodes = [helper.make_node("Gather", ["T", "ids"], ["rows"], name="gather", axis=0),
             helper.make_node("Cast", ["rows"], ["y"], name="cast", to=TensorProto.FLOAT)]
    return helper.make_graph(nodes, "layout", [ids], [y]).SerializeToString() + field(GRAPH_INITIALIZER, weight)


def if_graph(side, weight):
    """y = If(c): the then branch multiplies by a Constant of its own, the else branch gives zeros."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])
    c = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, side])
    branch_out = helper.make_tensor_value_info("branch_y", TensorProto.FLOAT, [1, side])
    then_graph = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["branch_y"], name="then_mm")],
                                   "then", [], [branch_out]).SerializeToString()
    then_bytes = field(GRAPH_NODE, constant_node("W", weight)) + then_graph
    zeros = helper.make_tensor("zeros", TensorProto.FLOAT, [1, side], np.zeros(side, np.float32))
    else_graph = helper.make_graph([helper.make_node("Constant", [], ["branch_y"], name="zeros", value=zeros)],
                                   "else", [], [branch_out])
    node = helper.make_node("If", ["c"], ["y"], name="if", else_branch=else_graph).SerializeToString()
    then_attribute = helper.AttributeProto(name="then_branch", type=helper.AttributeProto.GRAPH).SerializeToString()
    if_node = field(NODE_ATTRIBUTE, then_attribute + field(ATTRIBUTE_G, then_bytes)) + node
    return field(GRAPH_NODE, if_node) + helper.make_graph([], "layout", [x, c], [y]).SerializeToString()


def build(layout, megabytes, seed):
    rng = np.random.default_rng(seed)
    target = int(megabytes * 1e6)
    if layout in ("int64_data", "int32_data"):
        cols = 256
        # int64: full-range values (about 9.5 bytes each on the wire); int8: -128..127.
        per_value = 9.5 if layout == "int64_data" else 5.5
        rows = max(8, int(target / per_value / cols))
        if layout == "int64_data":
            table = rng.integers(-(1 << 62), 1 << 62, size=(rows, cols), dtype=np.int64)
        else:
            table = rng.integers(-128, 128, size=(rows, cols), dtype=np.int8)
        graph = gather_graph(rows, cols, tensor_bytes("T", table, layout))
    else:
        element = 8 if layout == "double_data" else 4
        side = max(64, int((target / element) ** 0.5))
        dtype = np.float64 if layout == "double_data" else np.float32
        weight = (rng.standard_normal((side, side), dtype=np.float32) * 0.02).astype(dtype)
        data_layout = "raw" if layout in ("constant", "if_body") else layout
        tensor = tensor_bytes("W", weight, data_layout)
        graph = if_graph(side, tensor) if layout == "if_body" else matmul_graph(side, tensor, layout)
    model = helper.make_model(helper.GraphProto(), producer_name="make_layout_models",
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    model.ClearField("graph")
    return model.SerializeToString() + field(7, graph)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("layout", choices=LAYOUTS)
    parser.add_argument("--mb", type=float, default=200.0, help="size of the weight on the wire, in MB")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--truncate", type=int, default=0)
    args = parser.parse_args()
    data = build(args.layout, args.mb, args.seed)
    if args.truncate:
        data = data[:-args.truncate]
    with open(args.out, "wb") as f:
        f.write(data)
    if not args.truncate and args.mb <= 20:
        onnx.checker.check_model(onnx.load_from_string(data))


if __name__ == "__main__":
    main()
