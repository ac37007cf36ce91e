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

function half_to_float(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) { return sign * fraction * 2 ** -24; }
  if (exponent === 31) { return fraction ? NaN : sign * Infinity; }
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}

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

function compare(reference, actual) {
  const r = numbers(reference);
  const a = numbers(actual);
  let scale = 0;
  for (const v of r) { if (Number.isFinite(v)) { scale = Math.max(scale, Math.abs(v)); } }
  const floor = Math.max(1e-3 * scale, 1e-6);
  const m = { cosine: 1, max_abs_error: 0, max_rel_error: 0, nonfinite: 0, elements: 0 };
  let dot = 0, nr = 0, na = 0;
  for (let i = 0; i < r.length; ++i) {
    if (!Number.isFinite(r[i])) { continue; }
    if (!Number.isFinite(a[i])) { m.nonfinite += 1; continue; }
    m.elements += 1;
    dot += r[i] * a[i]; nr += r[i] * r[i]; na += a[i] * a[i];
    const e = Math.abs(a[i] - r[i]);
    m.max_abs_error = Math.max(m.max_abs_error, e);
    m.max_rel_error = Math.max(m.max_rel_error, e / Math.max(Math.abs(r[i]), floor));
  }
  if (m.elements === 0 && m.nonfinite > 0) { m.cosine = 0; }
  else if (nr === 0 || na === 0) { m.cosine = nr === na ? 1 : 0; }
  else { m.cosine = dot / (Math.sqrt(nr) * Math.sqrt(na)); }
  return m;
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

function iou(reference, actual, threshold) {
  const r = numbers(reference);
  const a = numbers(actual);
  let both = 0, either = 0;
  for (let i = 0; i < r.length; ++i) {
    const x = r[i] > threshold, y = a[i] > threshold;
    both += x && y ? 1 : 0;
    either += x || y ? 1 : 0;
  }
  return either === 0 ? 1 : both / either;
}

// The figures of one output over every sample: the lowest cosine (and IoU), the largest
// errors, the non-finite values added up.
function totals(name, high, low, count, iou_threshold) {
  const total = { cosine: 1, max_abs_error: 0, max_rel_error: 0, nonfinite: 0, iou: 1 };
  for (let s = 0; s < count; ++s) {
    if (iou_threshold !== null) {
      total.iou = Math.min(total.iou, iou(high[s][name], low[s][name], iou_threshold));
    }
    const m = compare(high[s][name], low[s][name]);
    total.cosine = Math.min(total.cosine, m.cosine);
    total.max_abs_error = Math.max(total.max_abs_error, m.max_abs_error);
    total.max_rel_error = Math.max(total.max_rel_error, m.max_rel_error);
    total.nonfinite += m.nonfinite;
  }
  return total;
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
  const sets = sample_sets(sample_paths);
  // An empty list would compare nothing and exit 0: refused, as are no samples.
  if (!Array.isArray(report.outputs) || report.outputs.length === 0) {
    throw new Error(`${outdir}/manifest.json: the accuracy object lists no output: nothing to compare`);
  }
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
      const total = totals(output.name, high, low, sets.length, iou_threshold);
      const iou_text = iou_threshold !== null ? `, IoU at ${iou_threshold} ${total.iou.toFixed(4)}` : '';
      if (min_cosine !== null && !(total.cosine >= min_cosine)) {
        console.log(`FAIL [${level}] ${output.name}: cosine ${total.cosine} < --min-cosine ${min_cosine}`);
        failed += 1;
      }
      if (graph) {
        console.log(`[${level}] ${output.name}: ${sets.length} sample(s): cosine ${total.cosine.toFixed(7)}, ` +
                    `max abs ${total.max_abs_error.toPrecision(4)}, non-finite ${total.nonfinite}${iou_text}`);
        results.push({ name: output.name, level, oracle: total });
        continue;
      }
      const bad = [];
      for (const key of ['cosine', 'max_abs_error', 'max_rel_error']) {
        if (!agrees(output[key], total[key], tolerance)) { bad.push(`${key} ${output[key]} vs ${total[key]}`); }
      }
      if (output.nonfinite !== total.nonfinite) { bad.push(`nonfinite ${output.nonfinite} vs ${total.nonfinite}`); }
      if (level !== 'basic') { // printed, not required: npucc computes at basic
        console.log(`${bad.length ? 'differs' : 'ok'} [${level}] ${output.name}: cosine ${total.cosine.toFixed(7)} ` +
                    `(npucc ${Number(output.cosine).toFixed(7)}), max abs ${total.max_abs_error.toPrecision(4)}, ` +
                    `max rel ${total.max_rel_error.toPrecision(4)}, non-finite ${total.nonfinite}${iou_text}` +
                    (bad.length ? `: ${bad.join('; ')}` : ''));
        results.push({ name: output.name, level, npucc: output, oracle: total, ok: true });
        continue;
      }
      failed += bad.length ? 1 : 0;
      results.push({ name: output.name, level, npucc: output, oracle: total, ok: !bad.length });
      console.log(`${bad.length ? 'FAIL' : 'ok'} [${level}] ${output.name}: cosine ${total.cosine.toFixed(7)} ` +
                  `(npucc ${Number(output.cosine).toFixed(7)}), max abs ${total.max_abs_error.toPrecision(4)}, ` +
                  `max rel ${total.max_rel_error.toPrecision(4)}, non-finite ${total.nonfinite}${iou_text}` +
                  (bad.length ? `: ${bad.join('; ')}` : ''));
    }
  }
  if (json_file) { fs.writeFileSync(json_file, JSON.stringify(results, null, 2)); }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => { console.error(`accuracy_check: ${String(e.message || e).split('\n')[0]}`); process.exit(2); });
