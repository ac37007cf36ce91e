'use strict';
// Recomputes npucc's --check-accuracy figures with ONNX Runtime's Node binding, a separate
// process and library build: the high graph and the emulation graph npucc wrote
// (--emit-emulation), run on the same samples (ONNX test data layout), compared with the
// definitions of npucc-compile(1), ACCURACY (written again here from the manual, not from
// npucc's code). Every figure of the manifest's "accuracy" object must agree within the
// tolerance (default 1e-5, absolute; relative for the errors above 1) with ONNX Runtime at
// npucc's level ('basic'); they are recomputed at ONNX Runtime's default level too (see
// LEVELS), where --min-cosine C (every output's cosine >= C) must hold as well; exit 1
// otherwise. A manifest that lists no output, or no samples, is an error (exit 2).
// That covers the per-sample figures (per_sample: cosine, top1, psnr, snr_db, and iou@T and
// close[atol=A,rtol=R] when a target asked for them, each defined or undefined alike), each
// figure's summary (worst, mean, median, worst set) and the worst fields of old readers.
//
//   node accuracy_check.js OUTDIR SAMPLES [SAMPLES...] [--tolerance 1e-5] [--json FILE]
//                          [--iou T] [--graph FILE] [--min-cosine C]
//
// --iou T also prints, per output, the lowest IoU over the samples of the two outputs
// thresholded at T (a detector's task metric: DBNet's post-processing thresholds its map at
// 0.3). --graph FILE runs FILE for the low side instead of OUTDIR/emulation.onnx and only
// prints its figures (samples npucc never saw, a repaired graph): nothing is compared.
//
// OUTDIR holds manifest.json, high.onnx and emulation.onnx. SAMPLES: a folder of
// test_data_set_*/input_*.pb, or one such folder.

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { read_tensor_proto } = require('./tensor_proto');
const { half_to_float } = require('./metrics');

function numbers(tensor) {
  if (tensor.type === 'float16') { return Array.from(tensor.data, half_to_float); }
  return Array.from(tensor.data, Number);
}

function sample_sets(paths) {
  const sets = [];
  for (const p of paths) {
    const subs = fs.readdirSync(p).filter((n) => n.startsWith('test_data_set_')).sort();
    const folders = subs.length ? subs.map((n) => path.join(p, n)) : [p];
    for (const folder of folders) {
      const files = fs.readdirSync(folder).filter((n) => /^input_\d+\.pb$/.test(n))
        .sort((a, b) => Number(a.slice(6, -3)) - Number(b.slice(6, -3)));
      sets.push(files.map((n) => read_tensor_proto(fs.readFileSync(path.join(folder, n)))));
    }
  }
  return sets;
}

// One output on one sample, by npucc-compile(1), ACCURACY. A figure is a number, Infinity
// (psnr/snr_db of identical outputs) or null (undefined).
function compare(reference, actual, requests) {
  const r = numbers(reference);
  const a = numbers(actual);
  let scale = 0;
  for (const v of r) { if (Number.isFinite(v)) { scale = Math.max(scale, Math.abs(v)); } }
  const floor = Math.max(1e-3 * scale, 1e-6);
  const m = { max_abs_error: 0, max_rel_error: 0, nonfinite: 0, high_nonfinite: 0, elements: 0,
              size: r.length, figures: {} };
  for (let i = 0; i < r.length; ++i) {
    if (!Number.isFinite(r[i])) { m.high_nonfinite += 1; continue; }
    if (!Number.isFinite(a[i])) { m.nonfinite += 1; continue; }
    m.elements += 1;
    const e = Math.abs(a[i] - r[i]);
    m.max_abs_error = Math.max(m.max_abs_error, e);
    m.max_rel_error = Math.max(m.max_rel_error, e / Math.max(Math.abs(r[i]), floor));
  }
  const dims = Array.from(reference.dims, Number);
  const broken = m.high_nonfinite > 0 || r.length === 0;
  const low_broken = broken || m.nonfinite > 0;
  const f = m.figures;
  let dot = 0, nr = 0, na = 0, noise = 0;
  for (let i = 0; i < r.length; ++i) {
    dot += r[i] * a[i]; nr += r[i] * r[i]; na += a[i] * a[i]; noise += (a[i] - r[i]) ** 2;
  }
  f.cosine = r.length < 8 || low_broken || nr === 0 ? null : na === 0 ? 0 : dot / (Math.sqrt(nr) * Math.sqrt(na));
  const classes = dims.length ? dims[dims.length - 1] : 1;
  f.top1 = classes < 2 || broken ? null : top1(r, a, classes);
  const peak = r.reduce((x, v) => Math.max(x, v), -Infinity) - r.reduce((x, v) => Math.min(x, v), Infinity);
  f.psnr = low_broken || peak === 0 ? null : noise === 0 ? Infinity : 10 * Math.log10(peak * peak / (noise / r.length));
  f.snr_db = low_broken || nr === 0 ? null : noise === 0 ? Infinity : 10 * Math.log10(nr / noise);
  for (const [name, t] of requests.iou) { f[name] = broken ? null : iou(reference, actual, t); }
  for (const [name, atol, rtol] of requests.close) {
    let within = 0;
    for (let i = 0; i < r.length; ++i) { within += Math.abs(a[i] - r[i]) <= atol + rtol * Math.abs(r[i]) ? 1 : 0; }
    f[name] = broken ? null : within / r.length;
  }
  if (m.elements === 0) { m.max_abs_error = null; m.max_rel_error = null; }
  return m;
}

// numpy.argmax per row: the first maximum; a NaN wins.
function top1(r, a, classes) {
  const argmax = (v, first) => {
    let best = first;
    for (let i = first; i < first + classes; ++i) {
      if (Number.isNaN(v[i])) { return i - first; }
      if (v[i] > v[best]) { best = i; }
    }
    return best - first;
  };
  const rows = r.length / classes;
  let agree = 0;
  for (let row = 0; row < rows; ++row) { agree += argmax(r, row * classes) === argmax(a, row * classes) ? 1 : 0; }
  return agree / rows;
}

// The figures a target asked for, from the names in the manifest's summary.
function requested(output) {
  const out = { iou: [], close: [] };
  for (const name of Object.keys(output.summary || {})) {
    let found = /^iou@(.+)$/.exec(name);
    if (found) { out.iou.push([name, Number(found[1])]); }
    found = /^close\[atol=([^,]+),rtol=([^\]]+)\]$/.exec(name);
    if (found) { out.close.push([name, Number(found[1]), Number(found[2])]); }
  }
  return out;
}

const lower_is_worse = (name) => name !== 'max_abs_error' && name !== 'max_rel_error';

// worst, mean, median (numpy's) and the worst set over the samples where the figure is defined.
function summary(per_sample, name) {
  const values = per_sample.map((m, set) => [name in m.figures ? m.figures[name] : m[name], set])
    .filter(([v]) => v !== null);
  if (!values.length) { return { worst: null, mean: null, median: null, worst_set: null }; }
  const sign = lower_is_worse(name) ? 1 : -1;
  values.sort((x, y) => sign * x[0] - sign * y[0] || x[1] - y[1]);
  const n = values.length;
  const middle = n % 2 ? values[(n - 1) / 2][0] : (values[n / 2 - 1][0] + values[n / 2][0]) / 2;
  return { worst: values[0][0], mean: values.reduce((s, v) => s + v[0], 0) / n, median: middle,
           worst_set: values[0][1] };
}

// npucc's figure (number, "inf" or null) against the oracle's (number, Infinity or null).
function figure_agrees(mine, theirs, tolerance) {
  if (mine === null || theirs === null) { return mine === theirs; }
  if (mine === 'inf' || theirs === Infinity) { return mine === 'inf' && theirs === Infinity; }
  return agrees(mine, theirs, tolerance);
}

// Every per-sample figure and summary field of one output; the disagreements.
function check_output(output, oracle, tolerance) {
  const bad = [];
  const samples = output.per_sample || [];
  if (samples.length !== oracle.length) { bad.push(`per_sample has ${samples.length} sets, not ${oracle.length}`); }
  samples.forEach((mine, s) => {
    const theirs = oracle[s] || { figures: {} };
    for (const key of ['nonfinite', 'high_nonfinite', 'elements', 'size']) {
      if (mine[key] !== theirs[key]) { bad.push(`set ${s} ${key} ${mine[key]} vs ${theirs[key]}`); }
    }
    for (const key of ['max_abs_error', 'max_rel_error', ...Object.keys(theirs.figures)]) {
      const value = key in theirs.figures ? theirs.figures[key] : theirs[key];
      if (!figure_agrees(mine[key], value, tolerance)) { bad.push(`set ${s} ${key} ${mine[key]} vs ${value}`); }
    }
  });
  for (const [name, mine] of Object.entries(output.summary || {})) {
    const theirs = summary(oracle, name);
    for (const key of ['worst', 'mean', 'median']) {
      if (!figure_agrees(mine[key], theirs[key], tolerance)) { bad.push(`${name} ${key} ${mine[key]} vs ${theirs[key]}`); }
    }
    if (mine.worst_set !== theirs.worst_set && theirs.worst !== null &&
        !figure_agrees(summary([oracle[mine.worst_set]], name).worst, theirs.worst, tolerance)) {
      bad.push(`${name} worst_set ${mine.worst_set} vs ${theirs.worst_set}`);
    }
  }
  return bad;
}

// ONNX Runtime's optimisation levels the figures are recomputed at: npucc's own ('basic'),
// where they must agree with npucc's within the tolerance, and the one a user's session
// gets when it sets none ('default': 'all' in this binding), where ONNX Runtime's fusions
// round differently (ppocrv4_det fast1: cosine 0.995883 against 0.996023 at basic): there
// the figures are printed with their difference, and --min-cosine holds at both levels.
const LEVELS = ['basic', 'default'];

async function run_all(file, sets, names, level) {
  const options = {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  };
  if (level !== 'default') { options.graphOptimizationLevel = level; }
  const session = await ort.InferenceSession.create(file, options);
  const out = [];
  for (const set of sets) {
    const feeds = {};
    set.forEach(({ name, tensor }, i) => { feeds[name || session.inputNames[i]] = tensor; });
    out.push(await session.run(feeds, names));
  }
  return out;
}

function agrees(mine, theirs, tolerance) {
  const bound = Math.max(1, Math.abs(theirs)) * tolerance;
  return Math.abs(mine - theirs) <= bound;
}

// IoU of the two outputs thresholded at T; null when neither exceeds T (undefined).
function iou(reference, actual, threshold) {
  const r = numbers(reference);
  const a = numbers(actual);
  let both = 0, either = 0;
  for (let i = 0; i < r.length; ++i) {
    const x = r[i] > threshold, y = a[i] > threshold;
    both += x && y ? 1 : 0;
    either += x || y ? 1 : 0;
  }
  return either === 0 ? null : both / either;
}

async function main() {
  const args = process.argv.slice(2);
  let tolerance = 1e-5;
  let json_file = null;
  let iou_threshold = null;
  let graph = null;
  let min_cosine = null;
  const positional = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--tolerance') { tolerance = Number(args[++i]); }
    else if (args[i] === '--json') { json_file = args[++i]; }
    else if (args[i] === '--iou') { iou_threshold = Number(args[++i]); }
    else if (args[i] === '--graph') { graph = args[++i]; }
    else if (args[i] === '--min-cosine') { min_cosine = Number(args[++i]); }
    else { positional.push(args[i]); }
  }
  const [outdir, ...sample_paths] = positional;
  const manifest = JSON.parse(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8'));
  const report = manifest.accuracy;
  if (!report) { throw new Error(`${outdir}/manifest.json has no accuracy object`); }
  // An empty list would compare nothing and exit 0: refused, as are no samples.
  if (!Array.isArray(report.outputs) || report.outputs.length === 0) {
    throw new Error(`${outdir}/manifest.json: the accuracy object lists no output: nothing to compare`);
  }
  const sets = sample_sets(sample_paths);
  if (sets.length === 0) { throw new Error(`no sample sets in ${sample_paths.join(', ')}`); }
  let failed = 0;
  if (!graph && report.samples !== sets.length) {
    console.log(`FAIL samples: the manifest says ${report.samples}, the oracle read ${sets.length}`);
    failed += 1;
  }
  const names = report.outputs.map((o) => o.name);
  const results = [];
  for (const level of LEVELS) {
    const high = await run_all(path.join(outdir, 'high.onnx'), sets, names, level);
    const low = await run_all(graph || path.join(outdir, 'emulation.onnx'), sets, names, level);
    for (const output of report.outputs) {
      failed += check_at_level(output, level, sets.length, high, low,
                               { tolerance, iou_threshold, graph, min_cosine }, results);
    }
  }
  if (json_file) { fs.writeFileSync(json_file, JSON.stringify(results, null, 2)); }
  process.exit(failed ? 1 : 0);
}

// One output's figures at one level, printed; the failures it adds (0 or more). At 'basic'
// (npucc's level) they must agree with npucc's; at other levels they are printed with the
// difference; --min-cosine holds at every level.
function check_at_level(output, level, count, high, low, options, results) {
  const { tolerance, iou_threshold, graph, min_cosine } = options;
  const requests = requested(output);
  const per_sample = [];
  for (let s = 0; s < count; ++s) { per_sample.push(compare(high[s][output.name], low[s][output.name], requests)); }
  const total = { cosine: summary(per_sample, 'cosine').worst, nonfinite: 0, iou: 1,
                  max_abs_error: summary(per_sample, 'max_abs_error').worst,
                  max_rel_error: summary(per_sample, 'max_rel_error').worst };
  for (let s = 0; s < count; ++s) {
    if (iou_threshold !== null) {
      const v = iou(high[s][output.name], low[s][output.name], iou_threshold);
      total.iou = v === null ? total.iou : Math.min(total.iou, v);
    }
    total.nonfinite += per_sample[s].nonfinite;
  }
  let failed = 0;
  if (min_cosine !== null && !(total.cosine >= min_cosine)) {
    console.log(`FAIL [${level}] ${output.name}: cosine ${total.cosine} < --min-cosine ${min_cosine}`);
    failed += 1;
  }
  const iou_text = iou_threshold !== null ? `, IoU at ${iou_threshold} ${total.iou.toFixed(4)}` : '';
  const cosine_text = total.cosine === null ? 'undefined' : total.cosine.toFixed(7);
  const abs_text = total.max_abs_error === null ? 'undefined' : total.max_abs_error.toPrecision(4);
  if (graph) {
    console.log(`[${level}] ${output.name}: ${count} sample(s): cosine ${cosine_text}, ` +
                `max abs ${abs_text}, non-finite ${total.nonfinite}${iou_text}`);
    results.push({ name: output.name, level, oracle: total, per_sample });
    return failed;
  }
  const bad = check_output(output, per_sample, tolerance);
  for (const key of ['cosine', 'max_abs_error', 'max_rel_error']) {
    if (!figure_agrees(output[key], total[key], tolerance)) { bad.push(`${key} ${output[key]} vs ${total[key]}`); }
  }
  if (output.nonfinite !== total.nonfinite) { bad.push(`nonfinite ${output.nonfinite} vs ${total.nonfinite}`); }
  const required = level === 'basic'; // npucc computes at basic; other levels are printed
  failed += required && bad.length ? 1 : 0;
  results.push({ name: output.name, level, npucc: output, oracle: total, per_sample, ok: !required || !bad.length });
  const verdict = !bad.length ? 'ok' : required ? 'FAIL' : 'differs';
  console.log(`${verdict} [${level}] ${output.name}: cosine ${cosine_text} ` +
              `(npucc ${output.cosine === null ? 'undefined' : Number(output.cosine).toFixed(7)}), max abs ${abs_text}, ` +
              `max rel ${total.max_rel_error === null ? 'undefined' : total.max_rel_error.toPrecision(4)}, non-finite ${total.nonfinite}${iou_text}` +
              (bad.length ? `: ${bad.slice(0, 6).join('; ')}` : ''));
  const worst = Object.entries(output.summary || {}).filter(([k]) => !['cosine', 'max_abs_error', 'max_rel_error'].includes(k))
    .map(([k]) => { const w = summary(per_sample, k).worst; return `${k} ${w === null ? 'undefined' : Number(w).toPrecision(6)}`; });
  if (worst.length) { console.log(`  [${level}] ${output.name}: worst over the sets: ${worst.join(', ')}`); }
  return failed;
}

main().catch((e) => { console.error(`accuracy_check: ${String(e.message || e).split('\n')[0]}`); process.exit(2); });
