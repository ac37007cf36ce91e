'use strict';
// drift_check.js's figures and verdict (split to keep each file short).
const fs = require('fs');
const path = require('path');

function figures_of(pairs) { // pairs: [{h: [...], l: [...]}] per set
  const f = { cosine: null, undefined: null, max_abs: 0, flushed: 0, overflowed: 0, total: 0,
              high_max: 0, high_min: Infinity, elements: 0 };
  for (const { h, l } of pairs) {
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
      cos = nl === 0 ? 0 : dot / (Math.sqrt(nh) * Math.sqrt(nl));
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

async function main(argv) {
  const { sample_sets, run_exposed } = require('./drift_check');
  const o = parse(argv);
  const report = JSON.parse(fs.readFileSync(path.join(o.outdir, 'drift.json'), 'utf8'));
  const names = report.values.map((v) => v.value);
  const sets = sample_sets(o.samples);
  const high = await run_exposed(o.outdir, 'high.onnx', names, sets);
  const low = await run_exposed(o.outdir, 'emulation.onnx', names, sets);
  const figures = names.map((_, i) => figures_of(sets.map((_, s) => ({ h: high[s][i], l: low[s][i] }))));
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
