"""The emulation of a float16/bfloat16 graph in float32 (issue 45, the judge).

Every value the graph stores in float16 or bfloat16 is rounded to that type and carried in
float32: each low initializer and Constant becomes its float32 value (exact), each node
output the graph types as low is followed by a Cast to the low type and back, and every
low type becomes float32. The ops then run in float32, so overflow (to infinity) and
underflow (to zero or a subnormal) show as the stored type would show them, where ONNX
Runtime's CPU kernels for float16 compute in float32 and hide them.

ONNX Runtime's Cast does the rounding. check_rounding() compares it with NumPy (float16)
and ml_dtypes (bfloat16) on 100,000 values, ties, overflow and subnormals included, before
anything is judged with it: the judge's rounding is checked by code we did not write.
"""

import copy

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LOW = {TensorProto.FLOAT16: np.float16, TensorProto.BFLOAT16: ml_dtypes.bfloat16}
# Ops whose attribute, not their inputs, sets the output type.
DTYPE_ATTRIBUTES = {"Cast": "to", "RandomNormal": "dtype", "RandomUniform": "dtype",
                    "RandomNormalLike": "dtype", "RandomUniformLike": "dtype", "EyeLike": "dtype",
                    "Multinomial": "dtype", "Bernoulli": "dtype"}


def typed(model):
    """The model with every value typed that ONNX's shape inference can type (a copy)."""
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # an ill-typed graph keeps what its own value_info says
        return copy.deepcopy(model)


def scope_types(graph, outer):
    """The element type of each value `graph` sees: its own, then the enclosing graphs'.
    Scoped, not one table per model: sibling If branches reuse names (silero_vad's do) for
    values of different types."""
    types = dict(outer)
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        if value.type.HasField("tensor_type"):
            types[value.name] = value.type.tensor_type.elem_type
    for init in graph.initializer:
        types[init.name] = init.data_type
    return types


def subgraphs_of(attr):
    if attr.type == onnx.AttributeProto.GRAPH:
        return [attr.g]
    if attr.type == onnx.AttributeProto.GRAPHS:
        return list(attr.graphs)
    return []


def float32_tensor(tensor):
    """A low tensor as the float32 tensor of the same values (exact: every low value is a
    float32 value)."""
    values = numpy_helper.to_array(tensor).astype(np.float32)
    out = numpy_helper.from_array(values, tensor.name)
    return out


def retype(values):
    for value in values:
        if value.type.HasField("tensor_type") and value.type.tensor_type.elem_type in LOW:
            value.type.tensor_type.elem_type = TensorProto.FLOAT


def rounding_nodes(raw, name, low):
    return [helper.make_node("Cast", [raw], [name + "__emu_low"], to=low, name=name + "__emu_round"),
            helper.make_node("Cast", [name + "__emu_low"], [name], to=TensorProto.FLOAT,
                             name=name + "__emu_back")]


def emulate_node(node, types):
    """The node rewritten to float32, then the rounding of each output the graph stores
    low. Constant values are already low values: no rounding."""
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type in LOW:
            attr.t.CopyFrom(float32_tensor(attr.t))
        if attr.name == DTYPE_ATTRIBUTES.get(node.op_type) and attr.i in LOW:
            attr.i = TensorProto.FLOAT
        for sub in subgraphs_of(attr):
            emulate_graph(sub, types)
    if node.op_type in ("Constant", "ConstantOfShape"):
        return [node]
    out = [node]
    for k, name in enumerate(node.output):
        low = types.get(name)
        if name and low in LOW:
            raw = name + "__emu_raw"
            node.output[k] = raw
            out.extend(rounding_nodes(raw, name, low))
    return out


def emulate_graph(graph, outer):
    types = scope_types(graph, outer)
    for k, init in enumerate(graph.initializer):
        if init.data_type in LOW:
            graph.initializer[k].CopyFrom(float32_tensor(init))
    retype(graph.input)
    retype(graph.output)
    retype(graph.value_info)
    nodes = []
    for node in graph.node:
        nodes.extend(emulate_node(node, types))
    del graph.node[:]
    graph.node.extend(nodes)


def emulation_model(model):
    """The float32 emulation of `model` (a copy)."""
    emulated = typed(model)
    emulate_graph(emulated.graph, {})
    # Shape inference's value_info stays (retyped): it types what ONNX Runtime would infer.
    # Cast to bfloat16 needs opset 13; every graph that stores bfloat16 already has it.
    return emulated


def check_rounding(ort):
    """Refuses to judge when ONNX Runtime's Cast rounds otherwise than NumPy/ml_dtypes."""
    rng = np.random.default_rng(0)
    scales = np.float32(10.0) ** rng.integers(-12, 12, 100000).astype(np.float32)
    special = [65504, 65519, 65520, 70000, 1e-7, 3e-8, 2.98e-8, -1e-9, 3.4e38, 1.00390625, 1.01171875]
    x = np.concatenate([rng.standard_normal(100000).astype(np.float32) * scales,
                        np.array(special, np.float32)])
    for low, numpy_type in LOW.items():
        graph = helper.make_graph(
            rounding_nodes("x", "y", low), "round",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, {"x": x})[0]
        with np.errstate(over="ignore"):
            want = x.astype(numpy_type).astype(np.float32)
        if not np.array_equal(got, want, equal_nan=True):
            raise SystemExit(f"peers: ONNX Runtime's Cast to {TensorProto.DataType.Name(low)} rounds "
                             f"{int(np.sum(got != want))} values unlike NumPy/ml_dtypes: no judge")
