// Runs a reference graph and a candidate graph in ONNX Runtime (CPU) on the same
// deterministic inputs and compares every output by cosine similarity.
//
// usage: node precision_check.js REF.onnx CANDIDATE.onnx INPUTS MIN_COSINE|runs [LEVEL]
//   INPUTS: "name:type:d0,d1,...;name2:type:=value" (type float32|int64; "=v" fills the
//   tensor with v, otherwise values are pseudo-random in [-1, 1))
//   LEVEL: ONNX Runtime graph optimisation level (default "all")
//   runs instead of MIN_COSINE: no accuracy bound, the candidate must only load and run with
//   the reference's output names, shapes and types and no new NaN/Inf (its cosine is printed).
//   That is how a float16 low.onnx is run: ONNX Runtime's CPU kernels compute many float16
//   ops (Conv, MatMul, Gemm, ...) in float32, so its figures hide float16's rounding; the
//   accuracy of a float16 graph is judged on npucc's emulation graph (--emit-emulation),
//   every low value rounded by ONNX Runtime's own Cast.
// Prints one line per output; exits 1 when an output is missing, below MIN_COSINE, has a
// different shape or type, or has NaN/Inf the reference does not have; 2 on a load/run error.
'use strict';
const ort = require('onnxruntime-node');

function parseInputs(text) {
  return text.split(';').filter((s) => s.length > 0).map((spec) => {
    // Split from the right: input names may hold ':' (onnx::Flatten_0).
    const parts = spec.split(':');
    const rest = parts.pop();
    const type = parts.pop();
    const name = parts.join(':');
    if (rest.startsWith('=')) {
      return { name, type, dims: [], fill: Number(rest.slice(1)) };
    }
    return { name, type, dims: rest.split(',').map(Number), fill: null };
  });
}

function makeFeeds(specs) {
  let seed = 12345;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return (seed / 1073741824) - 1;
  };
  const feeds = {};
  for (const spec of specs) {
    const count = spec.dims.reduce((a, b) => a * b, 1);
    if (spec.type === 'int64') {
      // Without a fixed value: small non-negative ids (token and index inputs).
      const data = new BigInt64Array(count);
      for (let i = 0; i < count; ++i) {
        data[i] = BigInt(spec.fill === null ? Math.floor((next() + 1) * 50) % 100 : spec.fill);
      }
      feeds[spec.name] = new ort.Tensor('int64', data, spec.dims);
    } else {
      const data = new Float32Array(count);
      for (let i = 0; i < count; ++i) {
        data[i] = spec.fill === null ? next() : spec.fill;
      }
      feeds[spec.name] = new ort.Tensor('float32', data, spec.dims);
    }
  }
  return feeds;
}

function toNumbers(tensor) {
  return Array.from(tensor.data, (v) => Number(v));
}

function nonFinite(values) {
  return values.filter((v) => !Number.isFinite(v)).length;
}

function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; ++i) {
    if (!Number.isFinite(a[i]) || !Number.isFinite(b[i])) {
      continue;
    }
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na === 0 && nb === 0) {
    return 1;
  }
  return dot / (Math.sqrt(na) * Math.sqrt(nb) || 1e-30);
}

function relativeError(a, b) {
  let diff = 0;
  let norm = 0;
  for (let i = 0; i < a.length; ++i) {
    if (!Number.isFinite(a[i]) || !Number.isFinite(b[i])) {
      continue;
    }
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += a[i] * a[i];
  }
  return Math.sqrt(diff) / Math.max(Math.sqrt(norm), 1e-12);
}

async function main() {
  const [refPath, candidatePath, inputs, minText, level] = process.argv.slice(2);
  const runsOnly = minText === 'runs';
  const minCosine = runsOnly ? -Infinity : Number(minText);
  if (!runsOnly && !Number.isFinite(minCosine)) {
    console.log(`ERROR MIN_COSINE must be a number or "runs", not "${minText}"`);
    process.exit(2);
  }
  const feeds = makeFeeds(parseInputs(inputs));
  const options = { graphOptimizationLevel: level || 'all' };
  const ref = await ort.InferenceSession.create(refPath, options);
  const candidate = await ort.InferenceSession.create(candidatePath, options);
  const want = await ref.run(feeds);
  const got = await candidate.run(feeds);
  let ok = ref.outputNames.length > 0; // no output compared is no verdict, never a pass
  if (!ok) {
    console.log(`FAIL ${refPath} has no output to compare`);
  }
  for (const name of ref.outputNames) {
    if (!(name in got)) {
      ok = false;
      console.log(`FAIL ${name}: missing from the candidate's outputs`);
      continue;
    }
    const a = toNumbers(want[name]);
    const b = toNumbers(got[name]);
    const sameShape = JSON.stringify(want[name].dims) === JSON.stringify(got[name].dims);
    const c = sameShape ? cosine(a, b) : NaN;
    const newNonFinite = nonFinite(b) - nonFinite(a);
    // Cosine says nothing about a 1-element output: small outputs must also be close in
    // relative L2 error, with the bound cosine implies for equal norms: sqrt(2 (1 - cos)).
    const rel = sameShape ? relativeError(a, b) : NaN;
    const closeEnough = runsOnly || a.length >= 8 || rel <= Math.sqrt(2 * (1 - minCosine));
    const pass = sameShape && (runsOnly || c >= minCosine) && closeEnough && newNonFinite <= 0 &&
                 got[name].type === want[name].type;
    ok = ok && pass;
    const bound = runsOnly ? 'not judged: runs only' : `min ${minCosine}`;
    console.log(`${pass ? 'ok  ' : 'FAIL'} ${name}: cosine ${c.toFixed(6)} (${bound}), ` +
                `relative error ${rel.toExponential(2)}, ` +
                `type ${got[name].type}, shape ${JSON.stringify(got[name].dims)}, ` +
                `new non-finite ${Math.max(newNonFinite, 0)}`);
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  console.log(`ERROR ${String(e.message || e).split('\n')[0]}`);
  process.exit(2);
});
