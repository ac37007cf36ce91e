'use strict';
// drift_check.js's figures and verdict (split to keep each file short).
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

// A body value's set is compared when both runs gave it, with one shape.
function same_shape(h, l) {
  return h.dims.length === l.dims.length && h.dims.every((d, i) => d === l.dims[i]);
}

function figures_of(pairs, body) { // pairs: [{h: [...], l: [...]}] per set
  const f = { cosine: null, undefined: null, max_abs: 0, flushed: 0, overflowed: 0, total: 0,
              high_max: 0, high_min: Infinity, elements: 0, sets: 0, empty: 0, differing: 0 };
  for (const { h, l } of pairs) {
    if (body && h.length === 0 && l.length === 0) { f.empty++; continue; }
    if (body && !same_shape(h, l)) { f.differing++; continue; }
    f.sets++;
    let dot = 0, nh = 0, nl = 0, hbad = 0, lbad = 0;
    for (let i = 0; i < h.length; i++) {
      if (!Number.isFinite(h[i])) { hbad++; continue; }
      const m = Math.abs(h[i]);
      f.high_max = Math.max(f.high_max, m);
      if (m > 0) { f.high_min = Math.min(f.high_min, m); }
      if (!Number.isFinite(l[i])) { lbad++; f.overflowed++; continue; }
      if (l[i] === 0 && h[i] !== 0) { f.flushed++; }
      f.max_abs = Math.max(f.max_abs, Math.abs(l[i] - h[i]));
      dot += h[i] * l[i]; nh += h[i] * h[i]; nl += l[i] * l[i];
    }
    f.total += h.length;
    f.elements = Math.max(f.elements, h.length);
    let cos = null;
    if (h.length >= 8 && hbad === 0 && lbad === 0 && nh > 0) {
      // Clamped to [-1, 1] as npucc-compile(1) defines it: rounding may leave 1 + 2e-16.
      cos = nl === 0 ? 0 : Math.min(1, Math.max(-1, dot / (Math.sqrt(nh) * Math.sqrt(nl))));
    } else if (f.undefined === null) {
      f.undefined = true;
    }
    if (cos !== null) { f.cosine = f.cosine === null ? cos : Math.min(f.cosine, cos); }
  }
  return f;
}

function drift_of(f) {
  if (f.cosine !== null) { return 1 - f.cosine; }
  return f.overflowed > 0 ? 1 : null;
}

// Within the tolerance relative to the figure's size (the figures of values near 1e-8 are
// themselves near 1e-8: an absolute 1e-5 would pass anything), with a floor of 1e-12.
function agrees(mine, theirs, tolerance) {
  if (mine === null || theirs === null) { return mine === theirs; }
  const scale = Math.max(Math.abs(mine), Math.abs(theirs));
  return Math.abs(mine - theirs) <= Math.max(tolerance * scale, 1e-12);
}

function compare_value(v, f, tolerance) {
  const total = f.total || 1;
  const expected = {
    cosine: f.cosine, max_abs_error: f.max_abs, flush_share: f.flushed / total,
    overflow_share: f.overflowed / total, high_max_abs: f.high_max, elements: f.elements,
    high_min_nonzero_abs: Number.isFinite(f.high_min) ? f.high_min : null };
  const wrong = [];
  for (const [key, value] of Object.entries(expected)) {
    if (!agrees(value, v[key], tolerance)) { wrong.push(`${key} ${v[key]} (oracle ${value})`); }
  }
  if (v.body) {
    for (const [key, value] of [['sets_compared', f.sets], ['sets_empty', f.empty], ['sets_differing', f.differing]]) {
      if (v.body[key] !== value) { wrong.push(`body.${key} ${v.body[key]} (oracle ${value})`); }
    }
    if (f.sets === 0) { f.undefined = true; }
  }
  if ((f.undefined !== null) !== (v.cosine_undefined !== null)) {
    wrong.push(`cosine_undefined ${v.cosine_undefined} (oracle: ${f.undefined ? 'undefined' : 'defined'})`);
  }
  return wrong;
}

function parse(argv) {
  const o = { tolerance: 1e-5, every: 1, samples: [] };
  for (let i = 1; i < argv.length; i++) {
    if (argv[i] === '--tolerance') { o.tolerance = Number(argv[++i]); }
    else if (argv[i] === '--every') { o.every = Number(argv[++i]); }
    else { o.samples.push(argv[i]); }
  }
  if (!argv[0] || o.samples.length === 0) { throw new Error('usage: drift_check.js OUTDIR SAMPLES...'); }
  o.outdir = argv[0];
  return o;
}

// The body values of OUTDIR's drift.json, exposed by expose_bodies.py and run: per set,
// high and low tensors in the order of `index` (value index -> position).
async function run_bodies(outdir, sets) {
  const { run_exposed } = require('./drift_check');
  const script = path.join(__dirname, 'expose_bodies.py');
  const exposed = JSON.parse(execFileSync('/usr/bin/python3', [script, outdir], { encoding: 'utf8' }));
  const indexes = Object.keys(exposed).map(Number);
  if (indexes.length === 0) { return { index: {}, high: [], low: [] }; }
  const outputs = indexes.map((i) => exposed[i]);
  const index = {};
  indexes.forEach((i, at) => { index[i] = at; });
  const high = await run_exposed(outdir, 'oracle-body-high.onnx', outputs, sets, true);
  const low = await run_exposed(outdir, 'oracle-body-emulation.onnx', outputs, sets, true);
  return { index, high, low };
}

async function main(argv) {
  const { sample_sets, run_exposed } = require('./drift_check');
  const o = parse(argv);
  const report = JSON.parse(fs.readFileSync(path.join(o.outdir, 'drift.json'), 'utf8'));
  const names = report.values.map((v) => v.value);
  const sets = sample_sets(o.samples);
  const main_names = names.filter((_, i) => !report.values[i].body);
  const high = await run_exposed(o.outdir, 'high.onnx', main_names, sets);
  const low = await run_exposed(o.outdir, 'emulation.onnx', main_names, sets);
  const body = await run_bodies(o.outdir, sets);
  // Per value and set: its high and low tensors, from the main run or the bodies' run.
  let m = 0;
  const pairs = names.map((_, i) => {
    if (report.values[i].body) { return sets.map((_, s) => ({ h: body.high[s][body.index[i]], l: body.low[s][body.index[i]] })); }
    const at = m++;
    return sets.map((_, s) => ({ h: high[s][at], l: low[s][at] }));
  });
  const figures = names.map((_, i) => figures_of(pairs[i], Boolean(report.values[i].body)));
  const below = report.threshold.below;
  let first = figures.findIndex((f) => (f.cosine !== null && f.cosine < below) || f.overflowed > 0);
  first = first < 0 ? null : first;
  let failures = 0;
  const fail = (line) => { console.log('FAIL: ' + line); failures++; };
  if (first !== report.first_crossing) { fail(`first_crossing ${report.first_crossing}, oracle ${first}`); }
  const checked = new Set(report.top_offenders.concat(first === null ? [] : [first]));
  names.forEach((_, i) => { if (i % o.every === 0) { checked.add(i); } });
  for (const i of checked) {
    const v = report.values[i];
    const wrong = compare_value(v, figures[i], o.tolerance);
    const out = drift_of(figures[i]);
    let inputs = 0;
    for (const j of v.inputs || []) { const d = drift_of(figures[j]); if (d !== null) { inputs = Math.max(inputs, d); } }
    const added = out === null ? null : out / Math.max(inputs, report.drift_floor);
    if (!agrees(added, v.added_drift, 1e-4)) { wrong.push(`added_drift ${v.added_drift} (oracle ${added})`); }
    wrong.forEach((w) => fail(`#${v.order} ${v.node} '${v.value}': ${w}`));
  }
  const at = first === null ? 'none' : `#${report.values[first].order} ${report.values[first].op_type} '${report.values[first].node}' cosine ${figures[first].cosine}`;
  console.log(`drift oracle: ${checked.size} of ${names.length} values checked on ${sets.length} set(s); first crossing ${at}; ${failures} failure(s)`);
  return failures === 0 ? 0 : 1;
}

module.exports = { main };
