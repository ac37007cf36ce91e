'use strict';
// Decodes an onnx.TensorProto (the backend test suite's input_N.pb / output_N.pb files) into
// an onnxruntime Tensor. Written by hand because no protobuf library is available offline and
// TensorProto is a flat message: a varint / length-delimited walk suffices.

const ort = require('onnxruntime-node');

// onnx.TensorProto.DataType -> onnxruntime-node tensor type name.
const k_ort_type = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
  8: 'string', 9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64',
};

const k_array = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
  float16: Uint16Array, float64: Float64Array, uint32: Uint32Array, uint64: BigUint64Array,
};

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.pos = 0;
  }
  done() { return this.pos >= this.bytes.length; }
  varint() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.bytes.length) {
        throw new Error('truncated varint');
      }
      const byte = this.bytes[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        return result;
      }
      shift += 7n;
    }
  }
  take(length) {
    const slice = this.bytes.subarray(this.pos, this.pos + length);
    if (slice.length !== length) {
      throw new Error('truncated field');
    }
    this.pos += length;
    return slice;
  }
  skip(wire) {
    if (wire === 0) { this.varint(); }
    else if (wire === 1) { this.take(8); }
    else if (wire === 2) { this.take(Number(this.varint())); }
    else if (wire === 5) { this.take(4); }
    else { throw new Error(`unsupported wire type ${wire}`); }
  }
}

// Repeated scalar fields may arrive packed (wire 2) or one per tag; both are accepted.
function read_repeated(reader, wire, values, read_one) {
  if (wire === 2) {
    const inner = new Reader(reader.take(Number(reader.varint())));
    while (!inner.done()) {
      values.push(read_one(inner));
    }
  } else {
    values.push(read_one(reader));
  }
}

const fixed32 = (r) => Buffer.from(r.take(4)).readFloatLE(0);
const fixed64 = (r) => Buffer.from(r.take(8)).readDoubleLE(0);

function decode(bytes) {
  const reader = new Reader(bytes);
  const t = { dims: [], data_type: 0, name: '', raw: null, floats: [], ints32: [], ints64: [],
              strings: [], doubles: [], uints64: [], external: false };
  while (!reader.done()) {
    const key = Number(reader.varint());
    const field = key >> 3;
    const wire = key & 7;
    switch (field) {
      case 1: read_repeated(reader, wire, t.dims, (r) => Number(BigInt.asIntN(64, r.varint()))); break;
      case 2: t.data_type = Number(reader.varint()); break;
      case 4: read_repeated(reader, wire, t.floats, fixed32); break;
      case 5: read_repeated(reader, wire, t.ints32, (r) => Number(BigInt.asIntN(32, r.varint()))); break;
      case 6: t.strings.push(Buffer.from(reader.take(Number(reader.varint()))).toString('utf8')); break;
      case 7: read_repeated(reader, wire, t.ints64, (r) => BigInt.asIntN(64, r.varint())); break;
      case 8: t.name = Buffer.from(reader.take(Number(reader.varint()))).toString('utf8'); break;
      case 9: t.raw = reader.take(Number(reader.varint())); break;
      case 10: read_repeated(reader, wire, t.doubles, fixed64); break;
      case 11: read_repeated(reader, wire, t.uints64, (r) => BigInt.asUintN(64, r.varint())); break;
      case 13: t.external = true; reader.skip(wire); break;
      default: reader.skip(wire);
    }
  }
  return t;
}

// Returns {name, tensor} or throws with a reason when the file is not a plain tensor
// (SequenceProto / OptionalProto files of the suite, external data, unsupported types).
function read_tensor_proto(bytes) {
  const t = decode(bytes);
  const type = k_ort_type[t.data_type];
  if (!type) {
    throw new Error(`unsupported TensorProto data_type ${t.data_type}`);
  }
  if (t.external) {
    throw new Error('external data in an input file is not supported');
  }
  const count = t.dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    data = t.strings;
  } else if (t.raw) {
    const Array_ = k_array[type];
    const copy = new Uint8Array(t.raw); // aligned copy
    data = new Array_(copy.buffer, 0, copy.byteLength / Array_.BYTES_PER_ELEMENT);
  } else {
    const Array_ = k_array[type];
    let source;
    if (type === 'float32') { source = t.floats; }
    else if (type === 'float64') { source = t.doubles; }
    else if (type === 'int64') { source = t.ints64; }
    else if (type === 'uint64' || type === 'uint32') { source = t.uints64; }
    else { source = t.ints32; }
    data = new Array_(count);
    for (let i = 0; i < count; ++i) {
      data[i] = source[i];
    }
    if (source.length !== count) {
      throw new Error(`tensor ${t.name} holds ${source.length} values for ${count} elements`);
    }
  }
  if (data.length !== count) {
    throw new Error(`tensor ${t.name} holds ${data.length} values for ${count} elements`);
  }
  return { name: t.name, tensor: new ort.Tensor(type, data, t.dims) };
}

module.exports = { read_tensor_proto, decode, Reader };
