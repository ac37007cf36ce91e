'use strict';
// Recomputes npucc's drift report (--accuracy-report nodes, drift.json) with ONNX Runtime's
// Node binding: the high graph and the emulation graph npucc wrote (--emit-emulation), each
// with the report's values added as graph outputs here (the ModelProto edited on the wire,
// not by npucc), run on the same samples at npucc's level ('basic'), and every figure
// computed again from npucc-compile(1), DRIFT REPORT:
//   cosine (lowest defined over the sets; undefined below 8 elements, a non-finite value on
//   either side, or an all-zero high value; 0 when the low value is all zero), max_abs_error
//   (elements finite in both), flush_share (low 0, high finite non-zero), overflow_share
//   (low non-finite, high finite), high_max_abs, high_min_nonzero_abs, the first value whose
//   cosine is below the threshold or whose low run overflows, and added_drift.
// Each must agree within the tolerance (relative to the figure, floor 1e-12); exit 1 otherwise,
// 2 for a bad call. Prints the first crossing it finds.
//
//   node drift_check.js OUTDIR SAMPLES [SAMPLES...] [--tolerance 1e-5] [--every K]
//
// --every K checks every K-th value (and always the first crossing and the top offenders).
// Values inside If/Loop/Scan bodies (drift.json's "body") are exposed by expose_bodies.py
// (ONNX's Python API), every iteration's value stacked; a set where a body value is empty in
// both runs (its branch did not run) or of different shapes is counted, not compared.

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { read_tensor_proto, Reader } = require('./tensor_proto');
const { half_to_float } = require('./metrics');

function varint(n) {
  const out = [];
  while (n > 127) { out.push((n & 127) | 128); n = Math.floor(n / 128); }
  out.push(n);
  return Buffer.from(out);
}

function field(number, bytes) { return Buffer.concat([varint(number * 8 + 2), varint(bytes.length), bytes]); }

// A graph output: ValueInfoProto{name, type{tensor_type{elem_type}}}.
function graph_output(name, elem_type) {
  const type = field(1, Buffer.concat([Buffer.from([0x08]), varint(elem_type)]));
  return field(12, Buffer.concat([field(1, Buffer.from(name, 'utf8')), field(2, type)]));
}

// A ValueInfoProto's name and element type (0 when it states none).
function value_info(bytes) {
  const r = new Reader(bytes);
  const out = { name: '', type: 0 };
  while (!r.done()) {
    const key = Number(r.varint());
    if (key === 0x0a) { out.name = Buffer.from(r.take(Number(r.varint()))).toString('utf8'); }
    else if (key === 0x12) { // TypeProto.tensor_type (1) .elem_type (1)
      const type = new Reader(r.take(Number(r.varint())));
      while (!type.done()) {
        const k = Number(type.varint());
        if (k === 0x0a) {
          const tensor = new Reader(type.take(Number(type.varint())));
          while (!tensor.done()) { const t = Number(tensor.varint()); if (t === 0x08) { out.type = Number(tensor.varint()); } else { tensor.skip(t & 7); } }
        } else { type.skip(k & 7); }
      }
    } else { r.skip(key & 7); }
  }
  return out;
}

// The graph's stated types (outputs, field 12; value_info, 13) and its outputs' names.
function graph_types(graph) {
  const r = new Reader(graph);
  const types = new Map();
  const outputs = new Set();
  while (!r.done()) {
    const key = Number(r.varint());
    if (key === (12 << 3 | 2) || key === (13 << 3 | 2)) {
      const v = value_info(r.take(Number(r.varint())));
      if (v.type) { types.set(v.name, v.type); }
      if (key === (12 << 3 | 2)) { outputs.add(v.name); }
    } else { r.skip(key & 7); }
  }
  return { types, outputs };
}

function exposed_outputs(graph, names) {
  const { types, outputs } = graph_types(graph);
  return names.filter((n, i) => !outputs.has(n) && names.indexOf(n) === i)
    .map((n) => graph_output(n, types.get(n) || 1));
}

// The model with `names` appended to its main graph's outputs (ModelProto.graph is field 7),
// each of the type the graph states for it (float32 when it states none).
function with_outputs(model_bytes, names) {
  const reader = new Reader(model_bytes);
  const parts = [];
  while (!reader.done()) {
    const start = reader.pos;
    const key = Number(reader.varint());
    if (key >> 3 === 7 && (key & 7) === 2) {
      const graph = reader.take(Number(reader.varint()));
      parts.push(field(7, Buffer.concat([Buffer.from(graph), ...exposed_outputs(graph, names)])));
    } else {
      reader.skip(key & 7);
      parts.push(Buffer.from(model_bytes.subarray(start, reader.pos)));
    }
  }
  return Buffer.concat(parts);
}

function sample_sets(paths) {
  const sets = [];
  for (const p of paths) {
    const subs = fs.readdirSync(p).filter((n) => n.startsWith('test_data_set_')).sort();
    for (const folder of (subs.length ? subs.map((n) => path.join(p, n)) : [p])) {
      const files = fs.readdirSync(folder).filter((n) => /^input_\d+\.pb$/.test(n)).sort();
      sets.push(files.map((n) => read_tensor_proto(fs.readFileSync(path.join(folder, n)))));
    }
  }
  return sets;
}

function bfloat16_to_float(bits) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(bits << 16 >>> 0);
  return b.readFloatLE(0);
}

function numbers(tensor) {
  if (tensor.type === 'float16') { return Array.from(tensor.data, half_to_float); }
  if (tensor.type === 'bfloat16') { return Array.from(tensor.data, bfloat16_to_float); }
  return Array.from(tensor.data, Number);
}

// `file` with `names` exposed (main-graph values) run on every set; with `names` already
// outputs (expose_bodies.py's files), as it is.
async function run_exposed(outdir, file, names, sets, edited = false) {
  const exposed = path.join(outdir, edited ? file : 'oracle-drift-' + file); // beside its weights
  if (!edited) {
    fs.writeFileSync(exposed, with_outputs(fs.readFileSync(path.join(outdir, file)), names));
  }
  const session = await ort.InferenceSession.create(exposed, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    logSeverityLevel: 3, graphOptimizationLevel: 'basic' });
  const results = [];
  for (const set of sets) {
    const feeds = {};
    set.forEach((t) => { feeds[t.name] = t.tensor; });
    const out = await session.run(feeds, names);
    results.push(names.map((n) => Object.assign(numbers(out[n]), { dims: out[n].dims })));
  }
  fs.unlinkSync(exposed);
  return results;
}

module.exports = { with_outputs, sample_sets, run_exposed };
if (require.main === module) {
  require('./drift_figures').main(process.argv.slice(2)).then((code) => process.exit(code),
    (e) => { console.error('drift_check: ' + e.message); process.exit(2); });
}
