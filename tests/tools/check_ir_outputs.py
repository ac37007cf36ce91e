#!/usr/bin/python3
"""Checks what npucc wrote for the models of make_ir_models.py, by decoding the protobuf
(ONNX 1.12's classes, the IR 9..13 fields read as unknown fields by google.protobuf).

    check_ir_outputs.py fields ORIGINAL GRAPH...     every new field present, byte for byte
    check_ir_outputs.py types ORIGINAL GRAPH...      the initializer's bytes, inline or external
    check_ir_outputs.py plan MANIFEST Q_BYTES        the memory plan's size of the value "q"
    check_ir_outputs.py nodes ORIGINAL GRAPH...      each node left of the original keeps its
                                                     metadata_props; so does the graph

One "FAIL ..." line per problem; exit 1 if any.
"""
import os
import sys

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ir_wire as w  # noqa: E402

failures = []


def fail(message):
    failures.append(message)
    print("FAIL " + message)


def load(path):
    model = onnx.ModelProto()
    with open(path, "rb") as f:
        model.ParseFromString(f.read())
    return model


def same(what, got, want):
    if got != want:
        fail(f"{what}: {got!r} != {want!r}")


def spec_names(configuration):
    """Tensor names of a NodeDeviceConfigurationProto's sharding specs, and the
    configuration with each spec's tensor_name taken out (what a rename must not touch)."""
    names, rest = [], []
    for number, payload in parse_unknown(configuration):
        if number == 2:
            spec = parse_unknown(payload)
            names += [p.decode() for n, p in spec if n == 1]
            rest.append([(n, p) for n, p in spec if n != 1])
        else:
            rest.append((number, payload))
    return names, rest


def parse_unknown(payload):
    """(field number, payload) pairs of a message no class here describes
    (DeviceConfiguration and ShardingSpec are not in ONNX 1.12), by protobuf's varint decoder."""
    return list(_walk(payload))


def _walk(payload):
    from google.protobuf.internal import decoder
    pos = 0
    while pos < len(payload):
        tag, pos = decoder._DecodeVarint(payload, pos)
        number, kind = tag >> 3, tag & 7
        if kind == 0:
            value, pos = decoder._DecodeVarint(payload, pos)
        elif kind == 2:
            size, pos = decoder._DecodeVarint(payload, pos)
            value, pos = payload[pos:pos + size], pos + size
        else:
            raise ValueError(f"wire type {kind} in a device configuration")
        yield number, value


def check_fields(original_path, graphs):
    import json
    expected = json.load(open(os.path.join(os.path.dirname(original_path), "expected.json")))
    expected = expected["fields"]
    original = load(original_path)
    want = lambda table: {int(k): [bytes.fromhex(x) for x in v] for k, v in table.items()}  # noqa
    for path in graphs:
        label = os.path.relpath(path)
        model = load(path)
        same(f"{label}: ir_version", model.ir_version, original.ir_version)
        same(f"{label}: opset_import", [(o.domain, o.version) for o in model.opset_import],
             [(o.domain, o.version) for o in original.opset_import])
        for number, payloads in want(expected["model"]).items():
            same(f"{label}: ModelProto field {number}", w.unknown(model, number), payloads)
        for number, payloads in want(expected["graph"]).items():
            same(f"{label}: GraphProto field {number}", w.unknown(model.graph, number), payloads)
        same(f"{label}: functions", [(f.domain, f.name, list(f.attribute)) for f in model.functions],
             [(f.domain, f.name, list(f.attribute)) for f in original.functions])
        for function, source in zip(model.functions, original.functions):
            same(f"{label}: function {function.name}", function.SerializeToString(),
                 source.SerializeToString())
        for number, payloads in want(expected["function"]).items():
            same(f"{label}: FunctionProto field {number}", w.unknown(model.functions[0], number),
                 payloads)
        nodes = {n.name: n for n in model.graph.node}
        for name, table in expected["nodes"].items():
            node = nodes.get(name)
            if node is None:
                fail(f"{label}: node {name} is missing")
                continue
            for number, payloads in want(table).items():
                got = w.unknown(node, number)
                if number != w.NODE_DEVICE_CONFIGURATIONS:
                    same(f"{label}: node {name} field {number}", got, payloads)
                    continue
                same(f"{label}: node {name} device configurations", len(got), len(payloads))
                for g, p in zip(got, payloads):
                    names, rest = spec_names(g)
                    _, want_rest = spec_names(p)
                    same(f"{label}: node {name} device configuration (but tensor names)",
                         rest, want_rest)
                    io = set(node.input) | set(node.output)
                    for tensor in names:
                        if tensor not in io:
                            fail(f"{label}: node {name} shards {tensor}, not its input or output")
                    if label.endswith("high.onnx"):
                        same(f"{label}: node {name} device configuration", g, p)
        scale = nodes.get("scale0")
        if scale is not None:
            same(f"{label}: scale0 attributes (the default is the function's)",
                 [a.name for a in scale.attribute], [])
            same(f"{label}: scale0 op_type", scale.op_type, "ScaleAdd")
        for name, table in expected["value_info"].items():
            infos = [v for v in list(model.graph.input) + list(model.graph.output) +
                     list(model.graph.value_info) if v.name == name]
            for number, payloads in want(table).items():
                same(f"{label}: value_info {name} field {number}",
                     [p for v in infos for p in w.unknown(v, number)], payloads)
        for name, table in expected["tensors"].items():
            # with --low-precision-weights the emulation graph renames the stored low
            # weight (W_emu_low) and casts it back to W: the metadata stays with the tensor
            tensors = [t for t in model.graph.initializer
                       if t.name == name or t.name == name + "_emu_low"]
            for number, payloads in want(table).items():
                same(f"{label}: initializer {name} field {number}",
                     [p for t in tensors for p in w.unknown(t, number)], payloads)


BITS = {17: 8, 18: 8, 19: 8, 20: 8, 21: 4, 22: 4, 23: 4, 24: 8, 25: 2, 26: 2}


def tensor_bytes(tensor, folder, label):
    if tensor.data_location == onnx.TensorProto.EXTERNAL:
        info = {e.key: e.value for e in tensor.external_data}
        offset, length = int(info.get("offset", 0)), int(info["length"])
        if offset % 64:
            fail(f"{label}: {tensor.name} external data at offset {offset}, not 64-aligned")
        with open(os.path.join(folder, info["location"]), "rb") as f:
            f.seek(offset)
            data = f.read(length)
        same(f"{label}: {tensor.name} external length", len(data), length)
        return data
    if tensor.int32_data:
        return bytes(tensor.int32_data)
    return tensor.raw_data


def check_types(original_path, graphs):
    original = load(original_path)
    source = next(t for t in original.graph.initializer if t.name == "w")
    want = tensor_bytes(source, os.path.dirname(original_path), original_path)
    count = source.dims[0]
    bits = BITS[source.data_type]
    same(f"{original_path}: packed size", len(want), (count * bits + 7) // 8)
    for path in graphs:
        label = os.path.relpath(path)
        model = load(path)
        same(f"{label}: ir_version", model.ir_version, original.ir_version)
        tensors = [t for t in model.graph.initializer if t.name == "w"]
        if len(tensors) != 1:
            fail(f"{label}: {len(tensors)} initializers named w")
            continue
        tensor = tensors[0]
        same(f"{label}: w data_type", tensor.data_type, source.data_type)
        same(f"{label}: w dims", list(tensor.dims), list(source.dims))
        same(f"{label}: w metadata_props", w.unknown(tensor, w.TENSOR_METADATA),
             w.unknown(source, w.TENSOR_METADATA))
        same(f"{label}: w stored in", "int32_data" if tensor.int32_data else "raw_data/external",
             "raw_data/external")
        got = tensor_bytes(tensor, os.path.dirname(path), label)
        if got != want:
            fail(f"{label}: w holds {len(got)} bytes, not the original {len(want)}"
                 + (" (same length, other bytes)" if len(got) == len(want) else ""))


def check_plan(manifest_path, q_bytes):
    import json
    plan = json.load(open(manifest_path))["memory_plan"]
    sizes = {t["name"]: t["bytes"] for t in plan.get("tensors", [])}
    same(f"{manifest_path}: memory plan bytes of q", sizes.get("q"), int(q_bytes))


def check_nodes(original_path, graphs):
    original = load(original_path)
    metadata = {n.name: w.unknown(n, w.NODE_METADATA) for n in original.graph.node if n.name}
    for path in graphs:
        label = os.path.relpath(path)
        model = load(path)
        same(f"{label}: graph metadata_props", w.unknown(model.graph, w.GRAPH_METADATA),
             w.unknown(original.graph, w.GRAPH_METADATA))
        kept = 0
        for node in model.graph.node:
            if node.name in metadata:
                same(f"{label}: node {node.name} metadata_props",
                     w.unknown(node, w.NODE_METADATA), metadata[node.name])
                kept += 1
        if kept == 0:
            fail(f"{label}: no node of the original is left to check")


if __name__ == "__main__":
    kind, first, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    {"fields": check_fields, "types": check_types,
     "plan": lambda a, b: check_plan(a, b[0]), "nodes": check_nodes}[kind](first, rest)
    sys.exit(1 if failures else 0)
