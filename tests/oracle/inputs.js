'use strict';
// Builds a model's input feeds: seeded random values that respect each input's element type,
// with per-input overrides (fixed shape for dynamic dims, a constant fill value, a value range).

const ort = require('onnxruntime-node');

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
    throw new Error(`input ${meta.name} is float16: random float16 inputs are not supported`);
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

module.exports = { random_feeds, rng };
