#!/usr/bin/python3
"""Writes the modern-opset test corpus (issue 17): at least one small model per ai.onnx operator
version introduced in opsets 18 to 26, models with the element types newer than ONNX 1.12,
IR 9/10 function features, weights in external data, models nobody can know (which npucc must
refuse), whole models written the way current exporters write them and, with --testdata, npucc's
bundled real models raised to opset 22 / IR 10.

    /usr/bin/python3 tests/tools/make_opset_corpus.py OUTDIR [--only REGEX] [--testdata DIR]
                                                     [--check-changelog FILE]

OUTDIR gets NAME.onnx per model (NAME.data for external data) and cases.json: per model its
input shapes and value ranges, the operator version it covers, the element types newer than
ONNX 1.12 it holds, whether npucc may or must refuse it (and what the refusal must name), and
what ONNX Runtime 1.30 is expected to do with it on the CPU ("run", "load": valid but a kernel is
missing, or "skip" with ORT's own error). The expectations were measured with
tests/oracle/run_corpus.js --probe, not guessed; run_corpus.js checks them on every run.

Every operator version listed in opset_corpus_sections.txt (the 188 of opsets 18 to 26) must have
a model, or nothing is written. --check-changelog FILE: exits 1 unless every `### Op-N` section of
FILE (the ONNX Changelog excerpt for opsets 18 to 26) has a model here, and lists any that do not.

Built with onnx 1.12's helper, which writes any op and opset when its checker is not called. The
fields ONNX 1.12's protobuf lacks (FunctionProto.attribute_proto = 11, value_info = 12,
overload = 13, NodeProto.overload = 8) are appended as encoded protobuf fields and checked with a
wire-format walk of the written file. Float values are seeded, so a run writes the same bytes.
Each float32 output of the per-operator models comes from a final Add(y, y): npucc keeps the
producer of a graph output in float32, and the op under test should be one its precision rewrite
may lower.
"""

import argparse
import json
import os
import re
import struct
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64
I32 = TensorProto.INT32
U8 = TensorProto.UINT8
I8 = TensorProto.INT8
BOOL = TensorProto.BOOL
STR = TensorProto.STRING
F16 = TensorProto.FLOAT16
BF16 = TensorProto.BFLOAT16

# IR version of the ONNX release that introduced each opset (versions-table.md).
IR_OF_OPSET = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13}

# Element types newer than ONNX 1.12: TensorProto.DataType value, bits per element, the opset
# whose operators first accept them (onnx.in.proto; IR 9: float8, 10: 4-bit ints, 11: float4,
# 12: float8e8m0, 13: 2-bit ints).
NEW_TYPES = {
    'float8e4m3fn': (17, 8, 19), 'float8e4m3fnuz': (18, 8, 19),
    'float8e5m2': (19, 8, 19), 'float8e5m2fnuz': (20, 8, 19),
    'uint4': (21, 4, 21), 'int4': (22, 4, 21), 'float4e2m1': (23, 4, 23),
    'float8e8m0': (24, 8, 24), 'uint2': (25, 2, 25), 'int2': (26, 2, 25),
}
TYPE_NAME = {code: name for name, (code, _, _) in NEW_TYPES.items()}
TYPE_NAME[BF16] = 'bfloat16'

# What ONNX Runtime 1.30 (CPU) does with the models it cannot run, measured with
# `node tests/oracle/run_corpus.js --probe OUTDIR` (errors quoted as ORT gives them, cut at the
# first line). Every model not listed runs at all four optimisation levels.
# "load": ORT accepts the model (its checker and type inference pass) and only lacks a CPU kernel;
# "skip": ORT rejects the model itself.
EXPECT = {
    'ImageDecoder-20': ('load', "Could not find an implementation for ImageDecoder(20) node with name ''"),
    'QLinearMatMul-21-float8e4m3fn': ('load', "Could not find an implementation for QLinearMatMul(21) node with name ''"),
    'Bernoulli-22': ('load', "Could not find an implementation for RandomUniformLike(22) node with name ''"),
    'GlobalLpPool-22': ('load', "Could not find an implementation for GlobalLpPool(22) node with name ''"),
    'MaxRoiPool-22': ('load', "Could not find an implementation for MaxRoiPool(22) node with name ''"),
    'Multinomial-22': ('load', "Could not find an implementation for Multinomial(22) node with name ''"),
    'RandomNormal-22': ('load', "Could not find an implementation for RandomNormal(22) node with name ''"),
    'RandomNormalLike-22': ('load', "Could not find an implementation for RandomNormalLike(22) node with name ''"),
    'RandomUniform-22': ('load', "Could not find an implementation for RandomUniform(22) node with name ''"),
    'RandomUniformLike-22': ('load', "Could not find an implementation for RandomUniformLike(22) node with name ''"),
    'RoiAlign-22': ('load', "Could not find an implementation for RoiAlign(22) node with name ''"),
    'Conv-22-bfloat16': ('load', "Could not find an implementation for Conv(22) node with name ''"),
    'MaxPool-22-bfloat16': ('load', "Could not find an implementation for MaxPool(22) node with name ''"),
    'InstanceNormalization-22-bfloat16': ('load', "Could not find an implementation for InstanceNormalization(22) node with name ''"),
    'Elu-22-bfloat16': ('load', "Could not find an implementation for Elu(22) node with name ''"),
    'TopK-24-bfloat16': ('load', "Could not find an implementation for TopK(24) node with name ''"),
    'Cast-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Cast-23-float4e2m1-initializer': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Constant-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'CastLike-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'QuantizeLinear-23-float4e2m1': ('load', "Could not find an implementation for QuantizeLinear(23) node with name ''"),
    'DequantizeLinear-23-float4e2m1': ('load', "Could not find an implementation for DequantizeLinear(23) node with name ''"),
    'DequantizeLinear-24-float8e8m0-scale': ('load', "Could not find an implementation for DequantizeLinear(24) node with name ''"),
    'ConstantOfShape-21-int4': ('load', "Could not find an implementation for ConstantOfShape(21) node with name ''"),
    'ConstantOfShape-23-float4e2m1': ('load', "Could not find an implementation for ConstantOfShape(23) node with name ''"),
    'ConstantOfShape-24-float8e8m0': ('load', "Could not find an implementation for ConstantOfShape(24) node with name ''"),
    'ConstantOfShape-25-uint2': ('load', "Could not find an implementation for ConstantOfShape(25) node with name ''"),
    'Identity-21-uint4': ('load', "Could not find an implementation for Identity(21) node with name ''"),
    'Identity-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Identity-25-int2': ('load', "Could not find an implementation for Identity(25) node with name ''"),
    # the data-movement ops carrying new element types (new_type_data_movement)
    'Reshape-19-float8e4m3fn': ('load', "Could not find an implementation for Reshape(19) node with name ''"),
    'Shape-19-float8e4m3fn': ('load', "Could not find an implementation for Shape(19) node with name ''"),
    'Size-19-float8e4m3fn': ('load', "Could not find an implementation for Size(19) node with name ''"),
    'Flatten-21-int4': ('load', "Could not find an implementation for Flatten(21) node with name ''"),
    'If-21-int4': ('load', "Could not find an implementation for If(21) node with name ''"),
    'Loop-21-int4': ('load', "Could not find an implementation for Loop(21) node with name ''"),
    'Pad-21-int4': ('load', "Could not find an implementation for Pad(21) node with name ''"),
    'Reshape-21-int4': ('load', "Could not find an implementation for Reshape(21) node with name ''"),
    'Scan-21-int4': ('load', "Could not find an implementation for Scan(21) node with name ''"),
    'Shape-21-int4': ('load', "Could not find an implementation for Shape(21) node with name ''"),
    'Size-21-int4': ('load', "Could not find an implementation for Size(21) node with name ''"),
    'Squeeze-21-int4': ('load', "Could not find an implementation for Squeeze(21) node with name ''"),
    'Unsqueeze-21-int4': ('load', "Could not find an implementation for Unsqueeze(21) node with name ''"),
    'Flatten-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'If-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Loop-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Pad-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Reshape-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Scan-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Shape-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Size-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Squeeze-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Transpose-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Unsqueeze-23-float4e2m1': ('load', "Could not find an implementation for Cast(23) node with name ''"),
    'Flatten-24-float8e8m0': ('load', "Could not find an implementation for Flatten(24) node with name ''"),
    'If-24-float8e8m0': ('load', "Could not find an implementation for If(24) node with name ''"),
    'Loop-24-float8e8m0': ('load', "Could not find an implementation for Loop(24) node with name ''"),
    'Pad-24-float8e8m0': ('load', "Could not find an implementation for Pad(24) node with name ''"),
    'Reshape-24-float8e8m0': ('load', "Could not find an implementation for Reshape(24) node with name ''"),
    'Scan-24-float8e8m0': ('load', "Could not find an implementation for Scan(24) node with name ''"),
    'Shape-24-float8e8m0': ('load', "Could not find an implementation for Shape(24) node with name ''"),
    'Size-24-float8e8m0': ('load', "Could not find an implementation for Size(24) node with name ''"),
    'Squeeze-24-float8e8m0': ('load', "Could not find an implementation for Squeeze(24) node with name ''"),
    'Transpose-24-float8e8m0': ('load', "Could not find an implementation for Transpose(24) node with name ''"),
    'Unsqueeze-24-float8e8m0': ('load', "Could not find an implementation for Unsqueeze(24) node with name ''"),
    'Flatten-25-int2': ('load', "Could not find an implementation for Flatten(25) node with name ''"),
    'If-25-int2': ('load', "Could not find an implementation for If(25) node with name ''"),
    'Loop-25-int2': ('load', "Could not find an implementation for Loop(25) node with name ''"),
    'Pad-25-int2': ('load', "Could not find an implementation for Pad(25) node with name ''"),
    'Reshape-25-int2': ('load', "Could not find an implementation for Reshape(25) node with name ''"),
    'Scan-25-int2': ('load', "Could not find an implementation for Scan(25) node with name ''"),
    'Shape-25-int2': ('load', "Could not find an implementation for Shape(25) node with name ''"),
    'Size-25-int2': ('load', "Could not find an implementation for Size(25) node with name ''"),
    'Squeeze-25-int2': ('load', "Could not find an implementation for Squeeze(25) node with name ''"),
    'Unsqueeze-25-int2': ('load', "Could not find an implementation for Unsqueeze(25) node with name ''"),
    # ORT's Attention schema lacks the attributes opset 25 added
    'Attention-25': ('skip', 'Error Unrecognized attribute: left_window_size for operator Attention'),
    # ORT's ConstantOfShape kernel has no float8 values (17 = FLOAT8E4M3FN)
    'ConstantOfShape-20-float8e4m3fn': ('skip', 'Unsupported value attribute datatype: 17'),
    # what no one can know: refused by ORT as by npucc
    'opset-27-beyond-26': ('skip', 'Current official support for domain ai.onnx is till opset 26.'),
    'IR-14-beyond-13': ('skip', 'Unsupported model IR version: 14, max supported IR version: 13'),
    'element-type-27-unknown': ('skip', "This is an invalid model. Tensor 'W' does not have valid data type."),
    'NoSuchOp-26-unknown-op': ('skip', 'Error No Op registered for NoSuchOp with domain_version of 26'),
}

RNG = np.random.default_rng(17)
CASES = []

# The output shapes each model declares (ONNX's checker wants a shape on every graph output, as
# exporters write them): opset_corpus_outputs.json, measured with ORT and by hand (its _doc says
# how). A model missing there gets type-only outputs and a warning.
OUTPUT_SHAPES = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            'opset_corpus_outputs.json'), encoding='utf-8'))


def rand(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def i64(name, values):
    return init(name, np.asarray(values, dtype=np.int64))


def f32(name, values):
    return init(name, np.asarray(values, dtype=np.float32))


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


# --- element types newer than ONNX 1.12: bit patterns and packing (onnx.in.proto) -----------

# Bit patterns of finite, moderate values for each type (a cast back to float gives numbers, not
# NaN/Inf): float8 codes around 1.0 for each bias, e8m0 exponents near 2^0, any 4/2-bit code.
def new_type_codes(type_name, count):
    if type_name.startswith('float8e4m3') or type_name.startswith('float8e5m2'):
        pool = [0x30, 0x38, 0x3C, 0x40, 0x44, 0xB8, 0xC0, 0x20, 0x34, 0xBC]
    elif type_name == 'float8e8m0':
        pool = [124, 125, 126, 127, 128, 129, 130]
    elif NEW_TYPES[type_name][1] == 4:
        pool = list(range(16))
    else:
        pool = list(range(4))
    return [pool[int(i)] for i in RNG.integers(0, len(pool), size=count)]


def pack(codes, bits):
    if bits == 8:
        return bytes(codes)
    per = 8 // bits
    out = bytearray((len(codes) + per - 1) // per)
    for i, c in enumerate(codes):  # first element in the least significant bits
        out[i // per] |= (c & ((1 << bits) - 1)) << (bits * (i % per))
    return bytes(out)


def new_type_tensor(name, type_name, dims, codes=None):
    code, bits, _ = NEW_TYPES[type_name]
    count = int(np.prod(dims)) if dims else 1
    t = TensorProto()
    t.name = name
    t.data_type = code
    t.dims.extend(dims)
    t.raw_data = pack(codes if codes is not None else new_type_codes(type_name, count), bits)
    return t


def elem(type_name):
    return NEW_TYPES[type_name][0] if type_name in NEW_TYPES else {'bfloat16': BF16}[type_name]


# --- protobuf wire format, for the IR 9/10 fields ONNX 1.12's protobuf lacks ---------------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def len_field(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def wire_fields(data):
    """(field number, wire type, value) of each top-level field of an encoded message."""
    out = []
    i = 0
    while i < len(data):
        key = 0
        shift = 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        number, wire = key >> 3, key & 7
        if wire == 0:
            v = 0
            shift = 0
            while True:
                b = data[i]
                i += 1
                v |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
        elif wire == 2:
            n = 0
            shift = 0
            while True:
                b = data[i]
                i += 1
                n |= (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
            v = data[i:i + n]
            i += n
        elif wire == 1:
            v = data[i:i + 8]
            i += 8
        elif wire == 5:
            v = data[i:i + 4]
            i += 4
        else:
            raise ValueError(f'wire type {wire}')
        out.append((number, wire, v))
    return out


def with_raw_fields(message, raw):
    """A copy of `message` with encoded fields appended (kept by protobuf as unknown fields)."""
    return type(message).FromString(message.SerializeToString() + raw)


# --- the registry -----------------------------------------------------------------------------

def add(name, section, opset, nodes, inputs, outputs, inits=(), *, ranges=None, values=None,
        ir=None, feature='', functions=(), extra_opsets=(), new_types=(), value_info=(),
        check=None, bfloat16=False, refuse=None, external=(), feed_shapes=None, out_shapes=None,
        tail=True):
    """One model. inputs: (name, elem type, shape); outputs: (name, elem type).
    refuse: ('must', names) for a model npucc cannot know (it must refuse it in one line holding one
    of the names); by default a model with new element types may be refused naming one of them.
    external: initializers written to NAME.data (external data). feed_shapes: input shapes for ORT
    where the declared ones are symbolic. out_shapes: the output shapes, where not in
    opset_corpus_outputs.json. tail: each float32 output comes from a final Add(y, y), so that
    the op under test does not produce a graph output itself (npucc keeps a graph output's
    producer in float32: without the Add, a one-op model gives its precision rewrite nothing)."""
    if tail:
        nodes = with_tail(list(nodes), [n for n, t in outputs if t == F])
    shapes = out_shapes or OUTPUT_SHAPES.get(name)
    if shapes is None:
        print(f'warning: {name}: no output shapes in opset_corpus_outputs.json (measure them with '
              f'run_corpus.js --probe --json)', file=sys.stderr)
        shapes = {}
    graph = helper.make_graph(nodes, name.replace('-', '_'),
                              [vi(n, t, s) for n, t, s in inputs],
                              [helper.make_tensor_value_info(n, t, shapes.get(n)) for n, t in outputs],
                              list(inits), value_info=list(value_info))
    opsets = [helper.make_opsetid('', opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name='npucc-opset-corpus')
    model.ir_version = ir if ir is not None else IR_OF_OPSET[opset]
    model.doc_string = feature
    for f in functions:
        model.functions.append(f)
    if refuse is None:
        refuse = ('may', sorted(set(new_types))) if new_types else ('never', [])
    CASES.append({'name': name, 'section': section, 'opset': opset, 'ir': model.ir_version,
                  'model': model, 'feature': feature, 'refuse': refuse, 'external': list(external),
                  'explicit_shapes': out_shapes is not None,
                  'shapes': feed_shapes or {n: list(s) for n, _, s in inputs},
                  'ranges': ranges or {}, 'values': values or {},
                  'new_types': sorted(set(new_types)), 'bfloat16': bfloat16, 'check': check})


def with_tail(nodes, names):
    """Renames each of `names` to NAME.op where it is made and used, and adds Add(NAME.op,
    NAME.op) -> NAME."""
    def rename(graph_nodes, old, new):
        for n in graph_nodes:
            n.input[:] = [new if i == old else i for i in n.input]
            n.output[:] = [new if o == old else o for o in n.output]
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    rename(a.g.node, old, new)
    for name in names:
        rename(nodes, name, f'{name}.op')
        nodes.append(node('Add', [f'{name}.op', f'{name}.op'], [name]))
    return nodes


def unary(op, since, shape=(2, 3, 4), lo=-1.0, hi=1.0, suffix='', opset=None, **attrs):
    name = f'{op}-{since}{suffix}'
    add(name, f'{op}-{since}', opset or since, [node(op, ['X'], ['Y'], **attrs)],
        [('X', F, shape)], [('Y', F)], ranges={'X': [lo, hi]},
        feature=f'{op} on float32' + (f' {attrs}' if attrs else ''))


# --- opset 18 ---------------------------------------------------------------------------------

def opset18():
    for op in ['BitwiseAnd', 'BitwiseOr', 'BitwiseXor']:
        add(f'{op}-18', f'{op}-18', 18, [node(op, ['A', 'B'], ['C'])],
            [('A', I32, [2, 3, 4]), ('B', I32, [3, 4])], [('C', I32)],
            ranges={'A': [-1000, 1000], 'B': [0, 255]}, feature=f'{op} on int32 with broadcasting')
    add('BitwiseAnd-18-uint8', 'BitwiseAnd-18', 18, [node('BitwiseAnd', ['A', 'B'], ['C'])],
        [('A', U8, [4, 4]), ('B', U8, [4, 4])], [('C', U8)], ranges={'A': [0, 255], 'B': [0, 255]},
        feature='BitwiseAnd on uint8')
    add('BitwiseNot-18', 'BitwiseNot-18', 18, [node('BitwiseNot', ['A'], ['C'])],
        [('A', I32, [3, 5])], [('C', I32)], ranges={'A': [-1000, 1000]}, feature='BitwiseNot on int32')
    add('CenterCropPad-18', 'CenterCropPad-18', 18,
        [node('CenterCropPad', ['X', 'shape'], ['Y'], axes=[1, 2])],
        [('X', F, [2, 5, 7])], [('Y', F)], [i64('shape', [3, 10])],
        feature='CenterCropPad: crop axis 1 (5 -> 3), pad axis 2 (7 -> 10), axes attribute')
    add('CenterCropPad-18-all-axes', 'CenterCropPad-18', 18,
        [node('CenterCropPad', ['X', 'shape'], ['Y'])],
        [('X', F, [4, 6])], [('Y', F)], [i64('shape', [6, 3])],
        feature='CenterCropPad without axes: pad axis 0, crop axis 1')
    add('Col2Im-18', 'Col2Im-18', 18,
        [node('Col2Im', ['X', 'image_shape', 'block_shape'], ['Y'])],
        [('X', F, [1, 8, 12])], [('Y', F)], [i64('image_shape', [4, 5]), i64('block_shape', [2, 2])],
        feature='Col2Im: 2 channels, 2x2 blocks into a 4x5 image')
    add('Col2Im-18-strided', 'Col2Im-18', 18,
        [node('Col2Im', ['X', 'image_shape', 'block_shape'], ['Y'], strides=[2, 2], pads=[1, 1, 1, 1],
              dilations=[1, 1])],
        [('X', F, [2, 3 * 4, 9])], [('Y', F)], [i64('image_shape', [5, 5]), i64('block_shape', [2, 2])],
        feature='Col2Im with strides and pads')
    add('GroupNormalization-18', 'GroupNormalization-18', 18,
        [node('GroupNormalization', ['X', 'scale', 'bias'], ['Y'], num_groups=3, epsilon=1e-5)],
        [('X', F, [2, 6, 3, 3])], [('Y', F)], [f32('scale', rand(3, lo=0.5, hi=1.5)), f32('bias', rand(3))],
        refuse=('may', ['GroupNormalization']),
        feature='GroupNormalization-18 (deprecated): scale and bias per group. ONNX marks this version '
                'deprecated (its checker rejects it) while ORT runs it: a one-line refusal naming the op is '
                'accepted')
    add('LpPool-18', 'LpPool-18', 18,
        [node('LpPool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], p=2, ceil_mode=1)],
        [('X', F, [1, 2, 8, 8])], [('Y', F)], feature='LpPool with ceil_mode (new in 18)')
    add('LpPool-18-dilations', 'LpPool-18', 18,
        [node('LpPool', ['X'], ['Y'], kernel_shape=[2, 2], dilations=[2, 2], p=3, pads=[1, 1, 1, 1])],
        [('X', F, [1, 2, 7, 7])], [('Y', F)], feature='LpPool p=3 with dilations and pads')
    unary('Mish', 18, lo=-3, hi=3)
    add('OptionalGetElement-18', 'OptionalGetElement-18', 18,
        [node('Optional', ['X'], ['opt']), node('OptionalGetElement', ['opt'], ['x1']),
         node('OptionalGetElement', ['X'], ['x2']), node('Add', ['x1', 'x2'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)],
        feature='OptionalGetElement of an optional(tensor) and of a plain tensor (allowed from 18)')
    add('OptionalHasElement-18', 'OptionalHasElement-18', 18,
        [node('Optional', ['X'], ['opt']), node('OptionalHasElement', ['opt'], ['has_opt']),
         node('OptionalHasElement', ['X'], ['has_tensor']),
         node('OptionalHasElement', [], ['has_none']),
         node('Cast', ['has_opt'], ['h'], to=F), node('Mul', ['X', 'h'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F), ('has_tensor', BOOL), ('has_none', BOOL)],
        feature='OptionalHasElement of an optional, a tensor and no input (18)')
    add('Pad-18', 'Pad-18', 18,
        [node('Pad', ['X', 'pads', 'value', 'axes'], ['Y'], mode='constant')],
        [('X', F, [1, 3, 4, 5])], [('Y', F)],
        [i64('pads', [1, 2, 0, 1]), f32('value', 0.5), i64('axes', [1, 3])],
        feature='Pad with the axes input (new in 18): pads for axes 1 and 3 only')
    add('Pad-18-negative-axes', 'Pad-18', 18,
        [node('Pad', ['X', 'pads', '', 'axes'], ['Y'], mode='reflect')],
        [('X', F, [2, 5, 6])], [('Y', F)], [i64('pads', [2, 1, 1, 0]), i64('axes', [-1, -2])],
        feature='Pad reflect with negative axes, no constant_value')
    reduce_ranges = {'ReduceLogSum': [0.1, 2.0], 'ReduceProd': [0.5, 1.5]}
    for op in ['ReduceL1', 'ReduceL2', 'ReduceLogSum', 'ReduceLogSumExp', 'ReduceMax', 'ReduceMean',
               'ReduceMin', 'ReduceProd', 'ReduceSumSquare']:
        r = {'X': reduce_ranges.get(op, [-1.0, 1.0])}
        add(f'{op}-18', f'{op}-18', 18, [node(op, ['X', 'axes'], ['Y'], keepdims=0)],
            [('X', F, [2, 3, 4])], [('Y', F)], [i64('axes', [-1, 0])], ranges=r,
            feature=f'{op} with axes as an input (new in 18), keepdims=0')
        add(f'{op}-18-noop', f'{op}-18', 18, [node(op, ['X'], ['Y'], noop_with_empty_axes=1)],
            [('X', F, [2, 3, 4])], [('Y', F)], ranges=r,
            feature=f'{op} without axes and noop_with_empty_axes=1: the identity')
    add('ReduceMean-18-empty-axes', 'ReduceMean-18', 18, [node('ReduceMean', ['X', 'axes'], ['Y'])],
        [('X', F, [2, 3, 4])], [('Y', F)], [i64('axes', np.zeros([0], np.int64))],
        feature='ReduceMean with an empty axes tensor, noop_with_empty_axes=0: reduce all')
    add('ReduceMean-18-axes-input', 'ReduceMean-18', 18,
        [node('ReduceMean', ['X', 'axes'], ['Y'], keepdims=1)],
        [('X', F, [2, 3, 4]), ('axes', I64, [1])], [('Y', F)], ranges={'axes': [1, 2]},
        feature='ReduceMean with axes as a graph input (not a constant)')
    add('Resize-18', 'Resize-18', 18,
        [node('Resize', ['X', '', 'scales'], ['Y'], mode='linear', antialias=1, axes=[2, 3])],
        [('X', F, [1, 3, 8, 8])], [('Y', F)], [f32('scales', [0.6, 0.6])],
        feature='Resize linear downscale with antialias=1 and the axes attribute (new in 18)')
    add('Resize-18-cubic-antialias', 'Resize-18', 18,
        [node('Resize', ['X', '', 'scales'], ['Y'], mode='cubic', antialias=1, cubic_coeff_a=-0.5)],
        [('X', F, [1, 2, 9, 9])], [('Y', F)], [f32('scales', [1, 1, 0.5, 0.5])],
        feature='Resize cubic downscale with antialias=1')
    for policy in ['not_larger', 'not_smaller']:
        add(f'Resize-18-{policy}', 'Resize-18', 18,
            [node('Resize', ['X', '', '', 'sizes'], ['Y'], mode='nearest', axes=[2, 3],
                  keep_aspect_ratio_policy=policy)],
            [('X', F, [1, 3, 8, 10])], [('Y', F)], [i64('sizes', [4, 4])],
            feature=f'Resize with sizes, axes and keep_aspect_ratio_policy={policy}')
    for reduction in ['max', 'min']:
        add(f'ScatterElements-18{"" if reduction == "max" else "-min"}', 'ScatterElements-18', 18,
            [node('ScatterElements', ['data', 'indices', 'updates'], ['Y'], axis=1, reduction=reduction)],
            [('data', F, [3, 4]), ('updates', F, [3, 2])], [('Y', F)],
            [i64('indices', [[0, 1], [2, 0], [3, 3]])],
            feature=f'ScatterElements reduction={reduction} (new in 18), repeated index')
        add(f'ScatterND-18{"" if reduction == "min" else "-max"}', 'ScatterND-18', 18,
            [node('ScatterND', ['data', 'indices', 'updates'], ['Y'], reduction=reduction)],
            [('data', F, [4, 4, 4]), ('updates', F, [3, 4, 4])], [('Y', F)],
            [i64('indices', [[0], [2], [0]])],
            feature=f'ScatterND reduction={reduction} (new in 18), repeated index')
    add('Split-18', 'Split-18', 18, [node('Split', ['X'], ['a', 'b', 'c'], axis=1, num_outputs=3)],
        [('X', F, [2, 7])], [('a', F), ('b', F), ('c', F)],
        feature='Split num_outputs=3 over 7 (uneven: 3, 3, 1; new in 18)')
    add('Split-18-split-input', 'Split-18', 18, [node('Split', ['X', 'split'], ['a', 'b'], axis=-1)],
        [('X', F, [2, 3, 7])], [('a', F), ('b', F)], [i64('split', [2, 5])],
        feature='Split with the split input')


# --- the operators whose new versions widen types: one base model per version -------------

def if_graph(opset, name, section):
    then_g = helper.make_graph([node('Constant', [], ['one'], value=helper.make_tensor('v', F, [], [1.0])),
                                node('Add', ['X', 'one'], ['t'])], 'then', [], [vi('t', F, None)])
    else_g = helper.make_graph([node('Constant', [], ['two'], value=helper.make_tensor('v', F, [], [2.0])),
                                node('Mul', ['X', 'two'], ['e'])], 'else', [], [vi('e', F, None)])
    add(name, section, opset, [node('If', ['cond'], ['Y'], then_branch=then_g, else_branch=else_g)],
        [('X', F, [2, 3]), ('cond', BOOL, [])], [('Y', F)], feature='If with outer-scope values')


def loop_graph(opset, name, section):
    body = helper.make_graph(
        [node('Identity', ['cond_in'], ['cond_out']),
         node('Constant', [], ['half'], value=helper.make_tensor('v', F, [], [0.5])),
         node('Mul', ['v_in', 'half'], ['h']), node('Add', ['h', 'X'], ['v_out']),
         node('Identity', ['v_out'], ['scan_out'])],
        'body', [vi('i', I64, []), vi('cond_in', BOOL, []), vi('v_in', F, [2, 3])],
        [vi('cond_out', BOOL, []), vi('v_out', F, [2, 3]), vi('scan_out', F, [2, 3])])
    add(name, section, opset, [node('Loop', ['M', 'cond', 'V0'], ['V', 'S'], body=body)],
        [('X', F, [2, 3]), ('V0', F, [2, 3])], [('V', F), ('S', F)],
        [i64('M', 3), init('cond', np.array(True))],
        feature='Loop with a trip count, a loop-carried value and a scan output')


def scan_graph(opset, name, section):
    body = helper.make_graph([node('Add', ['s_in', 'x_t'], ['s_out']), node('Identity', ['s_out'], ['y_t'])],
                             'body', [vi('s_in', F, [3]), vi('x_t', F, [3])],
                             [vi('s_out', F, [3]), vi('y_t', F, [3])])
    add(name, section, opset, [node('Scan', ['S0', 'X'], ['S', 'Y'], body=body, num_scan_inputs=1)],
        [('S0', F, [3]), ('X', F, [5, 3])], [('S', F), ('Y', F)], feature='Scan: running sum')


def widened(op, opset):
    """The base model of a type-widening operator version: float32, the op's usual use."""
    name = f'{op}-{opset}'
    if op == 'Identity':
        add(name, name, opset, [node('Identity', ['X'], ['t']), node('Relu', ['t'], ['Y'])],
            [('X', F, [2, 3])], [('Y', F)], feature='Identity')
    elif op == 'Flatten':
        add(name, name, opset, [node('Flatten', ['X'], ['Y'], axis=2)],
            [('X', F, [2, 3, 4, 5])], [('Y', F)], feature='Flatten axis=2')
    elif op == 'Reshape':
        add(name, name, opset, [node('Reshape', ['X', 'shape'], ['Y'])],
            [('X', F, [2, 3, 4])], [('Y', F)], [i64('shape', [0, -1])], feature='Reshape [0, -1]')
    elif op == 'Shape':
        add(name, name, opset,
            [node('Shape', ['X'], ['s'], start=1, end=-1), node('Cast', ['s'], ['sf'], to=F),
             node('Mul', ['X', 'sf'], ['Y'])],
            [('X', F, [2, 3, 1])], [('Y', F), ('s', I64)], feature='Shape with start and end')
    elif op == 'Size':
        add(name, name, opset,
            [node('Size', ['X'], ['n']), node('Cast', ['n'], ['nf'], to=F), node('Div', ['X', 'nf'], ['Y'])],
            [('X', F, [2, 3, 4])], [('Y', F)], feature='Size')
    elif op == 'Squeeze':
        add(name, name, opset, [node('Squeeze', ['X', 'axes'], ['Y'])],
            [('X', F, [2, 1, 3, 1])], [('Y', F)], [i64('axes', [1, -1])], feature='Squeeze with axes')
    elif op == 'Unsqueeze':
        add(name, name, opset, [node('Unsqueeze', ['X', 'axes'], ['Y'])],
            [('X', F, [2, 3])], [('Y', F)], [i64('axes', [0, -1])], feature='Unsqueeze with axes')
    elif op == 'Transpose':
        add(name, name, opset, [node('Transpose', ['X'], ['Y'], perm=[2, 0, 1])],
            [('X', F, [2, 3, 4])], [('Y', F)], feature='Transpose')
    elif op == 'If':
        if_graph(opset, name, name)
    elif op == 'Loop':
        loop_graph(opset, name, name)
    elif op == 'Scan':
        scan_graph(opset, name, name)
    elif op == 'Pad':
        mode = {19: 'wrap', 21: 'edge', 23: 'reflect', 24: 'constant', 25: 'wrap'}[opset]
        add(name, name, opset, [node('Pad', ['X', 'pads', '', 'axes'], ['Y'], mode=mode)],
            [('X', F, [1, 2, 3, 4])], [('Y', F)], [i64('pads', [1, 1, 2, 2]), i64('axes', [2, 3])],
            feature=f'Pad mode={mode} with axes' + (' (wrap is new in 19)' if opset == 19 else ''))
    elif op == 'Constant':
        add(name, name, opset,
            [node('Constant', [], ['c'], value=numpy_helper.from_array(rand(2, 3), 'c')),
             node('Constant', [], ['k'], value_floats=[0.5, 1.5, 2.5]),
             node('Add', ['X', 'c'], ['t']), node('Mul', ['t', 'k'], ['Y'])],
            [('X', F, [2, 3])], [('Y', F)], feature='Constant value and value_floats')
    elif op == 'ConstantOfShape':
        add(name, name, opset,
            [node('ConstantOfShape', ['shape'], ['c'], value=helper.make_tensor('v', F, [1], [0.25])),
             node('Add', ['X', 'c'], ['Y'])],
            [('X', F, [2, 3])], [('Y', F)], [i64('shape', [2, 3])], feature='ConstantOfShape float')
    elif op == 'Cast':
        # (round_mode, new in 24, is only for casts to float8e8m0: Cast-24-float8e8m0 has it;
        # ORT 1.30 refuses it on any other cast)
        add(name, name, opset,
            [node('Cast', ['X'], ['h'], to=F16, saturate=1), node('Cast', ['h'], ['Y'], to=F)],
            [('X', F, [2, 3, 4])], [('Y', F)], ranges={'X': [-100, 100]},
            feature='Cast float -> float16 -> float with saturate')
    elif op == 'CastLike':
        add(name, name, opset,
            [node('CastLike', ['X', 'like'], ['h'], saturate=1), node('Cast', ['h'], ['Y'], to=F)],
            [('X', F, [2, 3, 4])], [('Y', F)], [init('like', np.zeros([1], np.float16))],
            feature='CastLike to float16 and back')
    elif op == 'DequantizeLinear':
        attrs = {'output_dtype': F} if opset >= 23 else {}
        add(name, name, opset,
            [node('DequantizeLinear', ['W', 'scale', 'zp'], ['w'], axis=0, **attrs),
             node('MatMul', ['X', 'w'], ['Y'])],
            [('X', F, [2, 4])], [('Y', F)],
            [init('W', RNG.integers(-128, 127, size=[4, 3]).astype(np.int8)),
             f32('scale', rand(4, lo=0.01, hi=0.02)), init('zp', np.array([0, 1, -1, 2], np.int8))],
            feature='DequantizeLinear per-axis int8 weights into a MatMul' +
                    (' with output_dtype' if attrs else ''))
    elif op == 'QuantizeLinear':
        attrs = {'precision': F} if opset >= 23 else {}
        add(name, name, opset,
            [node('QuantizeLinear', ['X', 'scale', 'zp'], ['q'], saturate=1, **attrs),
             node('DequantizeLinear', ['q', 'scale', 'zp'], ['Y'])],
            [('X', F, [2, 8])], [('Y', F)],
            [f32('scale', 0.01), init('zp', np.array(128, np.uint8))],
            feature='QuantizeLinear uint8 then DequantizeLinear' + (' with precision' if attrs else ''))
    else:
        raise KeyError(op)


WIDENED = {
    19: ['Cast', 'CastLike', 'Constant', 'DequantizeLinear', 'Identity', 'If', 'Loop', 'Pad',
         'QuantizeLinear', 'Reshape', 'Scan', 'Shape', 'Size'],
    20: ['ConstantOfShape'],
    21: ['Cast', 'CastLike', 'Constant', 'ConstantOfShape', 'DequantizeLinear', 'Flatten', 'Identity',
          'If', 'Loop', 'Pad', 'QuantizeLinear', 'Reshape', 'Scan', 'Shape', 'Size', 'Squeeze',
          'Transpose', 'Unsqueeze'],
}
WIDENED[23] = WIDENED[21]
WIDENED[24] = WIDENED[21]
WIDENED[25] = WIDENED[21]


def new_type_models():
    """Per element type newer than ONNX 1.12, at the opset that introduced it: a Cast to and from
    it, an initializer of it, a Constant of it, and where the op accepts it a (De)QuantizeLinear."""
    for t, (code, bits, opset) in NEW_TYPES.items():
        types = [t]
        rng_x = {'X': [0.05, 8.0]} if t == 'float8e8m0' else ({'X': [-3, 3]} if bits < 8 else {'X': [-500, 500]})
        extra = {'round_mode': 'up'} if t == 'float8e8m0' else {}
        sat = {'saturate': 0} if t in ('float8e5m2', 'float8e4m3fnuz') else {}
        add(f'Cast-{opset}-{t}', f'Cast-{opset}', opset,
            [node('Cast', ['X'], ['q'], to=code, **sat, **extra), node('Cast', ['q'], ['Y'], to=F)],
            [('X', F, [3, 5])], [('Y', F)], ranges=rng_x, new_types=types,
            feature=f'Cast float -> {t} -> float' + (' saturate=0' if sat else '') +
                    (' round_mode=up' if extra else ''))
        add(f'Cast-{opset}-{t}-initializer', f'Cast-{opset}', opset,
            [node('Cast', ['W'], ['w'], to=F), node('Mul', ['X', 'w'], ['Y'])],
            [('X', F, [3, 5])], [('Y', F)], [new_type_tensor('W', t, [3, 5])], new_types=types,
            feature=f'an initializer of {t} (raw_data, packed as onnx.in.proto says) cast to float')
        add(f'Constant-{opset}-{t}', f'Constant-{opset}', opset,
            [node('Constant', [], ['c'], value=new_type_tensor('c', t, [7])),
             node('Cast', ['c'], ['cf'], to=F), node('Add', ['X', 'cf'], ['Y'])],
            [('X', F, [2, 7])], [('Y', F)], new_types=types,
            feature=f'a Constant of {t} (odd element count)')
        cast_like = f'CastLike-{opset}-{t}'
        add(cast_like, f'CastLike-{opset}', opset,
            [node('CastLike', ['X', 'like'], ['q']), node('Cast', ['q'], ['Y'], to=F)],
            [('X', F, [4, 2])], [('Y', F)], [new_type_tensor('like', t, [1])], ranges=rng_x,
            new_types=types, feature=f'CastLike to a {t} initializer and back')
    # (De)QuantizeLinear with the new quantized types
    for t, opset in [('float8e4m3fn', 19), ('float8e5m2', 19), ('int4', 21), ('uint4', 21),
                     ('float4e2m1', 23), ('int2', 25), ('uint2', 25)]:
        code, bits, _ = NEW_TYPES[t]
        zero = new_type_tensor('zp', t, [], [0])
        add(f'QuantizeLinear-{opset}-{t}', f'QuantizeLinear-{opset}', opset,
            [node('QuantizeLinear', ['X', 'scale', 'zp'], ['q']),
             node('DequantizeLinear', ['q', 'scale', 'zp'], ['Y'])],
            [('X', F, [2, 8])], [('Y', F)], [f32('scale', 0.25 if bits < 8 else 0.01), zero],
            new_types=[t], feature=f'QuantizeLinear to {t} and DequantizeLinear back')
        add(f'DequantizeLinear-{opset}-{t}', f'DequantizeLinear-{opset}', opset,
            [node('DequantizeLinear', ['W', 'scale'], ['w'], axis=0), node('MatMul', ['X', 'w'], ['Y'])],
            [('X', F, [2, 4])], [('Y', F)], [new_type_tensor('W', t, [4, 6]), f32('scale', rand(4, lo=0.01, hi=0.1))],
            new_types=[t], feature=f'weights stored as {t}, DequantizeLinear per axis into a MatMul')
    # blocked quantization (21): int4 weights with a scale per block of 2, the LLM weight format
    add('DequantizeLinear-21-int4-blocked', 'DequantizeLinear-21', 21,
        [node('DequantizeLinear', ['W', 'scale', 'zp'], ['w'], axis=0, block_size=2),
         node('MatMul', ['X', 'w'], ['Y'])],
        [('X', F, [3, 4])], [('Y', F)],
        [new_type_tensor('W', 'int4', [4, 6]), f32('scale', rand(2, 6, lo=0.01, hi=0.1)),
         new_type_tensor('zp', 'int4', [2, 6], [0] * 12)],
        new_types=['int4'], feature='DequantizeLinear-21 blocked (block_size=2) int4 weights')
    add('QuantizeLinear-21-int4-output-dtype', 'QuantizeLinear-21', 21,
        [node('QuantizeLinear', ['X', 'scale'], ['q'], axis=1, block_size=4, output_dtype=NEW_TYPES['int4'][0]),
         node('DequantizeLinear', ['q', 'scale'], ['Y'], axis=1, block_size=4)],
        [('X', F, [2, 8])], [('Y', F)], [f32('scale', rand(2, 2, lo=0.1, hi=0.3))], new_types=['int4'],
        feature='QuantizeLinear-21 blocked with output_dtype=int4 (no zero point)')
    # float8e8m0 scales (MX formats): DequantizeLinear-24 accepts them as x_scale
    add('DequantizeLinear-24-float8e8m0-scale', 'DequantizeLinear-24', 24,
        [node('DequantizeLinear', ['W', 'scale'], ['w'], axis=0, block_size=2, output_dtype=F),
         node('MatMul', ['X', 'w'], ['Y'])],
        [('X', F, [3, 4])], [('Y', F)],
        [new_type_tensor('W', 'float4e2m1', [4, 6]), new_type_tensor('scale', 'float8e8m0', [2, 6])],
        new_types=['float4e2m1', 'float8e8m0'],
        feature='MXFP4-style weights: float4e2m1 values with float8e8m0 block scales')
    # ConstantOfShape with a new-type value, Identity and a control-flow op carrying one
    for t, opset in [('float8e4m3fn', 20), ('int4', 21), ('float4e2m1', 23), ('float8e8m0', 24), ('uint2', 25)]:
        add(f'ConstantOfShape-{opset}-{t}', f'ConstantOfShape-{opset}', opset,
            [node('ConstantOfShape', ['shape'], ['c'], value=new_type_tensor('v', t, [1])),
             node('Cast', ['c'], ['cf'], to=F), node('Add', ['X', 'cf'], ['Y'])],
            [('X', F, [2, 3])], [('Y', F)], [i64('shape', [2, 3])], new_types=[t],
            feature=f'ConstantOfShape with a {t} value')
    for t, opset in [('float8e5m2', 19), ('uint4', 21), ('float4e2m1', 23), ('int2', 25)]:
        code = NEW_TYPES[t][0]
        add(f'Identity-{opset}-{t}', f'Identity-{opset}', opset,
            [node('Cast', ['X'], ['q'], to=code), node('Identity', ['q'], ['r']), node('Cast', ['r'], ['Y'], to=F)],
            [('X', F, [2, 6])], [('Y', F)], ranges={'X': [-2, 2]},
            new_types=[t], feature=f'{t} values through Identity')


# --- opsets 19 and 20 --------------------------------------------------------------------------

def opset19_20():
    add('AveragePool-19', 'AveragePool-19', 19,
        [node('AveragePool', ['X'], ['Y'], kernel_shape=[3, 3], dilations=[2, 2], pads=[1, 1, 1, 1])],
        [('X', F, [1, 2, 9, 9])], [('Y', F)], feature='AveragePool with dilations (new in 19)')
    add('DeformConv-19', 'DeformConv-19', 19,
        [node('DeformConv', ['X', 'W', 'offset', 'B'], ['Y'], kernel_shape=[3, 3])],
        [('X', F, [1, 2, 5, 5]), ('offset', F, [1, 18, 3, 3])], [('Y', F)],
        [f32('W', rand(3, 2, 3, 3)), f32('B', rand(3))], ranges={'offset': [-0.5, 0.5]},
        feature='DeformConv with bias')
    add('DeformConv-19-mask', 'DeformConv-19', 19,
        [node('DeformConv', ['X', 'W', 'offset', '', 'mask'], ['Y'], kernel_shape=[2, 2], pads=[1, 1, 1, 1],
              offset_group=2)],
        [('X', F, [1, 4, 4, 4]), ('offset', F, [1, 16, 5, 5]), ('mask', F, [1, 8, 5, 5])], [('Y', F)],
        [f32('W', rand(2, 4, 2, 2))], ranges={'offset': [-1, 1], 'mask': [0, 1]},
        feature='DeformConv with a mask, pads and offset_group=2')
    add('Equal-19', 'Equal-19', 19, [node('Equal', ['A', 'B'], ['C'])],
        [('A', I32, [3, 4]), ('B', I32, [3, 4])], [('C', BOOL)], ranges={'A': [0, 2], 'B': [0, 2]},
        feature='Equal on int32')
    add('Equal-19-string', 'Equal-19', 19, [node('Equal', ['A', 'B'], ['C'])],
        [('A', STR, [3]), ('B', STR, [3])], [('C', BOOL)], values={'A': 'x', 'B': 'x'},
        feature='Equal on strings (new in 19)')
    add('Resize-19', 'Resize-19', 19,
        [node('Resize', ['X', '', 'scales'], ['Y'], mode='linear',
              coordinate_transformation_mode='half_pixel_symmetric')],
        [('X', F, [1, 2, 4, 5])], [('Y', F)], [f32('scales', [1, 1, 1.5, 1.7])],
        feature='Resize coordinate_transformation_mode=half_pixel_symmetric (new in 19)')
    # opset 20
    add('AffineGrid-20', 'AffineGrid-20', 20, [node('AffineGrid', ['theta', 'size'], ['grid'])],
        [('theta', F, [2, 2, 3])], [('grid', F)], [i64('size', [2, 1, 4, 5])], feature='AffineGrid 2-D')
    add('AffineGrid-20-3d', 'AffineGrid-20', 20,
        [node('AffineGrid', ['theta', 'size'], ['grid'], align_corners=1)],
        [('theta', F, [1, 3, 4])], [('grid', F)], [i64('size', [1, 1, 2, 3, 4])],
        feature='AffineGrid 3-D with align_corners')
    add('DFT-20', 'DFT-20', 20, [node('DFT', ['X', '', 'axis'], ['Y'])],
        [('X', F, [2, 8, 1])], [('Y', F)], [i64('axis', 1)],
        feature='DFT-20 of a real signal, axis as an input (new in 20)')
    add('DFT-20-length-onesided', 'DFT-20', 20, [node('DFT', ['X', 'n', 'axis'], ['Y'], onesided=1)],
        [('X', F, [1, 6, 1])], [('Y', F)], [i64('n', 8), i64('axis', -2)],
        feature='DFT-20 onesided with dft_length (zero-padded to 8) and a negative axis')
    add('DFT-20-inverse', 'DFT-20', 20, [node('DFT', ['X', '', 'axis'], ['Y'], inverse=1)],
        [('X', F, [3, 4, 2])], [('Y', F)], [i64('axis', 1)], feature='inverse DFT-20 of a complex signal')
    unary('Gelu', 20, lo=-3, hi=3)
    unary('Gelu', 20, lo=-3, hi=3, suffix='-tanh', approximate='tanh')
    add('GridSample-20', 'GridSample-20', 20,
        [node('GridSample', ['X', 'grid'], ['Y'], mode='linear', padding_mode='border')],
        [('X', F, [1, 2, 4, 4]), ('grid', F, [1, 3, 3, 2])], [('Y', F)], ranges={'grid': [-1.1, 1.1]},
        feature='GridSample mode=linear (renamed in 20), padding border')
    add('GridSample-20-cubic', 'GridSample-20', 20,
        [node('GridSample', ['X', 'grid'], ['Y'], mode='cubic', align_corners=1)],
        [('X', F, [1, 1, 5, 5]), ('grid', F, [1, 2, 4, 2])], [('Y', F)], ranges={'grid': [-1, 1]},
        feature='GridSample mode=cubic (renamed in 20)')
    add('GridSample-20-3d', 'GridSample-20', 20,
        [node('GridSample', ['X', 'grid'], ['Y'], mode='linear')],
        [('X', F, [1, 2, 3, 4, 4]), ('grid', F, [1, 2, 2, 2, 3])], [('Y', F)], ranges={'grid': [-1, 1]},
        feature='GridSample on a 5-D input (N-D, new in 20)')
    add('ImageDecoder-20', 'ImageDecoder-20', 20,
        [node('ImageDecoder', ['png'], ['image'], pixel_format='RGB'),
         node('Cast', ['image'], ['f'], to=F), node('Add', ['X', 'f'], ['Y'])],
        [('X', F, [2, 3, 3])], [('Y', F)], [init('png', np.frombuffer(tiny_png(), np.uint8))],
        feature='ImageDecoder of an embedded 3x2 RGB PNG')
    special = f32('special', [np.inf, -np.inf, np.nan, 0.0])
    for op, attrs in [('IsInf', {}), ('IsNaN', {})]:
        add(f'{op}-20', f'{op}-20', 20,
            [node('Concat', ['X', 'special'], ['v'], axis=0), node(op, ['v'], ['Y'], **attrs)],
            [('X', F, [4])], [('Y', BOOL)], [special], feature=f'{op} on float32 with Inf and NaN')
    add('IsInf-20-negative', 'IsInf-20', 20,
        [node('Concat', ['X', 'special'], ['v'], axis=0), node('IsInf', ['v'], ['Y'], detect_positive=0)],
        [('X', F, [4])], [('Y', BOOL)], [special], feature='IsInf detect_positive=0')
    for op in ['IsInf', 'IsNaN']:
        add(f'{op}-20-float8e5m2', f'{op}-20', 20,
            [node('Concat', ['X', 'special'], ['v'], axis=0), node('Cast', ['v'], ['q'], to=19, saturate=0),
             node(op, ['q'], ['Y'])],
            [('X', F, [4])], [('Y', BOOL)], [special], new_types=['float8e5m2'],
            feature=f'{op} on float8e5m2 (new in 20)')
    for op in ['ReduceMax', 'ReduceMin']:
        add(f'{op}-20', f'{op}-20', 20, [node(op, ['X', 'axes'], ['Y'])],
            [('X', F, [2, 3, 4])], [('Y', F)], [i64('axes', [1])], feature=f'{op} float, axes input')
        add(f'{op}-20-bool', f'{op}-20', 20, [node(op, ['X', 'axes'], ['Y'], keepdims=0)],
            [('X', BOOL, [3, 4])], [('Y', BOOL)], [i64('axes', [1])], feature=f'{op} on bool (new in 20)')
        add(f'{op}-20-uint8', f'{op}-20', 20, [node(op, ['X'], ['Y'], keepdims=0)],
            [('X', U8, [3, 4])], [('Y', U8)], ranges={'X': [0, 255]}, feature=f'{op} on uint8, all axes')
    add('RegexFullMatch-20', 'RegexFullMatch-20', 20, [node('RegexFullMatch', ['X'], ['Y'], pattern='[a-z]+@[a-z]+')],
        [('X', STR, [2, 2])], [('Y', BOOL)], values={'X': 'ab@cd'}, feature='RegexFullMatch')
    add('StringConcat-20', 'StringConcat-20', 20, [node('StringConcat', ['X', 'Z'], ['Y'])],
        [('X', STR, [2, 3]), ('Z', STR, [3])], [('Y', STR)], values={'X': 'ab', 'Z': 'cd'},
        feature='StringConcat with broadcasting')
    add('StringSplit-20', 'StringSplit-20', 20,
        [node('StringSplit', ['X'], ['Y', 'N'], delimiter=',', maxsplit=2)],
        [('X', STR, [3])], [('Y', STR), ('N', I64)], values={'X': 'a,b,,c'},
        feature='StringSplit with a delimiter and maxsplit')


def tiny_png():
    """A 3x2 8-bit RGB PNG (written here: signature, IHDR, one zlib IDAT, IEND)."""
    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xFFFFFFFF)
    width, height = 3, 2
    rows = b''.join(b'\x00' + bytes((x * 80 + y * 40 + c * 20) % 256 for x in range(width) for c in range(3))
                    for y in range(height))
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))


# --- opset 21 ----------------------------------------------------------------------------------

def opset21():
    add('GroupNormalization-21', 'GroupNormalization-21', 21,
        [node('GroupNormalization', ['X', 'scale', 'bias'], ['Y'], num_groups=3)],
        [('X', F, [2, 6, 3, 3])], [('Y', F)], [f32('scale', rand(6, lo=0.5, hi=1.5)), f32('bias', rand(6))],
        feature='GroupNormalization-21: scale and bias per channel')
    add('GroupNormalization-21-stash', 'GroupNormalization-21', 21,
        [node('GroupNormalization', ['X', 'scale', 'bias'], ['Y'], num_groups=2, stash_type=1, epsilon=1e-3)],
        [('X', F, [1, 4, 5])], [('Y', F)], [f32('scale', rand(4, lo=0.5, hi=1.5)), f32('bias', rand(4))],
        feature='GroupNormalization-21 on a 3-D input with stash_type and epsilon')
    add('QLinearMatMul-21', 'QLinearMatMul-21', 21,
        [node('QLinearMatMul', ['A', 'a_scale', 'a_zp', 'B', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['Y'])],
        [('A', U8, [2, 4])], [('Y', U8)],
        [f32('a_scale', 0.02), init('a_zp', np.array(128, np.uint8)),
         init('B', RNG.integers(0, 255, size=[4, 3]).astype(np.uint8)), f32('b_scale', 0.01),
         init('b_zp', np.array(120, np.uint8)), f32('y_scale', 0.05), init('y_zp', np.array(100, np.uint8))],
        ranges={'A': [0, 255]}, feature='QLinearMatMul uint8')
    add('QLinearMatMul-21-float8e4m3fn', 'QLinearMatMul-21', 21,
        [node('Cast', ['X'], ['a'], to=17),
         node('QLinearMatMul', ['a', 'a_scale', 'a_zp', 'B', 'b_scale', 'b_zp', 'y_scale', 'y_zp'], ['q']),
         node('Cast', ['q'], ['Y'], to=F)],
        [('X', F, [2, 4])], [('Y', F)],
        [f32('a_scale', 1.0), new_type_tensor('a_zp', 'float8e4m3fn', [], [0]),
         new_type_tensor('B', 'float8e4m3fn', [4, 3]), f32('b_scale', 1.0),
         new_type_tensor('b_zp', 'float8e4m3fn', [], [0]), f32('y_scale', 1.0),
         new_type_tensor('y_zp', 'float8e4m3fn', [], [0])],
        new_types=['float8e4m3fn'], feature='QLinearMatMul on float8e4m3fn (new in 21)')
    add('DequantizeLinear-21-int16', 'DequantizeLinear-21', 21,
        [node('DequantizeLinear', ['W', 'scale', 'zp'], ['w']), node('Add', ['X', 'w'], ['Y'])],
        [('X', F, [2, 5])], [('Y', F)],
        [init('W', RNG.integers(-30000, 30000, size=[2, 5]).astype(np.int16)), f32('scale', 1e-4),
         init('zp', np.array(5, np.int16))], feature='DequantizeLinear of int16 (new in 21)')
    add('QuantizeLinear-21-uint16', 'QuantizeLinear-21', 21,
        [node('QuantizeLinear', ['X', 'scale', 'zp'], ['q']), node('DequantizeLinear', ['q', 'scale', 'zp'], ['Y'])],
        [('X', F, [2, 6])], [('Y', F)], [f32('scale', 1e-4), init('zp', np.array(32768, np.uint16))],
        feature='QuantizeLinear to uint16 (new in 21) and back')
    add('QuantizeLinear-21-blocked', 'QuantizeLinear-21', 21,
        [node('QuantizeLinear', ['X', 'scale', 'zp'], ['q'], axis=1, block_size=3),
         node('DequantizeLinear', ['q', 'scale', 'zp'], ['Y'], axis=1, block_size=3)],
        [('X', F, [2, 6])], [('Y', F)],
        [f32('scale', rand(2, 2, lo=0.005, hi=0.01)), init('zp', np.zeros([2, 2], np.int8))],
        feature='QuantizeLinear/DequantizeLinear blocked (block_size=3) int8')


# --- opset 22: bfloat16 added to ~40 ops; the float32 models are what npucc lowers ---------------

def opset22():
    ranges = {'Acos': (-0.9, 0.9), 'Asin': (-0.9, 0.9), 'Atanh': (-0.9, 0.9), 'Acosh': (1.1, 3.0),
              'Asinh': (-2, 2), 'Atan': (-2, 2), 'Cos': (-3, 3), 'Sin': (-3, 3), 'Cosh': (-2, 2),
              'Sinh': (-2, 2), 'Tan': (-1.2, 1.2), 'Round': (-4, 4), 'Elu': (-2, 2), 'Selu': (-2, 2),
              'Softplus': (-3, 3), 'Softsign': (-3, 3), 'HardSigmoid': (-4, 4), 'HardSwish': (-4, 4),
              'Mish': (-3, 3), 'ThresholdedRelu': (-2, 2)}
    attrs = {'Elu': {'alpha': 0.7}, 'HardSigmoid': {'alpha': 0.25, 'beta': 0.4},
             'ThresholdedRelu': {'alpha': 0.3}, 'Selu': {'alpha': 1.6, 'gamma': 1.05}}
    for op, (lo, hi) in ranges.items():
        unary(op, 22, lo=lo, hi=hi, **attrs.get(op, {}))
    add('AveragePool-22', 'AveragePool-22', 22,
        [node('AveragePool', ['X'], ['Y'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
              count_include_pad=1, ceil_mode=1)],
        [('X', F, [1, 3, 8, 8])], [('Y', F)], feature='AveragePool count_include_pad, ceil_mode')
    add('Bernoulli-22', 'Bernoulli-22', 22,
        [node('Round', ['P'], ['p']), node('Bernoulli', ['p'], ['Y'], seed=3.0)],
        [('P', F, [3, 4])], [('Y', F)], ranges={'P': [0, 1]},
        feature='Bernoulli of probabilities 0 and 1 (deterministic)')
    conv_w = f32('W', rand(4, 3, 3, 3, lo=-0.3, hi=0.3))
    add('Conv-22', 'Conv-22', 22, [node('Conv', ['X', 'W', 'B'], ['Y'], pads=[1, 1, 1, 1])],
        [('X', F, [1, 3, 8, 8])], [('Y', F)], [conv_w, f32('B', rand(4))], feature='Conv 3x3')
    add('Conv-22-grouped', 'Conv-22', 22,
        [node('Conv', ['X', 'W'], ['Y'], group=2, strides=[2, 2], dilations=[2, 2], pads=[2, 2, 1, 1])],
        [('X', F, [1, 4, 9, 9])], [('Y', F)], [f32('W', rand(6, 2, 3, 3, lo=-0.3, hi=0.3))],
        feature='Conv grouped, strided, dilated, asymmetric pads')
    add('Conv-22-auto-pad', 'Conv-22', 22,
        [node('Conv', ['X', 'W'], ['Y'], strides=[2, 2], auto_pad='SAME_UPPER')],
        [('X', F, [1, 3, 7, 7])], [('Y', F)], [f32('W', rand(2, 3, 3, 3, lo=-0.3, hi=0.3))],
        feature='Conv auto_pad=SAME_UPPER, strided')
    add('ConvTranspose-22', 'ConvTranspose-22', 22,
        [node('ConvTranspose', ['X', 'W', 'B'], ['Y'], strides=[2, 2], output_padding=[1, 1], pads=[1, 1, 1, 1])],
        [('X', F, [1, 2, 4, 4])], [('Y', F)], [f32('W', rand(2, 3, 3, 3)), f32('B', rand(3))],
        feature='ConvTranspose strided with output_padding')
    add('DeformConv-22', 'DeformConv-22', 22,
        [node('DeformConv', ['X', 'W', 'offset', 'B'], ['Y'], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [('X', F, [1, 2, 4, 4]), ('offset', F, [1, 18, 4, 4])], [('Y', F)],
        [f32('W', rand(2, 2, 3, 3)), f32('B', rand(2))], ranges={'offset': [-0.5, 0.5]}, feature='DeformConv padded')
    add('Det-22', 'Det-22', 22, [node('Det', ['X'], ['Y'])], [('X', F, [2, 3, 3])], [('Y', F)],
        feature='Det of a batch of 3x3 matrices')
    add('Dropout-22', 'Dropout-22', 22,
        [node('Dropout', ['X', 'ratio'], ['Y', 'mask'], seed=1)],
        [('X', F, [2, 5])], [('Y', F), ('mask', BOOL)], [f32('ratio', 0.3)],
        feature='Dropout in inference mode with ratio and mask outputs')
    add('EyeLike-22', 'EyeLike-22', 22, [node('EyeLike', ['X'], ['e'], k=1), node('Add', ['X', 'e'], ['Y'])],
        [('X', F, [3, 4])], [('Y', F)], feature='EyeLike k=1')
    H = 4
    for op, gates in [('GRU', 3), ('LSTM', 4), ('RNN', 1)]:
        inits = [f32('W', rand(1, gates * H, 3, lo=-0.5, hi=0.5)), f32('R', rand(1, gates * H, H, lo=-0.5, hi=0.5)),
                 f32('B', rand(1, 2 * gates * H, lo=-0.2, hi=0.2))]
        extra = {'linear_before_reset': 1} if op == 'GRU' else {}
        add(f'{op}-22', f'{op}-22', 22,
            [node(op, ['X', 'W', 'R', 'B'], ['Y', 'Y_h'], hidden_size=H, **extra)],
            [('X', F, [5, 2, 3])], [('Y', F), ('Y_h', F)], inits, feature=f'{op} hidden 4')
    add('LSTM-22-bidirectional', 'LSTM-22', 22,
        [node('LSTM', ['X', 'W', 'R', 'B', '', 'h0', 'c0'], ['Y', 'Y_h', 'Y_c'], hidden_size=H,
              direction='bidirectional')],
        [('X', F, [5, 2, 3]), ('h0', F, [2, 2, H]), ('c0', F, [2, 2, H])], [('Y', F), ('Y_h', F), ('Y_c', F)],
        [f32('W', rand(2, 4 * H, 3, lo=-0.5, hi=0.5)), f32('R', rand(2, 4 * H, H, lo=-0.5, hi=0.5)),
         f32('B', rand(2, 8 * H, lo=-0.2, hi=0.2))],
        feature='LSTM bidirectional with initial states')
    for op, attrs in [('GlobalAveragePool', {}), ('GlobalLpPool', {'p': 3}), ('GlobalMaxPool', {})]:
        add(f'{op}-22', f'{op}-22', 22, [node(op, ['X'], ['Y'], **attrs)], [('X', F, [1, 3, 5, 5])], [('Y', F)],
            feature=op)
    add('GridSample-22', 'GridSample-22', 22,
        [node('GridSample', ['X', 'grid'], ['Y'], mode='nearest', padding_mode='reflection')],
        [('X', F, [1, 2, 4, 4]), ('grid', F, [1, 3, 3, 2])], [('Y', F)], ranges={'grid': [-1.2, 1.2]},
        feature='GridSample nearest, reflection padding')
    add('InstanceNormalization-22', 'InstanceNormalization-22', 22,
        [node('InstanceNormalization', ['X', 'scale', 'B'], ['Y'])],
        [('X', F, [2, 3, 4, 4])], [('Y', F)], [f32('scale', rand(3, lo=0.5, hi=1.5)), f32('B', rand(3))],
        feature='InstanceNormalization')
    add('LpNormalization-22', 'LpNormalization-22', 22, [node('LpNormalization', ['X'], ['Y'], axis=-1, p=2)],
        [('X', F, [3, 5])], [('Y', F)], feature='LpNormalization p=2')
    add('LpPool-22', 'LpPool-22', 22, [node('LpPool', ['X'], ['Y'], kernel_shape=[2, 2], strides=[2, 2], p=1)],
        [('X', F, [1, 2, 6, 6])], [('Y', F)], feature='LpPool p=1')
    add('MaxPool-22', 'MaxPool-22', 22,
        [node('MaxPool', ['X'], ['Y', 'I'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
              dilations=[1, 1], ceil_mode=1)],
        [('X', F, [1, 2, 7, 7])], [('Y', F), ('I', I64)], feature='MaxPool with indices, ceil_mode')
    add('MaxRoiPool-22', 'MaxRoiPool-22', 22,
        [node('MaxRoiPool', ['X', 'rois'], ['Y'], pooled_shape=[2, 2], spatial_scale=1.0)],
        [('X', F, [1, 2, 8, 8])], [('Y', F)], [f32('rois', [[0, 0, 0, 4, 4], [0, 2, 2, 7, 7]])],
        feature='MaxRoiPool of two regions')
    add('MaxUnpool-22', 'MaxUnpool-22', 22,
        [node('MaxPool', ['X'], ['p', 'i'], kernel_shape=[2, 2], strides=[2, 2]),
         node('MaxUnpool', ['p', 'i'], ['Y'], kernel_shape=[2, 2], strides=[2, 2])],
        [('X', F, [1, 2, 4, 4])], [('Y', F)], feature='MaxUnpool of a MaxPool')
    add('Multinomial-22', 'Multinomial-22', 22,
        [node('Mul', ['X', 'zero'], ['z']), node('Add', ['z', 'logits'], ['l']),
         node('Multinomial', ['l'], ['Y'], sample_size=3, seed=5.0)],
        [('X', F, [2, 4])], [('Y', I32)], [f32('zero', 0.0), f32('logits', [[0, -60, -60, -60], [-60, -60, 0, -60]])],
        feature='Multinomial where one class has all the probability (deterministic)')
    add('NegativeLogLikelihoodLoss-22', 'NegativeLogLikelihoodLoss-22', 22,
        [node('LogSoftmax', ['X'], ['l'], axis=1),
         node('NegativeLogLikelihoodLoss', ['l', 'target', 'weight'], ['Y'], reduction='mean', ignore_index=4)],
        [('X', F, [3, 5])], [('Y', F)], [i64('target', [1, 4, 0]), f32('weight', rand(5, lo=0.5, hi=1.5))],
        feature='NegativeLogLikelihoodLoss mean with weight and ignore_index')
    add('RandomNormal-22', 'RandomNormal-22', 22,
        [node('RandomNormal', [], ['r'], shape=[2, 3], mean=1.5, scale=0.0, seed=1.0),
         node('Add', ['X', 'r'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)], feature='RandomNormal with scale 0 (deterministic)')
    add('RandomNormalLike-22', 'RandomNormalLike-22', 22,
        [node('RandomNormalLike', ['X'], ['r'], mean=0.5, scale=0.0), node('Add', ['X', 'r'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)], feature='RandomNormalLike with scale 0')
    add('RandomUniform-22', 'RandomUniform-22', 22,
        [node('RandomUniform', [], ['r'], shape=[2, 3], low=2.0, high=2.0),
         node('Add', ['X', 'r'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)], feature='RandomUniform with low == high (deterministic)')
    add('RandomUniformLike-22', 'RandomUniformLike-22', 22,
        [node('RandomUniformLike', ['X'], ['r'], low=-1.0, high=-1.0), node('Mul', ['X', 'r'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)], feature='RandomUniformLike with low == high')
    add('RoiAlign-22', 'RoiAlign-22', 22,
        [node('RoiAlign', ['X', 'rois', 'batch_indices'], ['Y'], output_height=3, output_width=3,
              sampling_ratio=2, mode='avg', coordinate_transformation_mode='half_pixel')],
        [('X', F, [1, 2, 8, 8])], [('Y', F)],
        [f32('rois', [[0, 0, 4, 4], [1.5, 2, 7, 6.5]]), i64('batch_indices', [0, 0])],
        feature='RoiAlign avg, half_pixel')
    # bfloat16 where opset 22 first allows it (ORT's CPU provider has few bfloat16 kernels)
    add('Conv-22-bfloat16', 'Conv-22', 22,
        [node('Cast', ['X'], ['xb'], to=BF16), node('Conv', ['xb', 'W'], ['yb'], pads=[1, 1, 1, 1]),
         node('Cast', ['yb'], ['Y'], to=F)],
        [('X', F, [1, 3, 8, 8])], [('Y', F)], [bf16('W', rand(4, 3, 3, 3, lo=-0.3, hi=0.3))],
        bfloat16=True, feature='Conv in bfloat16 (new in 22), bfloat16 weights')
    for op, attrs in [('MaxPool', {'kernel_shape': [2, 2]}), ('InstanceNormalization', None), ('Elu', {})]:
        inputs = ['xb', 's', 'b'] if attrs is None else ['xb']
        inits = [bf16('s', rand(3, lo=0.5, hi=1.5)), bf16('b', rand(3))] if attrs is None else []
        add(f'{op}-22-bfloat16', f'{op}-22', 22,
            [node('Cast', ['X'], ['xb'], to=BF16), node(op, inputs, ['yb'], **(attrs or {})),
             node('Cast', ['yb'], ['Y'], to=F)],
            [('X', F, [1, 3, 4, 4])], [('Y', F)], inits, bfloat16=True,
            feature=f'{op} in bfloat16 (new in 22)')


def bf16(name, array):
    bits = (np.asarray(array, np.float32).view(np.uint32) + 0x8000) >> 16  # round half up, fine here
    t = TensorProto()
    t.name = name
    t.data_type = BF16
    t.dims.extend(np.asarray(array).shape)
    t.raw_data = bits.astype('<u2').tobytes()
    return t


# --- opsets 23 to 26 ---------------------------------------------------------------------------

def opset23_26():
    B, S, D = 1, 4, 8
    add('Attention-23', 'Attention-23', 23, [node('Attention', ['Q', 'K', 'V'], ['Y'], is_causal=1)],
        [('Q', F, [B, 2, S, D]), ('K', F, [B, 2, S, D]), ('V', F, [B, 2, S, D])], [('Y', F)],
        feature='Attention 4-D, causal')
    add('Attention-23-3d-gqa', 'Attention-23', 23,
        [node('Attention', ['Q', 'K', 'V'], ['Y'], q_num_heads=4, kv_num_heads=2, scale=0.3)],
        [('Q', F, [2, S, 4 * D]), ('K', F, [2, 6, 2 * D]), ('V', F, [2, 6, 2 * D])], [('Y', F)],
        feature='Attention 3-D with grouped KV heads (4 q heads, 2 kv heads) and a scale')
    add('Attention-23-past-mask', 'Attention-23', 23,
        [node('Attention', ['Q', 'K', 'V', 'mask', 'past_k', 'past_v'], ['Y', 'present_k', 'present_v'])],
        [('Q', F, [B, 2, S, D]), ('K', F, [B, 2, S, D]), ('V', F, [B, 2, S, D]),
         ('mask', BOOL, [S, S + 3]), ('past_k', F, [B, 2, 3, D]), ('past_v', F, [B, 2, 3, D])],
        [('Y', F), ('present_k', F), ('present_v', F)], ranges={'mask': [1, 1]},
        feature='Attention with a boolean mask and a KV cache (past -> present)')
    add('Attention-23-softcap', 'Attention-23', 23,
        [node('Attention', ['Q', 'K', 'V', 'bias'], ['Y', '', '', 'qk'], softcap=5.0, qk_matmul_output_mode=0,
              softmax_precision=F)],
        [('Q', F, [B, 2, S, D]), ('K', F, [B, 2, S, D]), ('V', F, [B, 2, S, D])], [('Y', F), ('qk', F)],
        [f32('bias', rand(S, S))], feature='Attention with an additive mask, softcap and the qk output')
    add('Attention-24', 'Attention-24', 24,
        [node('TensorScatter', ['k_cache', 'K', 'write'], ['k_all']),
         node('TensorScatter', ['v_cache', 'V', 'write'], ['v_all']),
         node('Attention', ['Q', 'k_all', 'v_all', '', '', '', 'nonpad'], ['Y'], is_causal=1)],
        [('Q', F, [2, 2, 1, D]), ('K', F, [2, 2, 1, D]), ('V', F, [2, 2, 1, D]),
         ('k_cache', F, [2, 2, 6, D]), ('v_cache', F, [2, 2, 6, D])],
        [('Y', F), ('k_all', F), ('v_all', F)], [i64('write', [3, 5]), i64('nonpad', [4, 6])],
        feature='Attention-24 decode step on an external KV cache: TensorScatter writes the new key and '
                'value, nonpad_kv_seqlen (new in 24) gives each batch its valid length')
    add('Attention-24-causal', 'Attention-24', 24, [node('Attention', ['Q', 'K', 'V'], ['Y'], is_causal=1)],
        [('Q', F, [B, 2, S, D]), ('K', F, [B, 2, S, D]), ('V', F, [B, 2, S, D])], [('Y', F)],
        feature='Attention-24 4-D causal')
    add('Attention-25', 'Attention-25', 25,
        [node('Attention', ['Q', 'K', 'V'], ['Y'], is_causal=1, left_window_size=2)],
        [('Q', F, [B, 2, 6, D]), ('K', F, [B, 2, 6, D]), ('V', F, [B, 2, 6, D])], [('Y', F)],
        feature='Attention-25 causal sliding window (left_window_size, new in 25)')
    add('Attention-25-causal', 'Attention-25', 25, [node('Attention', ['Q', 'K', 'V'], ['Y'], is_causal=1)],
        [('Q', F, [B, 2, S, D]), ('K', F, [B, 2, S, D]), ('V', F, [B, 2, S, D])], [('Y', F)],
        feature='Attention at opset 25 without the attributes 25 added')
    add('RMSNormalization-23', 'RMSNormalization-23', 23,
        [node('RMSNormalization', ['X', 'scale'], ['Y'], epsilon=1e-6)],
        [('X', F, [2, 4, 8])], [('Y', F)], [f32('scale', rand(8, lo=0.5, hi=1.5))], feature='RMSNormalization')
    add('RMSNormalization-23-axis', 'RMSNormalization-23', 23,
        [node('RMSNormalization', ['X', 'scale'], ['Y'], axis=-2)],
        [('X', F, [2, 3, 4])], [('Y', F)], [f32('scale', rand(3, 4, lo=0.5, hi=1.5))],
        feature='RMSNormalization over the last two axes')
    pos = np.arange(16, dtype=np.float32)[:, None] / (10000 ** (np.arange(4, dtype=np.float32) / 4))
    add('RotaryEmbedding-23', 'RotaryEmbedding-23', 23,
        [node('RotaryEmbedding', ['X', 'cos', 'sin', 'pos'], ['Y'])],
        [('X', F, [1, 2, 4, 8]), ('pos', I64, [1, 4])], [('Y', F)],
        [f32('cos', np.cos(pos)), f32('sin', np.sin(pos))], ranges={'pos': [0, 15]},
        feature='RotaryEmbedding 4-D with position_ids')
    add('RotaryEmbedding-23-3d-interleaved', 'RotaryEmbedding-23', 23,
        [node('RotaryEmbedding', ['X', 'cos', 'sin', 'pos'], ['Y'], interleaved=1, num_heads=2)],
        [('X', F, [2, 3, 16]), ('pos', I64, [2, 3])], [('Y', F)],
        [f32('cos', np.cos(pos)), f32('sin', np.sin(pos))], ranges={'pos': [0, 15]},
        feature='RotaryEmbedding 3-D interleaved with num_heads')
    add('RotaryEmbedding-23-partial', 'RotaryEmbedding-23', 23,
        [node('RotaryEmbedding', ['X', 'cos', 'sin'], ['Y'], rotary_embedding_dim=4)],
        [('X', F, [1, 2, 3, 8])], [('Y', F)],
        [f32('cos', np.cos(pos[None, :3, :2])), f32('sin', np.sin(pos[None, :3, :2]))],
        feature='RotaryEmbedding with rotary_embedding_dim=4 of 8 and caches per position')
    add('SplitToSequence-24', 'SplitToSequence-24', 24,
        [node('SplitToSequence', ['X', 'split'], ['seq'], axis=0),
         node('SequenceAt', ['seq', 'one'], ['Y']), node('ConcatFromSequence', ['seq'], ['Z'], axis=0)],
        [('X', F, [6, 3])], [('Y', F), ('Z', F)], [i64('split', [2, 4]), i64('one', 1)],
        feature='SplitToSequence then SequenceAt and ConcatFromSequence')
    unary('Swish', 24, lo=-4, hi=4, alpha=1.5)
    unary('Swish', 24, lo=-4, hi=4, suffix='-default')
    add('TensorScatter-24', 'TensorScatter-24', 24,
        [node('TensorScatter', ['past', 'update', 'idx'], ['present'])],
        [('past', F, [2, 2, 8, 4]), ('update', F, [2, 2, 3, 4])], [('present', F)], [i64('idx', [1, 4])],
        feature='TensorScatter: a KV-cache write at per-batch indices')
    add('TensorScatter-24-circular', 'TensorScatter-24', 24,
        [node('TensorScatter', ['past', 'update', 'idx'], ['present'], mode='circular', axis=1)],
        [('past', F, [2, 5, 3]), ('update', F, [2, 3, 3])], [('present', F)], [i64('idx', [4, 1])],
        feature='TensorScatter circular, axis 1, wrapping around')
    add('TensorScatter-24-prefill', 'TensorScatter-24', 24,
        [node('TensorScatter', ['past', 'update'], ['present'])],
        [('past', F, [1, 2, 6, 4]), ('update', F, [1, 2, 6, 4])], [('present', F)],
        feature='TensorScatter without write_indices (prefill)')
    add('TopK-24', 'TopK-24', 24, [node('TopK', ['X', 'k'], ['V', 'I'], axis=1, largest=1, sorted=1)],
        [('X', F, [3, 7])], [('V', F), ('I', I64)], [i64('k', [3])], feature='TopK largest sorted')
    add('TopK-24-smallest', 'TopK-24', 24, [node('TopK', ['X', 'k'], ['V', 'I'], axis=0, largest=0)],
        [('X', F, [5, 4])], [('V', F), ('I', I64)], [i64('k', [2])], feature='TopK smallest on axis 0')
    add('TopK-24-bfloat16', 'TopK-24', 24,
        [node('Cast', ['X'], ['xb'], to=BF16), node('TopK', ['xb', 'k'], ['vb', 'I']),
         node('Cast', ['vb'], ['V'], to=F)],
        [('X', F, [3, 7])], [('V', F), ('I', I64)], [i64('k', [2])], bfloat16=True,
        feature='TopK on bfloat16 (new in 24)')
    add('BitCast-26', 'BitCast-26', 26, [node('BitCast', ['X'], ['Y'], to=I32)],
        [('X', F, [2, 5])], [('Y', I32)], feature='BitCast float -> int32')
    add('BitCast-26-roundtrip', 'BitCast-26', 26,
        [node('BitCast', ['X'], ['u'], to=TensorProto.UINT32), node('BitCast', ['u'], ['Y'], to=F)],
        [('X', F, [3, 4])], [('Y', F)], feature='BitCast float -> uint32 -> float')
    add('BitCast-26-int8-uint8', 'BitCast-26', 26, [node('BitCast', ['X'], ['Y'], to=U8)],
        [('X', I8, [6])], [('Y', U8)], ranges={'X': [-128, 127]}, feature='BitCast int8 -> uint8')
    add('CumProd-26', 'CumProd-26', 26, [node('CumProd', ['X', 'axis'], ['Y'])],
        [('X', F, [2, 5])], [('Y', F)], [i64('axis', 1)], ranges={'X': [0.5, 1.5]}, feature='CumProd')
    add('CumProd-26-exclusive-reverse', 'CumProd-26', 26,
        [node('CumProd', ['X', 'axis'], ['Y'], exclusive=1, reverse=1)],
        [('X', F, [3, 4])], [('Y', F)], [init('axis', np.array(-2, np.int32))], ranges={'X': [0.5, 1.5]},
        feature='CumProd exclusive and reverse, int32 axis')


# --- IR 9/10 function features -----------------------------------------------------------------

def value_info_bytes(name, elem_type, shape):
    return vi(name, elem_type, shape).SerializeToString()


def functions():
    # IR 10: two model-local functions with one name and two overloads, value_info in each, called
    # through NodeProto.overload.
    def overload(tag, body_op, constant):
        f = helper.make_function('local', 'ScaleShift', ['x'], ['y'],
                                 [node('Constant', [], ['c'], value=helper.make_tensor('v', F, [], [constant])),
                                  node(body_op, ['x', 'c'], ['y'])],
                                 [helper.make_opsetid('', 21)])
        raw = len_field(13, tag) + len_field(12, value_info_bytes('c', F, [])) + \
            len_field(12, value_info_bytes('y', F, None))
        return with_raw_fields(f, raw)

    calls = [with_raw_fields(node('ScaleShift', ['X'], ['t'], domain='local'), len_field(8, 'mul')),
             with_raw_fields(node('ScaleShift', ['t'], ['Y'], domain='local'), len_field(8, 'add'))]
    add('function-overload-21', 'IR-10-function-overload', 21, calls, [('X', F, [2, 3])], [('Y', F)],
        functions=[overload('mul', 'Mul', 2.0), overload('add', 'Add', 0.5)], extra_opsets=[('local', 1)],
        feature='IR 10: two model-local functions ScaleShift with overloads "mul" and "add", '
                'value_info in each, called with NodeProto.overload',
        check={'function_fields': [12, 13], 'node_overload': 2})
    # IR 9: a function attribute with a default (attribute_proto), used through ref_attr_name;
    # called once without the attribute (the default, 2.0) and once with alpha = 0.5.
    ref = helper.make_attribute('value_float', 0.0)
    ref.ClearField('f')
    ref.ref_attr_name = 'alpha'
    body = [onnx.NodeProto(op_type='Constant', output=['a'], attribute=[ref]),
            node('Mul', ['x', 'a'], ['t']), node('Add', ['t', 'y'], ['out'])]
    f = helper.make_function('local', 'ScaledAdd', ['x', 'y'], ['out'], body, [helper.make_opsetid('', 19)])
    f = with_raw_fields(f, len_field(11, helper.make_attribute('alpha', 2.0).SerializeToString()))
    add('function-attribute-proto-19', 'IR-9-function-attribute_proto', 19,
        [node('ScaledAdd', ['X', 'Z'], ['t'], domain='local'),
         node('ScaledAdd', ['t', 'Z'], ['Y'], domain='local', alpha=0.5)],
        [('X', F, [2, 3]), ('Z', F, [2, 3])], [('Y', F)], functions=[f], extra_opsets=[('local', 1)],
        feature='IR 9: FunctionProto.attribute_proto gives alpha a default of 2.0; one call uses it, '
                'one sets alpha=0.5', check={'function_fields': [11]})


# --- whole models, written the way current exporters write them --------------------------------

def layer_norm_decomposed(x, d, prefix, nodes, inits):
    """ReduceMean(axes input)/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, as older exporters write it."""
    p = prefix
    inits += [i64(f'{p}axes', [-1]), f32(f'{p}two', 2.0), f32(f'{p}eps', 1e-5),
              f32(f'{p}gamma', rand(d, lo=0.5, hi=1.5)), f32(f'{p}beta', rand(d, lo=-0.1, hi=0.1))]
    nodes += [node('ReduceMean', [x, f'{p}axes'], [f'{p}mean']), node('Sub', [x, f'{p}mean'], [f'{p}c']),
              node('Pow', [f'{p}c', f'{p}two'], [f'{p}sq']), node('ReduceMean', [f'{p}sq', f'{p}axes'], [f'{p}var']),
              node('Add', [f'{p}var', f'{p}eps'], [f'{p}ve']), node('Sqrt', [f'{p}ve'], [f'{p}std']),
              node('Div', [f'{p}c', f'{p}std'], [f'{p}n']), node('Mul', [f'{p}n', f'{p}gamma'], [f'{p}g']),
              node('Add', [f'{p}g', f'{p}beta'], [f'{p}out'])]
    return f'{p}out'


def linear(x, din, dout, name, nodes, inits, scale=None):
    s = scale or (1.0 / np.sqrt(din))
    inits += [f32(f'{name}.weight', rand(din, dout, lo=-s, hi=s)), f32(f'{name}.bias', rand(dout, lo=-0.05, hi=0.05))]
    nodes += [node('MatMul', [x, f'{name}.weight'], [f'{name}.mm']),
              node('Add', [f'{name}.mm', f'{name}.bias'], [f'{name}.out'])]
    return f'{name}.out'


def transformer_block_20(dynamic=False):
    """An encoder block as torch's dynamo exporter writes it at opset 20 / IR 10: LayerNormalization,
    attention from MatMul/Softmax, a decomposed LayerNorm with ReduceMean axes inputs, Gelu-20,
    and a mean over the sequence with a ReduceMean axes input."""
    Bn, Sn, Dn, Hn = 2, 8, 16, 2
    nodes, inits = [], []
    inits += [f32('ln1.weight', rand(Dn, lo=0.5, hi=1.5)), f32('ln1.bias', rand(Dn, lo=-0.1, hi=0.1)),
              i64('heads_shape', [0, 0, Hn, Dn // Hn] if dynamic else [Bn, Sn, Hn, Dn // Hn]),
              i64('model_shape', [0, 0, Dn] if dynamic else [Bn, Sn, Dn]),
              f32('inv_sqrt_d', 1.0 / np.sqrt(Dn // Hn)), i64('seq_axis', [1])]
    nodes.append(node('LayerNormalization', ['x', 'ln1.weight', 'ln1.bias'], ['ln1'], axis=-1, epsilon=1e-5))
    heads = {}
    for n in 'qkv':
        out = linear('ln1', Dn, Dn, f'attn.{n}', nodes, inits)
        nodes += [node('Reshape', [out, 'heads_shape'], [f'{n}.r']),
                  node('Transpose', [f'{n}.r'], [f'{n}.t'], perm=[0, 2, 3, 1] if n == 'k' else [0, 2, 1, 3])]
        heads[n] = f'{n}.t'
    nodes += [node('MatMul', [heads['q'], heads['k']], ['scores']), node('Mul', ['scores', 'inv_sqrt_d'], ['scaled']),
              node('Softmax', ['scaled'], ['probs'], axis=-1), node('MatMul', ['probs', heads['v']], ['ctx']),
              node('Transpose', ['ctx'], ['ctx.t'], perm=[0, 2, 1, 3]), node('Reshape', ['ctx.t', 'model_shape'], ['ctx.r'])]
    o = linear('ctx.r', Dn, Dn, 'attn.out', nodes, inits)
    nodes.append(node('Add', ['x', o], ['res1']))
    ln2 = layer_norm_decomposed('res1', Dn, 'ln2.', nodes, inits)
    h = linear(ln2, Dn, 4 * Dn, 'mlp.fc1', nodes, inits)
    nodes.append(node('Gelu', [h], ['mlp.act']))
    m = linear('mlp.act', 4 * Dn, Dn, 'mlp.fc2', nodes, inits)
    nodes += [node('Add', ['res1', m], ['y']), node('ReduceMean', ['y', 'seq_axis'], ['pooled'], keepdims=0)]
    if dynamic:
        add('transformer-block-20-dynamic', 'model', 20, nodes, [('x', F, ['batch', 'seq', Dn])],
            [('y', F), ('pooled', F)], inits, ir=10, feed_shapes={'x': [Bn, Sn, Dn]}, tail=False,
            feature='the transformer block with symbolic batch and sequence dims (Reshape with 0s)')
        return
    add('transformer-block-20', 'model', 20, nodes, [('x', F, [Bn, Sn, Dn])], [('y', F), ('pooled', F)], inits,
        ir=10, tail=False, feature='transformer encoder block as dynamo exports it: opset 20, IR 10, LayerNormalization, '
                       'decomposed LayerNorm with ReduceMean axes inputs, Gelu-20')


def llm_block_23():
    """A decoder block with the opset-23 ops: RMSNormalization, RotaryEmbedding, Attention (GQA,
    causal), a SiLU-gated MLP."""
    Sn, Dn, Hq, Hkv, hd = 6, 32, 4, 2, 8
    nodes, inits = [], []
    pos = np.arange(16, dtype=np.float32)[:, None] / (10000 ** (np.arange(hd // 2, dtype=np.float32) / (hd // 2)))
    inits += [f32('norm1.weight', rand(Dn, lo=0.5, hi=1.5)), f32('norm2.weight', rand(Dn, lo=0.5, hi=1.5)),
              f32('cos_cache', np.cos(pos)), f32('sin_cache', np.sin(pos)),
              i64('q_shape', [1, Sn, Hq, hd]), i64('kv_shape', [1, Sn, Hkv, hd]), i64('model_shape', [1, Sn, Dn])]
    nodes.append(node('RMSNormalization', ['x', 'norm1.weight'], ['h1'], epsilon=1e-6))
    heads = {}
    for n, width, shape in [('q', Hq * hd, 'q_shape'), ('k', Hkv * hd, 'kv_shape'), ('v', Hkv * hd, 'kv_shape')]:
        inits.append(f32(f'{n}_proj.weight', rand(Dn, width, lo=-0.2, hi=0.2)))
        nodes += [node('MatMul', ['h1', f'{n}_proj.weight'], [f'{n}.mm']),
                  node('Reshape', [f'{n}.mm', shape], [f'{n}.r']),
                  node('Transpose', [f'{n}.r'], [f'{n}.t'], perm=[0, 2, 1, 3])]
        heads[n] = f'{n}.t'
    for n in 'qk':
        nodes.append(node('RotaryEmbedding', [heads[n], 'cos_cache', 'sin_cache', 'position_ids'], [f'{n}.rot']))
        heads[n] = f'{n}.rot'
    nodes += [node('Attention', [heads['q'], heads['k'], heads['v']], ['attn'], is_causal=1),
              node('Transpose', ['attn'], ['attn.t'], perm=[0, 2, 1, 3]), node('Reshape', ['attn.t', 'model_shape'], ['attn.r'])]
    inits.append(f32('o_proj.weight', rand(Dn, Dn, lo=-0.2, hi=0.2)))
    nodes += [node('MatMul', ['attn.r', 'o_proj.weight'], ['o']), node('Add', ['x', 'o'], ['res1']),
              node('RMSNormalization', ['res1', 'norm2.weight'], ['h2'], epsilon=1e-6)]
    inits += [f32('gate.weight', rand(Dn, 2 * Dn, lo=-0.2, hi=0.2)), f32('up.weight', rand(Dn, 2 * Dn, lo=-0.2, hi=0.2)),
              f32('down.weight', rand(2 * Dn, Dn, lo=-0.2, hi=0.2))]
    nodes += [node('MatMul', ['h2', 'gate.weight'], ['g']), node('Sigmoid', ['g'], ['gs']), node('Mul', ['g', 'gs'], ['silu']),
              node('MatMul', ['h2', 'up.weight'], ['u']), node('Mul', ['silu', 'u'], ['gu']),
              node('MatMul', ['gu', 'down.weight'], ['d']), node('Add', ['res1', 'd'], ['y'])]
    add('llm-block-23', 'model', 23, nodes, [('x', F, [1, Sn, Dn]), ('position_ids', I64, [1, Sn])], [('y', F)], inits,
        ranges={'position_ids': [0, 15]}, tail=False,
        feature='decoder block at opset 23 / IR 11: RMSNormalization, RotaryEmbedding, Attention (GQA, causal), '
                'SiLU-gated MLP')


def resnet_22():
    """A small ResNet-style CNN at opset 22 / IR 10: every Conv is one fast1 may lower to bfloat16."""
    nodes, inits = [], []
    count = [0]

    def conv_bn(x, cin, cout, k, stride, relu=True):
        count[0] += 1
        n = f'conv{count[0]}'
        inits.extend([f32(f'{n}.weight', rand(cout, cin, k, k, lo=-1, hi=1) * np.sqrt(2.0 / (cin * k * k))),
                      f32(f'{n}.bn.scale', rand(cout, lo=0.5, hi=1.5)), f32(f'{n}.bn.bias', rand(cout, lo=-0.1, hi=0.1)),
                      f32(f'{n}.bn.mean', rand(cout, lo=-0.1, hi=0.1)), f32(f'{n}.bn.var', rand(cout, lo=0.5, hi=1.5))])
        nodes.extend([node('Conv', [x, f'{n}.weight'], [f'{n}.out'], kernel_shape=[k, k], strides=[stride, stride],
                           pads=[k // 2] * 4),
                      node('BatchNormalization', [f'{n}.out', f'{n}.bn.scale', f'{n}.bn.bias', f'{n}.bn.mean', f'{n}.bn.var'],
                           [f'{n}.bn'], epsilon=1e-5)])
        if relu:
            nodes.append(node('Relu', [f'{n}.bn'], [f'{n}.relu']))
            return f'{n}.relu'
        return f'{n}.bn'

    def block(x, cin, cout, stride):
        a = conv_bn(x, cin, cout, 3, stride)
        b = conv_bn(a, cout, cout, 3, 1, relu=False)
        skip = x if stride == 1 and cin == cout else conv_bn(x, cin, cout, 1, stride, relu=False)
        out = f'block{count[0]}'
        nodes.extend([node('Add', [b, skip], [out + '.add']), node('Relu', [out + '.add'], [out])])
        return out

    x = conv_bn('image', 3, 8, 3, 1)
    nodes.append(node('MaxPool', [x], ['pool'], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = block('pool', 8, 8, 1)
    x = block(x, 8, 16, 2)
    nodes.extend([node('GlobalAveragePool', [x], ['gap']), node('Flatten', ['gap'], ['flat'])])
    inits.extend([f32('fc.weight', rand(10, 16, lo=-0.3, hi=0.3)), f32('fc.bias', rand(10, lo=-0.1, hi=0.1))])
    nodes.append(node('Gemm', ['flat', 'fc.weight', 'fc.bias'], ['logits'], transB=1))
    add('resnet-22', 'model', 22, nodes, [('image', F, [2, 3, 32, 32])], [('logits', F)], inits, tail=False,
        feature='ResNet-style CNN at opset 22 / IR 10: Conv/BatchNormalization/Relu/MaxPool/GlobalAveragePool/Gemm, '
                'two residual blocks, 6 Conv')


# --- writing -------------------------------------------------------------------------------------

def verify_raw_fields(data, check):
    """Walks the written ModelProto with the wire format: the function fields and node overloads
    appended above must be present (ONNX 1.12's protobuf would silently drop nothing, but check)."""
    top = wire_fields(data)
    funcs = [v for n, w, v in top if n == 25]
    for want in check.get('function_fields', []):
        if not all(any(n == want for n, _, _ in wire_fields(f)) for f in funcs) or not funcs:
            raise SystemExit(f'FunctionProto field {want} missing in the written model')
    if 'node_overload' in check:
        graph = next(v for n, w, v in top if n == 7)
        nodes = [v for n, w, v in wire_fields(graph) if n == 1]
        found = sum(1 for nd in nodes if any(n == 8 for n, _, _ in wire_fields(nd)))
        if found != check['node_overload']:
            raise SystemExit(f'NodeProto.overload on {found} nodes, expected {check["node_overload"]}')


def move_to_external(model, names, outdir, location):
    """Moves the named initializers' raw_data to OUTDIR/LOCATION (TensorProto.external_data:
    location, offset, length; offsets 64-byte aligned)."""
    blob = bytearray()
    for t in model.graph.initializer:
        if t.name not in names:
            continue
        if not t.HasField('raw_data'):
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
        blob += bytes(-len(blob) % 64)
        offset, payload = len(blob), t.raw_data
        blob += payload
        t.ClearField('raw_data')
        t.data_location = TensorProto.EXTERNAL
        for k, v in [('location', location), ('offset', str(offset)), ('length', str(len(payload)))]:
            t.external_data.add(key=k, value=v)
    with open(os.path.join(outdir, location), 'wb') as out:
        out.write(blob)


def later_additions():
    """Models added after the first measurements (kept last: the seeded values above stay)."""
    # What npucc cannot know must be refused in one line (issue 17, item 5); ORT refuses them too.
    relu = [node('Relu', ['X'], ['Y'])]
    add('opset-27-beyond-26', 'refusal', 26, relu, [('X', F, [2, 3])], [('Y', F)], ir=13,
        refuse=('must', ['27']), feature='an ai.onnx opset above 26 (set below)')
    CASES[-1]['model'].opset_import[0].version = 27
    CASES[-1]['opset'] = 27
    add('IR-14-beyond-13', 'refusal', 26, relu, [('X', F, [2, 3])], [('Y', F)], ir=14,
        refuse=('must', ['14']), feature='IR version 14, newer than any released one')
    bad = TensorProto()
    bad.name = 'W'
    bad.data_type = 27
    bad.dims.extend([2, 3])
    bad.raw_data = bytes(6)
    add('element-type-27-unknown', 'refusal', 26, [node('Cast', ['W'], ['w'], to=F), node('Add', ['X', 'w'], ['Y'])],
        [('X', F, [2, 3])], [('Y', F)], [bad], refuse=('must', ['27']),
        feature='an initializer of element type 27, which no IR version defines')
    add('NoSuchOp-26-unknown-op', 'refusal', 26, [node('NoSuchOp', ['X'], ['Y'])], [('X', F, [2, 3])], [('Y', F)],
        refuse=('must', ['NoSuchOp']), feature='an ai.onnx operator no opset defines')
    # new element types and weights in external data: the byte size and packing must hold there too
    add('DequantizeLinear-21-int4-external', 'DequantizeLinear-21', 21,
        [node('DequantizeLinear', ['W', 'scale'], ['w'], axis=0, block_size=2), node('MatMul', ['X', 'w'], ['Y'])],
        [('X', F, [3, 5])], [('Y', F)], [new_type_tensor('W', 'int4', [5, 7]), f32('scale', rand(3, 7, lo=0.01, hi=0.1))],
        new_types=['int4'], external=['W', 'scale'],
        feature='int4 weights (odd element count: 35 nibbles in 18 bytes) in external data')
    add('Cast-19-float8e5m2-external', 'Cast-19', 19,
        [node('Cast', ['W'], ['w'], to=F), node('Mul', ['X', 'w'], ['Y'])],
        [('X', F, [3, 5])], [('Y', F)], [new_type_tensor('W', 'float8e5m2', [3, 5])], new_types=['float8e5m2'],
        external=['W'], feature='a float8e5m2 initializer in external data')
    add('Conv-22-external', 'Conv-22', 22, [node('Conv', ['X', 'W', 'B'], ['Y'], pads=[1, 1, 1, 1])],
        [('X', F, [1, 3, 8, 8])], [('Y', F)], [f32('W', rand(4, 3, 3, 3, lo=-0.3, hi=0.3)), f32('B', rand(4))],
        external=['W', 'B'], feature='Conv-22 with its weights in external data')
    transformer_block_20(dynamic=True)
    new_type_data_movement()
    genai_blocks_21()


def genai_blocks_21():
    """Decoder blocks at opset 21 / IR 10 the way onnxruntime-genai's model builder writes them for
    the CPU: ORT contrib ops for the normalisation and com.microsoft GroupQueryAttention (rotary
    inside, head size 16 as its CPU kernel requires). The first uses SimplifiedLayerNormalization
    in the ai.onnx domain, which is not an ONNX operator (ORT registers it there): npucc may refuse
    it naming the op. The second has only com.microsoft ops besides ONNX's."""
    Sn, Dn, Hq, Hkv, hd = 6, 32, 2, 1, 16
    pos = np.arange(16, dtype=np.float32)[:, None] / (10000 ** (np.arange(hd // 2, dtype=np.float32) / (hd // 2)))
    for variant in ['', '-contrib']:
        inits = [f32('norm1.weight', rand(Dn, lo=0.5, hi=1.5)), f32('norm2.weight', rand(Dn, lo=0.5, hi=1.5)),
                 f32('q_proj.weight', rand(Dn, Hq * hd, lo=-0.2, hi=0.2)),
                 f32('k_proj.weight', rand(Dn, Hkv * hd, lo=-0.2, hi=0.2)),
                 f32('v_proj.weight', rand(Dn, Hkv * hd, lo=-0.2, hi=0.2)),
                 f32('o_proj.weight', rand(Hq * hd, Dn, lo=-0.2, hi=0.2)),
                 f32('fc.weight', rand(Dn, Dn, lo=-0.2, hi=0.2)),
                 f32('cos_cache', np.cos(pos)), f32('sin_cache', np.sin(pos))]
        if variant:
            norm1 = node('SkipSimplifiedLayerNormalization', ['x', 'zeros', 'norm1.weight'], ['h1'], domain='com.microsoft',
                         epsilon=1e-6)
            inits.append(f32('zeros', np.zeros([1, Sn, Dn], np.float32)))
        else:
            norm1 = node('SimplifiedLayerNormalization', ['x', 'norm1.weight'], ['h1'], epsilon=1e-6, axis=-1)
        nodes = [norm1] + [node('MatMul', ['h1', f'{n}_proj.weight'], [n]) for n in 'qkv'] + [
            node('GroupQueryAttention', ['q', 'k', 'v', '', '', 'seqlens_k', 'total_sequence_length',
                                         'cos_cache', 'sin_cache'], ['attn', 'present_key', 'present_value'],
                 domain='com.microsoft', num_heads=Hq, kv_num_heads=Hkv, do_rotary=1),
            node('MatMul', ['attn', 'o_proj.weight'], ['o']),
            node('SkipSimplifiedLayerNormalization', ['o', 'x', 'norm2.weight'], ['h2', '', '', 'res1'],
                 domain='com.microsoft', epsilon=1e-6),
            node('MatMul', ['h2', 'fc.weight'], ['f']), node('Add', ['res1', 'f'], ['y'])]
        add(f'genai-block-21{variant}', 'model', 21, nodes,
            [('x', F, [1, Sn, Dn]), ('seqlens_k', I32, [1]), ('total_sequence_length', I32, [])], [('y', F)], inits,
            values={'seqlens_k': Sn - 1, 'total_sequence_length': Sn}, extra_opsets=[('com.microsoft', 1)],
            out_shapes={'y': [1, Sn, Dn]}, tail=False,
            refuse=('never', []) if variant else ('may', ['SimplifiedLayerNormalization']),
            feature='decoder block as onnxruntime-genai writes it at opset 21 / IR 10: com.microsoft '
                    'GroupQueryAttention (do_rotary) and SkipSimplifiedLayerNormalization, ' +
                    ('com.microsoft ops only' if variant else
                     'SimplifiedLayerNormalization in the ai.onnx domain (an ORT contrib op, not ONNX\'s)'))


def new_type_data_movement():
    """The operators whose new versions only add element types, carrying the type they added
    (one per opset: float8e4m3fn at 19, int4 at 21, float4e2m1 at 23, float8e8m0 at 24, int2 at 25)
    on 15 elements (an odd count: the 4- and 2-bit packings end mid-byte): the value is cast from
    float, moved by the op, cast back."""
    for opset, t in [(19, 'float8e4m3fn'), (21, 'int4'), (23, 'float4e2m1'), (24, 'float8e8m0'), (25, 'int2')]:
        code = NEW_TYPES[t][0]
        rng_x = {'X': [0.25, 4.0]} if t == 'float8e8m0' else {'X': [-1.5, 1.5]}
        # (Pad-19 takes no float8: its new feature is the wrap mode)
        ops = [op for op in WIDENED[opset] if op in ('Flatten', 'If', 'Loop', 'Pad', 'Reshape', 'Scan', 'Shape',
                                                   'Size', 'Squeeze', 'Transpose', 'Unsqueeze')
               and not (op == 'Pad' and opset == 19)]
        for op in ops:
            name = f'{op}-{opset}-{t}'
            pre = [node('Cast', ['X'], ['xt'], to=code)]
            post = lambda v: [node('Cast', [v], ['Y'], to=F)]
            inits = []
            outs = [('Y', F)]
            shapes = {'Y': [3, 1, 5]}
            if op == 'Flatten':
                body, shapes = [node('Flatten', ['xt'], ['yt'], axis=2)], {'Y': [3, 5]}
            elif op == 'Reshape':
                body, shapes = [node('Reshape', ['xt', 'shape'], ['yt'])], {'Y': [5, 3]}
                inits = [i64('shape', [5, 3])]
            elif op == 'Squeeze':
                body, shapes = [node('Squeeze', ['xt', 'axes'], ['yt'])], {'Y': [3, 5]}
                inits = [i64('axes', [1])]
            elif op == 'Unsqueeze':
                body, shapes = [node('Unsqueeze', ['xt', 'axes'], ['yt'])], {'Y': [1, 3, 1, 5]}
                inits = [i64('axes', [0])]
            elif op == 'Transpose':
                body, shapes = [node('Transpose', ['xt'], ['yt'], perm=[2, 0, 1])], {'Y': [5, 3, 1]}
            elif op == 'Pad':
                body, shapes = [node('Pad', ['xt', 'pads', '', 'axes'], ['yt'])], {'Y': [3, 1, 8]}
                inits = [i64('pads', [1, 2]), i64('axes', [2])]
            elif op in ('Shape', 'Size'):
                body = [node(op, ['xt'], ['s']), node('Identity', ['xt'], ['yt'])]
                outs.append(('s', I64))
                shapes['s'] = [3] if op == 'Shape' else []
            elif op == 'If':
                then_g = helper.make_graph([node('Identity', ['xt'], ['a'])], 'then', [], [vi('a', code, [3, 1, 5])])
                else_g = helper.make_graph([node('Identity', ['other'], ['b'])], 'else', [], [vi('b', code, [3, 1, 5])])
                body = [node('If', ['cond'], ['yt'], then_branch=then_g, else_branch=else_g)]
                inits = [new_type_tensor('other', t, [3, 1, 5])]
            elif op == 'Loop':
                loop_body = helper.make_graph(
                    [node('Identity', ['c_in'], ['c_out']), node('Identity', ['xt'], ['v_out']),
                     node('Identity', ['v_in'], ['scan'])],
                    'body', [vi('i', I64, []), vi('c_in', BOOL, []), vi('v_in', code, [3, 1, 5])],
                    [vi('c_out', BOOL, []), vi('v_out', code, [3, 1, 5]), vi('scan', code, [3, 1, 5])])
                body = [node('Loop', ['M', '', 'v0'], ['yt', 'st'], body=loop_body), node('Cast', ['st'], ['S'], to=F)]
                inits = [i64('M', 2), new_type_tensor('v0', t, [3, 1, 5])]
                outs.append(('S', F))
                shapes['S'] = [2, 3, 1, 5]
            elif op == 'Scan':
                scan_body = helper.make_graph(
                    [node('Identity', ['x_t'], ['s_out']), node('Identity', ['s_in'], ['y_t'])],
                    'body', [vi('s_in', code, [1, 5]), vi('x_t', code, [1, 5])],
                    [vi('s_out', code, [1, 5]), vi('y_t', code, [1, 5])])
                body = [node('Scan', ['s0', 'xt'], ['st', 'yt'], body=scan_body, num_scan_inputs=1),
                        node('Cast', ['st'], ['S'], to=F)]
                inits = [new_type_tensor('s0', t, [1, 5])]
                outs.append(('S', F))
                shapes['S'] = [1, 5]
            inputs = [('X', F, [3, 1, 5])] + ([('cond', BOOL, [])] if op == 'If' else [])
            add(name, f'{op}-{opset}', opset, pre + body + post('yt'), inputs, outs, inits, ranges=rng_x,
                new_types=[t], out_shapes=shapes, feature=f'{op} carrying {t} (15 elements)')


# --- the bundled real models, raised to opset 22 / IR 10 the way current exporters write them ------

# name, file under TESTDATA/models, feed shapes, values, ranges (as tests/e2e/test_ort_equivalence.sh,
# except ppocrv4_det: on uniform [0, 1) noise its detection map is ~1e-5 everywhere, where a float16
# graph's cosine says little (0.9967 at max abs error 8e-6, at its own opset 11 too); on [-1, 1),
# as tests/e2e/test_precision_real_models.sh feeds it, the map has signal and the cosine means something)
# Open gaps, each held at the figure it reaches so a regression still fails (issue 17's notes).
KNOWN_GAPS = {
    'real-ppocrv4_det-22': {'fast1/emulation': {
        'min_cosine': 0.93,
        'why': 'every Conv of the detector in bfloat16 (opset 22): 0.9376 here, 0.9898 on the '
               'precision suite\'s input, with its 24 decomposed HardSwish fused (0.8544 / 0.9777 '
               'before); its Conv weights rounded to bfloat16 alone give 0.982 on this input, and on '
               'noise the figure moves by 0.02 from input to input (npucc-precision(7))'}},
}

REAL_MODELS = [
    ('ppocrv4_det', 'ppocrv4_det.onnx', {'x': [1, 3, 320, 320]}, {}, {}),
    ('ppocr_cls', 'ppocr_cls.onnx', {'x': [1, 3, 48, 192]}, {}, {'x': [0, 1]}),
    ('oww_hello_deepa', 'oww_hello_deepa.onnx', {'onnx::Flatten_0': [1, 25, 96]}, {}, {}),
    ('silero_vad_legacy', 'silero_vad_legacy.onnx', {'input': [1, 512], 'h': [2, 1, 64], 'c': [2, 1, 64]},
     {'sr': 16000}, {}),
    ('resnet_small', 'torch/resnet_small.onnx', {'image': [2, 3, 64, 64]}, {}, {}),
    ('transformer_encoder', 'torch/transformer_encoder.onnx', {'tokens': [2, 16]}, {}, {'tokens': [0, 99]}),
    ('lstm_tagger', 'torch/lstm_tagger.onnx', {'features': [2, 10, 20], 'h0': [2, 2, 24], 'c0': [2, 2, 24]}, {}, {}),
]
REDUCE_OPS = {'ReduceMean', 'ReduceMax', 'ReduceMin', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum',
              'ReduceLogSumExp', 'ReduceSumSquare', 'ReduceSum'}


def raise_opset(model, target):
    """Rewrites `model` (ai.onnx opset 9..17) for opset `target` >= 18, with the changes the
    Changelog and the older operator versions make necessary: axes attributes of Reduce* (18;
    ReduceSum 13), Squeeze/Unsqueeze (13) and Split's split (13) become inputs, Split without one
    gets num_outputs (18), Clip min/max (11) and Slice starts/ends/axes (10) become inputs,
    GridSample's mode names change (20). Softmax/LogSoftmax/Hardmax before 13 coerce their input
    to 2-D: only their last-axis use (the same at 13) is accepted."""
    source = next(o.version for o in model.opset_import if o.domain in ('', 'ai.onnx'))
    counter = [0]

    def const(nodes, values, dtype=np.int64):
        counter[0] += 1
        name = f'raised_opset.c{counter[0]}'
        nodes.append(node('Constant', [], [name], value=numpy_helper.from_array(np.asarray(values, dtype), name)))
        return name

    def take(n, attr):
        for i, a in enumerate(n.attribute):
            if a.name == attr:
                value = helper.get_attribute_value(a)
                del n.attribute[i]
                return value
        return None

    def rewrite(graph):
        nodes = []
        for n in graph.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    rewrite(a.g)
            op = n.op_type if n.domain in ('', 'ai.onnx') else None
            if op in REDUCE_OPS and (op != 'ReduceSum' or source < 13):
                axes = take(n, 'axes')
                if axes is not None:
                    n.input.append(const(nodes, axes))
            elif op in ('Squeeze', 'Unsqueeze') and source < 13:
                axes = take(n, 'axes')
                if axes is not None:
                    n.input.append(const(nodes, axes))
            elif op == 'Split':
                split = take(n, 'split') if source < 13 else None
                if split is not None:
                    n.input.append(const(nodes, split))
                if len(n.input) < 2 or not n.input[1]:
                    n.attribute.append(helper.make_attribute('num_outputs', len(n.output)))
            elif op == 'Clip' and source < 11:
                lo, hi = take(n, 'min'), take(n, 'max')
                n.input.extend([const(nodes, lo if lo is not None else -3.4028234663852886e38, np.float32),
                                const(nodes, hi if hi is not None else 3.4028234663852886e38, np.float32)])
            elif op == 'Slice' and source < 10:
                starts, ends, axes = take(n, 'starts'), take(n, 'ends'), take(n, 'axes')
                n.input.extend([const(nodes, starts), const(nodes, ends)] + ([const(nodes, axes)] if axes else []))
            elif op == 'GridSample' and source < 20:
                for a in n.attribute:
                    if a.name == 'mode':
                        a.s = {b'bilinear': b'linear', b'bicubic': b'cubic'}.get(a.s, a.s)
            elif op in ('Softmax', 'LogSoftmax', 'Hardmax') and source < 13:
                axis = next((a.i for a in n.attribute if a.name == 'axis'), 1)
                if axis not in (-1, 1):
                    raise SystemExit(f'{op} with axis {axis} before opset 13: not raised')
                # rank 2 (ppocr_cls's classifier): axis 1 is the last axis either way
            elif op in ('Upsample', 'Scatter', 'Dropout') and source < 13:
                raise SystemExit(f'{op} at opset {source}: not raised')
            nodes.append(n)
        del graph.node[:]
        graph.node.extend(nodes)

    rewrite(model.graph)
    for o in model.opset_import:
        if o.domain in ('', 'ai.onnx'):
            o.version = target
    model.ir_version = IR_OF_OPSET[target]
    model.producer_name += f' (raised to opset {target} by make_opset_corpus.py)'


def real_models(testdata):
    for name, file, shapes, values, ranges in REAL_MODELS:
        path = os.path.join(testdata, 'models', file)
        for target in [22] + ([20] if name == 'transformer_encoder' else []):
            model = onnx.load(path)
            raise_opset(model, target)
            case_name = f'real-{name}-{target}'
            CASES.append({'name': case_name, 'section': 'real-model', 'opset': target, 'ir': model.ir_version,
                          'model': model, 'feature': f'testdata/models/{file} raised to opset {target} / IR '
                                                    f'{model.ir_version} (Reduce axes as inputs, ...)',
                          'refuse': ('never', []), 'external': [], 'explicit_shapes': True,
                          'shapes': shapes, 'ranges': ranges, 'values': values, 'new_types': [],
                          'bfloat16': False, 'check': None,
                          'known_gaps': KNOWN_GAPS.get(case_name, {})})


def build_all(testdata=None):
    opset18()
    for opset, ops in WIDENED.items():
        for op in ops:
            widened(op, opset)
    opset19_20()
    opset21()
    opset22()
    opset23_26()
    new_type_models()
    functions()
    transformer_block_20()
    llm_block_23()
    resnet_22()
    later_additions()
    if testdata:
        real_models(testdata)


def changelog_sections(path):
    return re.findall(r'^### <a name="([A-Za-z0-9]+-\d+)">', open(path, encoding='utf-8').read(), flags=re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('outdir')
    ap.add_argument('--only', help='write only the models whose name matches this regex')
    ap.add_argument('--check-changelog', metavar='FILE')
    ap.add_argument('--testdata', metavar='DIR', help="npucc's testdata folder: also raise its real models "
                                                       '(testdata/models) to opset 22 / IR 10')
    a = ap.parse_args()
    build_all(a.testdata)
    names = [c['name'] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f'duplicate model names: {sorted(dup)}')
    unknown = (set(EXPECT) | set(OUTPUT_SHAPES) - {'_doc'}) - set(names)
    both = {c['name'] for c in CASES if c['name'] in OUTPUT_SHAPES and c['explicit_shapes']}
    if both:
        raise SystemExit(f'output shapes both in the generator and opset_corpus_outputs.json: {sorted(both)}')
    if unknown:
        raise SystemExit(f'EXPECT or opset_corpus_outputs.json name unknown models: {sorted(unknown)}')
    status = 0
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'opset_corpus_sections.txt'), encoding='utf-8') as f:
        required = [line.strip() for line in f if line.strip() and not line.startswith('#')]
    covered = {c['section'] for c in CASES}
    uncovered = [sec for sec in required if sec not in covered]
    if uncovered:
        raise SystemExit(f'no model for {len(uncovered)} operator versions: {", ".join(uncovered)}')
    if a.check_changelog:
        covered = {c['section'] for c in CASES}
        sections = changelog_sections(a.check_changelog)
        missing = [s for s in sections if s not in covered]
        for s in missing:
            print(f'no model for {s}', file=sys.stderr)
        print(f'{len(sections) - len(missing)} of {len(sections)} Changelog sections have a model')
        status = 1 if missing else 0
    os.makedirs(a.outdir, exist_ok=True)
    cases = []
    for c in CASES:
        if a.only and not re.search(a.only, c['name']):
            continue
        file = f'{c["name"]}.onnx'
        if c['external']:
            move_to_external(c['model'], c['external'], a.outdir, f'{c["name"]}.data')
        data = c['model'].SerializeToString()
        if c['check']:
            verify_raw_fields(data, c['check'])
        with open(os.path.join(a.outdir, file), 'wb') as out:
            out.write(data)
        expect, reason = EXPECT.get(c['name'], ('run', ''))
        entry = {'name': c['name'], 'model': file, 'section': c['section'], 'opset': c['opset'], 'ir': c['ir'],
                 'feature': c['feature'], 'shapes': c['shapes'], 'ranges': c['ranges'], 'values': c['values'],
                 'new_types': c['new_types'], 'bfloat16': c['bfloat16'], 'expect': expect,
                 'refuse': c['refuse'][0], 'refusal_names': c['refuse'][1]}
        if c.get('known_gaps'):
            entry['known_gaps'] = c['known_gaps']
        if c['external']:
            entry['external_data'] = f'{c["name"]}.data'
        if reason:
            entry['reason'] = reason
        if c['check']:
            entry['function_fields'] = c['check']['function_fields']  # must survive a compile
        cases.append(entry)
    with open(os.path.join(a.outdir, 'cases.json'), 'w') as out:
        json.dump({'generator': 'tests/tools/make_opset_corpus.py', 'cases': cases}, out, indent=1)
        out.write('\n')
    print(f'wrote {len(cases)} models to {a.outdir}')
    return status


if __name__ == '__main__':
    sys.exit(main())
