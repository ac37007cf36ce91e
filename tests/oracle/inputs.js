'use strict';
// Builds a model's input feeds: seeded random values that respect each input's element type,
// with per-input overrides (fixed shape for dynamic dims, a constant fill value, a value range).

const ort = require('onnxruntime-node');
const { half_to_float } = require('./metrics');

// mulberry32: small, fast, and identical on every machine, so a seed names one input set.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text) {
  let h = 2166136261;
  for (const c of Buffer.from(text, 'utf8')) {
    h = Math.imul(h ^ c, 16777619) >>> 0;
  }
  return h;
}

const k_float = new Set(['float32', 'float64', 'float16']);
const k_array = {
  float32: Float32Array, float64: Float64Array, uint8: Uint8Array, int8: Int8Array,
  uint16: Uint16Array, int16: Int16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function resolve_shape(meta, spec) {
  if (spec.shape) {
    return spec.shape.map(Number);
  }
  const shape = meta.shape || [];
  return shape.map((d) => (typeof d === 'number' && d >= 0 ? d : spec.dim_default ?? 1));
}

// spec: {shape?, value?, range?: [lo, hi], dim_default?}
function make_input(meta, spec, seed) {
  if (!meta.isTensor) {
    throw new Error(`input ${meta.name} is not a tensor (sequence/map/optional inputs unsupported)`);
  }
  const type = meta.type;
  const dims = resolve_shape(meta, spec);
  const count = dims.reduce((a, b) => a * b, 1);
  if (type === 'string') {
    return new ort.Tensor('string', new Array(count).fill(String(spec.value ?? 'a')), dims);
  }
  if (type === 'float16') {
    // Same values a float32 input of that name would get, rounded to half.
    return cast_for(make_input({ ...meta, type: 'float32' }, spec, seed), 'float16');
  }
  const Array_ = k_array[type];
  if (!Array_) {
    throw new Error(`input ${meta.name} has unsupported type ${type}`);
  }
  const data = new Array_(count);
  const big = type === 'int64' || type === 'uint64';
  const next = rng(seed ^ hash(meta.name));
  const is_float = k_float.has(type);
  const [lo, hi] = spec.range ?? (is_float ? [-1, 1] : type === 'bool' ? [0, 1] : [0, 3]);
  for (let i = 0; i < count; ++i) {
    let v;
    if (spec.value !== undefined) {
      v = Number(spec.value);
    } else if (is_float) {
      v = lo + (hi - lo) * next();
    } else {
      v = Math.min(hi, lo + Math.floor((hi - lo + 1) * next()));
    }
    data[i] = big ? BigInt(v) : v;
  }
  return new ort.Tensor(type, data, dims);
}

// overrides: {name: spec}; `strict` names those that must match an input of this model (a typo
// otherwise silently changes what is tested).
function random_feeds(session, overrides, seed, strict = new Set()) {
  const feeds = {};
  const names = new Set(session.inputNames);
  for (const name of strict) {
    if (!names.has(name)) {
      throw new Error(`override for unknown input "${name}" (inputs: ${session.inputNames.join(', ')})`);
    }
  }
  for (const meta of session.inputMetadata) {
    feeds[meta.name] = make_input(meta, overrides[meta.name] ?? {}, seed);
  }
  return feeds;
}

// float32 -> IEEE half bits, round to nearest even (what a float16 graph input expects).
const k_f32 = new Float32Array(1);
const k_u32 = new Uint32Array(k_f32.buffer);
function float_to_half(value) {
  k_f32[0] = value;
  const x = k_u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) {
    return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  }
  let e = exponent - 127 + 15;
  if (e >= 0x1f) {
    return sign | 0x7c00;
  }
  if (e <= 0) {
    if (e < -10) {
      return sign;
    }
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midway = 1 << (shift - 1);
    if (rest > midway || (rest === midway && (half & 1))) {
      half += 1;
    }
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) {
    half += 1; // may carry into the exponent, which is still right (up to infinity)
  }
  return sign | half;
}

// Gives `tensor` the element type a compiled graph declares for that input, so a low-precision
// graph whose boundary was changed (float16 <-> float32/float64) can be fed the same values.
function cast_for(tensor, type) {
  if (!type || tensor.type === type) {
    return tensor;
  }
  const floats = new Set(['float32', 'float64']);
  if (floats.has(tensor.type) && type === 'float16') {
    return new ort.Tensor('float16', Uint16Array.from(tensor.data, float_to_half), tensor.dims);
  }
  if (tensor.type === 'float16' && floats.has(type)) {
    const Array_ = type === 'float32' ? Float32Array : Float64Array;
    return new ort.Tensor(type, Array_.from(tensor.data, half_to_float), tensor.dims);
  }
  if (floats.has(tensor.type) && floats.has(type)) {
    const Array_ = type === 'float32' ? Float32Array : Float64Array;
    return new ort.Tensor(type, Array_.from(tensor.data), tensor.dims);
  }
  throw new Error(`cannot feed a ${tensor.type} value to a ${type} input`);
}

module.exports = { random_feeds, rng, cast_for, float_to_half };
