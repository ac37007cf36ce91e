'use strict';
// Numerical comparison of one output tensor against a reference. The metrics are what both
// kinds of check need: near-exact equality for the high (float32) graph, and similarity for a
// low-precision graph (cosine, new NaN/Inf).

function to_numbers(data) {
  if (Array.isArray(data)) {
    return null; // strings
  }
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) {
    return Float64Array.from(data, (v) => Number(v));
  }
  return data;
}

function same_shape(a, b) {
  return a.length === b.length && a.every((d, i) => Number(d) === Number(b[i]));
}

// float16 tensors come back as raw half bits in a Uint16Array; decode them for comparison.
function half_to_float(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) {
    return sign * fraction * 2 ** -24;
  }
  if (exponent === 31) {
    return fraction ? NaN : sign * Infinity;
  }
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

function values_of(tensor) {
  if (tensor.type === 'float16' && tensor.data instanceof Uint16Array) {
    return Float64Array.from(tensor.data, half_to_float);
  }
  return to_numbers(tensor.data);
}

// Compares `actual` with `reference` (onnxruntime Tensors). The relative difference divides by
// max(|reference|, abs_floor, scale_floor * max|reference|) so near-zero reference values (where
// float32 rounding of a reordered sum is all there is) do not dominate it.
function compare(reference, actual,
                 { abs_floor = 1e-6, scale_floor = 1e-3, rtol = 1e-3, atol = 1e-7 } = {}) {
  const m = {
    shape_ok: same_shape(reference.dims, actual.dims),
    type_ok: reference.type === actual.type,
    reference_type: reference.type,
    actual_type: actual.type,
    reference_dims: Array.from(reference.dims, Number),
    actual_dims: Array.from(actual.dims, Number),
    count: 0,
    max_abs: 0,
    max_rel: 0,
    cosine: 1,
    new_nonfinite: 0,
    mismatched: 0, // elements outside |a - r| <= atol + rtol * |r| (numpy.allclose, NaN == NaN)
  };
  if (!m.shape_ok) {
    m.mismatched = Infinity;
    return m;
  }
  const r = values_of(reference);
  const a = values_of(actual);
  if (r === null || a === null) {
    m.count = reference.data.length;
    for (let i = 0; i < m.count; ++i) {
      if (reference.data[i] !== actual.data[i]) {
        ++m.mismatched;
      }
    }
    m.max_abs = m.mismatched ? Infinity : 0;
    m.max_rel = m.max_abs;
    m.cosine = m.mismatched ? 0 : 1;
    return m;
  }
  m.count = r.length;
  let scale = 0;
  for (let i = 0; i < r.length; ++i) {
    const x = Math.abs(Number(r[i]));
    if (Number.isFinite(x) && x > scale) {
      scale = x;
    }
  }
  const floor = Math.max(abs_floor, scale_floor * scale);
  m.reference_max_abs = scale;
  let dot = 0;
  let rr = 0;
  let aa = 0;
  for (let i = 0; i < r.length; ++i) {
    const x = Number(r[i]);
    const y = Number(a[i]);
    const x_finite = Number.isFinite(x);
    const y_finite = Number.isFinite(y);
    if (!y_finite && x_finite) {
      ++m.new_nonfinite;
    }
    if (!x_finite || !y_finite) {
      const same = (Number.isNaN(x) && Number.isNaN(y)) || x === y;
      if (!same) {
        ++m.mismatched;
        m.max_abs = Infinity;
        m.max_rel = Infinity;
      }
      continue;
    }
    const diff = Math.abs(x - y);
    if (diff > atol + rtol * Math.abs(x)) {
      ++m.mismatched;
    }
    m.max_abs = Math.max(m.max_abs, diff);
    m.max_rel = Math.max(m.max_rel, diff / Math.max(Math.abs(x), floor));
    dot += x * y;
    rr += x * x;
    aa += y * y;
  }
  if (rr === 0 && aa === 0) {
    m.cosine = 1;
  } else if (rr === 0 || aa === 0) {
    m.cosine = 0;
  } else {
    m.cosine = dot / Math.sqrt(rr * aa);
  }
  return m;
}

// Thresholds: any that is set must hold. Returns a list of violated conditions (empty = pass).
function violations(m, t) {
  const out = [];
  if (!m.shape_ok) {
    out.push(`shape [${m.actual_dims}] != [${m.reference_dims}]`);
    return out;
  }
  if (t.check_type !== false && !m.type_ok) {
    out.push(`type ${m.actual_type} != ${m.reference_type}`);
  }
  if (t.allclose && m.mismatched > 0) {
    out.push(`${m.mismatched} of ${m.count} elements outside allclose(rtol=${t.rtol}, atol=${t.atol})`);
  }
  if (t.max_abs !== undefined && !(m.max_abs <= t.max_abs)) {
    out.push(`max abs diff ${m.max_abs} > ${t.max_abs}`);
  }
  if (t.max_rel !== undefined && !(m.max_rel <= t.max_rel)) {
    out.push(`max rel diff ${m.max_rel} > ${t.max_rel}`);
  }
  if (t.min_cosine !== undefined && !(m.cosine >= t.min_cosine)) {
    out.push(`cosine ${m.cosine} < ${t.min_cosine}`);
  }
  if (!t.allow_new_nonfinite && m.new_nonfinite > 0) {
    out.push(`${m.new_nonfinite} new NaN/Inf`);
  }
  return out;
}

module.exports = { compare, violations, half_to_float };
