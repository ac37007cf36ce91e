#!/usr/bin/python3
"""Writes models with what IR versions 9 to 13 added, for tests/e2e/test_ir_versions.sh.

    make_ir_models.py OUT_DIR [TORCH_MODELS]

fields.onnx     IR 11: every new field (function overload, value_info, attribute_proto,
                metadata_props; node overload, metadata_props, device_configurations; graph
                and value_info and tensor metadata_props; model configuration). The
                function's attribute alpha is left to its attribute_proto default.
overloads.onnx  IR 10: two local functions sharing (domain, name), told apart by overload,
                with different output shapes.
types_*.onnx    IR 13, opset 25: an initializer of each newer element type (raw_data or
                int32_data, odd element counts, some past the 16 KiB weight-store threshold)
                read by Cast (or DequantizeLinear) and added to the input.
exported_*.onnx the models in TORCH_MODELS (testdata/models/torch) as an IR 10 exporter
                writes them: metadata_props on every node and on the graph.
bad_*.onnx      what npucc must refuse: int32_data outside a byte, a sparse int4 tensor.

The new fields are appended by field number (ir_wire.py) to ONNX 1.12 messages, which keep
them as unknown fields; expected.json records each field's bytes for the checks.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ir_wire as w  # noqa: E402

OUT = sys.argv[1]
expected = {}


def save(name, model):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def device_configuration(config, specs, stage):
    """A NodeDeviceConfigurationProto: each spec (tensor, devices) split on axis 0 in two."""
    parts = [w.field(1, config.encode())]
    for tensor, devices in specs:
        dim = w.message(w.field(1, 0), w.field(2, w.message(w.field(1, 2), w.field(3, 2))))
        spec = w.message(w.field(1, tensor.encode()), *[w.field(2, d) for d in devices],
                         w.field(4, dim))
        parts.append(w.field(2, spec))
    parts.append(w.field(3, stage))
    return w.message(*parts)


def fields_model():
    alpha = onnx.AttributeProto(name="value_float", ref_attr_name="alpha",
                                type=onnx.AttributeProto.FLOAT)
    const = helper.make_node("Constant", [], ["a"])
    const.attribute.append(alpha)
    body = [const, helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Add", ["m", "x"], ["y"])]
    function = helper.make_function("local", "ScaleAdd", ["x"], ["y"], body,
                                    [helper.make_opsetid("", 21)], [])
    default = helper.make_attribute("alpha", 2.0)
    f_value_info = helper.make_tensor_value_info("m", T.FLOAT, None).SerializeToString()
    f_fields = {w.FUNCTION_ATTRIBUTE_PROTO: default.SerializeToString(),
                w.FUNCTION_VALUE_INFO: f_value_info,
                w.FUNCTION_OVERLOAD: b"o1",
                w.FUNCTION_METADATA: w.entry("npucc.test.function", "scale-add")}
    for number, payload in f_fields.items():
        w.append(function, number, payload)

    relu = helper.make_node("Relu", ["X"], ["R"], name="relu0")
    scale = helper.make_node("ScaleAdd", ["R"], ["S"], name="scale0", domain="local")
    matmul = helper.make_node("MatMul", ["S", "W"], ["M"], name="mm0")
    add = helper.make_node("Add", ["M", "B"], ["Y"], name="add0")
    node_fields = {
        "relu0": {w.NODE_METADATA: w.entry("npucc.test.node", "relu"),
                  w.NODE_DEVICE_CONFIGURATIONS:
                      device_configuration("two", [("X", [0, 1]), ("R", [0, 1])], 1)},
        "scale0": {w.NODE_OVERLOAD: b"o1", w.NODE_METADATA: w.entry("npucc.test.node", "call")},
        "mm0": {w.NODE_METADATA: w.entry("npucc.test.node", "matmul"),
                w.NODE_DEVICE_CONFIGURATIONS:
                    device_configuration("two", [("S", [0, 1]), ("W", [0]), ("M", [0, 1])], 2)},
    }
    nodes = [relu, scale, matmul, add]
    for node in nodes:
        for number, payload in node_fields.get(node.name, {}).items():
            w.append(node, number, payload)
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "W")
    w.append(weight, w.TENSOR_METADATA, w.entry("npucc.test.tensor", "weight"))
    bias = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B")
    r_info = helper.make_tensor_value_info("R", T.FLOAT, [2, 8])
    w.append(r_info, w.VALUE_INFO_METADATA, w.entry("npucc.test.value", "relu-out"))
    x_info = helper.make_tensor_value_info("X", T.FLOAT, [2, 8])
    w.append(x_info, w.VALUE_INFO_METADATA, w.entry("npucc.test.value", "input"))
    y_info = helper.make_tensor_value_info("Y", T.FLOAT, [2, 8])
    w.append(y_info, w.VALUE_INFO_METADATA, w.entry("npucc.test.value", "output"))
    graph = helper.make_graph(nodes, "fields", [x_info], [y_info], [weight, bias],
                              value_info=[r_info])
    w.append(graph, w.GRAPH_METADATA, w.entry("npucc.test.graph", "main"))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("local", 1)],
                              functions=[function])
    model.ir_version = 11
    configuration = w.message(w.field(1, b"two"), w.field(2, 2), w.field(3, b"npu:0"),
                              w.field(3, b"npu:1"))
    w.append(model, w.MODEL_CONFIGURATION, configuration)
    helper.set_model_props(model, {"npucc.test.model": "fields"})
    save("fields.onnx", model)
    hexed = lambda b: b.hex()  # noqa: E731
    expected["fields"] = {
        "model": {str(w.MODEL_CONFIGURATION): [hexed(configuration)]},
        "graph": {str(w.GRAPH_METADATA): [hexed(w.entry("npucc.test.graph", "main"))]},
        "function": {str(k): [hexed(v)] for k, v in f_fields.items()},
        "nodes": {name: {str(k): [hexed(v)] for k, v in f.items()}
                  for name, f in node_fields.items()},
        "value_info": {name: {str(w.VALUE_INFO_METADATA):
                              [hexed(w.entry("npucc.test.value", text))]}
                       for name, text in (("R", "relu-out"), ("X", "input"), ("Y", "output"))},
        "tensors": {"W": {str(w.TENSOR_METADATA):
                          [hexed(w.entry("npucc.test.tensor", "weight"))]}},
    }


def overloads_model():
    def scale(overload, body):
        function = helper.make_function("local", "Scale", ["x"], ["y"], body,
                                        [helper.make_opsetid("", 20)], [])
        w.append(function, w.FUNCTION_OVERLOAD, overload)
        return function
    two = helper.make_tensor("two", T.FLOAT, [], [2.0])
    double = scale(b"double", [helper.make_node("Constant", [], ["c"], value=two),
                               helper.make_node("Mul", ["x", "c"], ["y"])])
    rowsum = scale(b"rowsum", [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0,
                                                axes=None)])
    rowsum.node[0].input.append("axes")
    rowsum.node.insert(0, helper.make_node("Constant", [], ["axes"],
                                           value=helper.make_tensor("k", T.INT64, [1], [1])))
    calls = [helper.make_node("Scale", ["X"], ["A"], name="call_double", domain="local"),
             helper.make_node("Scale", ["X"], ["C"], name="call_rowsum", domain="local"),
             helper.make_node("Relu", ["A"], ["Y"], name="relu")]
    w.append(calls[0], w.NODE_OVERLOAD, b"double")
    w.append(calls[1], w.NODE_OVERLOAD, b"rowsum")
    graph = helper.make_graph(calls, "overloads",
                              [helper.make_tensor_value_info("X", T.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("Y", T.FLOAT, [2, 8]),
                               helper.make_tensor_value_info("C", T.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20),
                                                    helper.make_opsetid("local", 1)],
                              functions=[double, rowsum])
    model.ir_version = 10
    save("overloads.onnx", model)
    # The same (domain, name, overload) twice, and a call to an overload nobody defines.
    twice = onnx.ModelProto()
    twice.CopyFrom(model)
    w.append(twice.functions[1], w.FUNCTION_OVERLOAD, b"double")
    save("bad_overload_twice.onnx", twice)
    missing = onnx.ModelProto()
    missing.CopyFrom(model)
    w.append(missing.graph.node[1], w.NODE_OVERLOAD, b"tripled")
    save("bad_overload_missing.onnx", missing)


# name: (data type, bits per element, ops that read it at opset 25 in ORT 1.30's CPU)
TYPES = {
    "float8e4m3fn": (17, 8), "float8e4m3fnuz": (18, 8), "float8e5m2": (19, 8),
    "float8e5m2fnuz": (20, 8), "uint4": (21, 4), "int4": (22, 4), "float4e2m1": (23, 4),
    "float8e8m0": (24, 8), "uint2": (25, 2), "int2": (26, 2),
}


def packed_bytes(data_type, bits, count, seed):
    n = (count * bits + 7) // 8
    data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)
    if bits == 8 and data_type != 24:
        data &= 0x77  # finite float8 values (no NaN or Inf in any of the four kinds)
    if count * bits % 8:
        data[-1] &= (1 << (count * bits % 8)) - 1  # unused high bits of the last byte zero
    return data.tobytes()


def types_model(name, data_type, bits, count, storage, op, twin=False):
    tensor = T(name="w", data_type=data_type, dims=[count])
    data = packed_bytes(data_type, bits, count, data_type * 1000 + count)
    if storage == "raw" or twin:
        tensor.raw_data = data
    else:
        tensor.int32_data.extend(data)
    # IR 10's tensor metadata, through the weight store, external data and the paired writer
    w.append(tensor, w.TENSOR_METADATA, w.entry("npucc.test.tensor", name))
    inits = [tensor]
    if op == "Cast":
        read = helper.make_node("Cast", ["w"], ["v"], name="read", to=T.FLOAT)
    else:
        inits.append(helper.make_tensor("s", T.FLOAT, [], [0.5]))
        read = helper.make_node("DequantizeLinear", ["w", "s"], ["v"], name="read")
    nodes = [read, helper.make_node("Add", ["v", "x"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "types", [helper.make_tensor_value_info("x", T.FLOAT, [count])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [count])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    file = f"types_{name}_{storage}_{count}_{op}.onnx"
    if twin:
        # The same bytes in raw_data: what ORT runs when it cannot read int32_data itself.
        save("twin_" + file, model)
        return
    save(file, model)
    if storage == "int32":
        types_model(name, data_type, bits, count, storage, op, twin=True)
    expected.setdefault("types", {})[file] = {"data_type": data_type, "count": count,
                                              "bytes": len(data), "sha": data.hex()
                                              if len(data) < 64 else None}


def quantize_model(name, data_type, bits):
    """x -> QuantizeLinear to the type -> DequantizeLinear: an activation of the type,
    33 elements, for the memory plan's size of it."""
    count = 33
    zero = T(name="zp", data_type=data_type, dims=[], raw_data=b"\0")
    scale = helper.make_tensor("s", T.FLOAT, [], [0.25])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="quantize"),
             helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"], name="dequantize")]
    graph = helper.make_graph(nodes, "quantize",
                              [helper.make_tensor_value_info("x", T.FLOAT, [count])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [count])],
                              [zero, scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save(f"quant_{name}.onnx", model)
    expected.setdefault("quant", {})[f"quant_{name}.onnx"] = {"q_bytes": (count * bits + 7) // 8}


def dedup_model():
    """Initializers with the same bytes: two int4 [7] (one may go), a uint4 [7] and an int4
    [1, 7], which must stay apart (the bytes mean other values, or another shape)."""
    data = bytes([0xf1, 0x8e, 0x7f, 0x09])
    inits = [T(name="a", data_type=22, dims=[7], raw_data=data),
             T(name="b", data_type=22, dims=[7], raw_data=data),
             T(name="c", data_type=21, dims=[7], raw_data=data),
             T(name="d", data_type=22, dims=[1, 7], raw_data=data)]
    nodes = [helper.make_node("Cast", [t.name], [t.name + "f"], to=T.FLOAT) for t in inits]
    nodes += [helper.make_node("Add", ["af", "bf"], ["ab"]),
              helper.make_node("Mul", ["ab", "cf"], ["abc"]),
              helper.make_node("Sub", ["abc", "df"], ["z"]),
              helper.make_node("Add", ["z", "x"], ["y"])]
    graph = helper.make_graph(nodes, "dedup", [helper.make_tensor_value_info("x", T.FLOAT, [7])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [1, 7])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save("dedup_packed.onnx", model)


def constant_model(name, data_type, bits):
    """A Constant node's value in int32_data (which lift_constants makes an initializer)."""
    count = 7
    value = T(data_type=data_type, dims=[count])
    value.int32_data.extend(packed_bytes(data_type, bits, count, data_type))
    nodes = [helper.make_node("Constant", [], ["c"], value=value),
             helper.make_node("Cast", ["c"], ["v"], to=T.FLOAT),
             helper.make_node("Add", ["v", "x"], ["y"])]
    graph = helper.make_graph(nodes, "constant",
                              [helper.make_tensor_value_info("x", T.FLOAT, [count])],
                              [helper.make_tensor_value_info("y", T.FLOAT, [count])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save(f"const_{name}.onnx", model)


def exported_models(folder):
    for file in sorted(os.listdir(folder)):
        if not file.endswith(".onnx"):
            continue
        model = onnx.load(os.path.join(folder, file))
        model.ir_version = 10
        for node in model.graph.node:
            w.append(node, w.NODE_METADATA, w.entry("pkg.torch.onnx.stack_trace", "at " + node.name))
            w.append(node, w.NODE_METADATA, w.entry("namespace", node.op_type))
        w.append(model.graph, w.GRAPH_METADATA, w.entry("pkg.torch.onnx.exporter", "dynamo"))
        save("exported_" + file, model)


def bad_models():
    tensor = T(name="w4", data_type=22, dims=[4])
    tensor.int32_data.extend([0x21, 300])
    graph = helper.make_graph([helper.make_node("Cast", ["w4"], ["y"], to=T.FLOAT)], "bad", [],
                              [helper.make_tensor_value_info("y", T.FLOAT, [4])], [tensor])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save("bad_int32_range.onnx", model)
    values = T(name="sv", data_type=22, dims=[1], raw_data=b"\x07")
    indices = helper.make_tensor("si", T.INT64, [1], [3])
    sparse = helper.make_sparse_tensor(values, indices, [8])
    graph = helper.make_graph([helper.make_node("Constant", [], ["c"], sparse_value=sparse),
                               helper.make_node("Cast", ["c"], ["y"], to=T.FLOAT)], "bad", [],
                              [helper.make_tensor_value_info("y", T.FLOAT, [8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save("bad_sparse_int4.onnx", model)
    f8 = T(name="wf", data_type=17, dims=[2])
    f8.float_data.extend([1.0, 2.0])
    graph = helper.make_graph([helper.make_node("Cast", ["wf"], ["y"], to=T.FLOAT)], "bad", [],
                              [helper.make_tensor_value_info("y", T.FLOAT, [2])], [f8])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    save("bad_float_data.onnx", model)


os.makedirs(OUT, exist_ok=True)
fields_model()
overloads_model()
for type_name, (dt, bits) in TYPES.items():
    ops = ["Cast"] + (["DequantizeLinear"] if dt != 24 else [])
    big = 16384 * 8 // bits + 1  # one element past the weight store's 16 KiB
    sizes = [(5, "raw"), (7, "int32"), (big, "raw"), (big + 2, "int32")]
    if type_name in ("int4", "float8e4m3fn"):
        # past 1 MiB: high and low share the weight, written once for both (GraphPairWriter)
        sizes.append(((1 << 20) * 8 // bits + 1, "raw"))
    for count, storage in sizes:
        for op in ops:
            types_model(type_name, dt, bits, count, storage, op)
for type_name, (dt, bits) in TYPES.items():
    if dt != 24:  # QuantizeLinear has no float8e8m0
        quantize_model(type_name, dt, bits)
for type_name in ("float8e5m2", "int4", "uint2"):
    constant_model(type_name, *TYPES[type_name])
dedup_model()
if len(sys.argv) > 2:
    exported_models(sys.argv[2])
bad_models()
with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
