#!/usr/bin/env node
'use strict';
// ONNX Runtime as an oracle: runs an original model and its compiled counterpart on the same
// inputs and reports, per output, max abs / max relative difference, cosine similarity and
// new NaN/Inf. One process handles many cases (ORT start-up is the slow part).
//
//   node compare.js [options] ORIGINAL COMPILED [ORIGINAL COMPILED ...]
//   node compare.js [options] --cases cases.json
//
// A case in cases.json (an array, or {"cases": [...]}):
//   {"name": "...", "original": "a.onnx", "compiled": "b.onnx",
//    "inputs": ["input_0.pb", ...],      TensorProto feeds (else seeded random inputs)
//    "expected": ["output_0.pb", ...],   reference outputs: the original must reproduce them
//                                        (else the case is skipped) and so must the compiled
//    "shapes": {"x": [1, 3, 32, 32]}, "values": {"sr": 16000}, "ranges": {"x": [0, 1]},
//    "seed": 1, "thresholds": {...same keys as the options below, snake_case...}}
//
// Exit status: 0 all cases pass (or skip), 1 some case fails (or skips under --strict),
// 2 bad usage or unreadable case file.

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { compare, violations } = require('./metrics');
const { random_feeds, cast_for } = require('./inputs');
const { read_tensor_proto } = require('./tensor_proto');

const k_usage = `usage: compare.js [options] (ORIGINAL COMPILED)... | --cases FILE
inputs:     --seed N  --shape NAME:D0,D1,...  --value NAME=V  --range NAME=LO,HI  --dim-default N
thresholds (each one given must hold for every output):
            --max-rel X  --max-abs X  --min-cosine X  --allclose [--rtol X] [--atol X]
            --abs-floor X (1e-6)  --scale-floor X (1e-3): the relative difference divides by
              max(|ref|, abs-floor, scale-floor * max|ref|)
            --allow-new-nonfinite  --no-type-check
reference:  --expected-rtol X (1e-3) --expected-atol X (1e-7): how closely ORT must reproduce
              a case's expected outputs (from the original, then from the compiled)
other:      --strict (a skipped case fails)  --json FILE (full report)  --threads N (1)  --quiet`;

function usage(message) {
  process.stderr.write(`compare.js: ${message}\n${k_usage}\n`);
  process.exit(2);
}

function parse_args(argv) {
  const o = { pairs: [], cases_file: null, used_specs: new Set(), seed: 1, specs: {}, thresholds: {},
              expected_rtol: 1e-3, expected_atol: 1e-7, strict: false, json: null, threads: 1,
              quiet: false, dim_default: 1 };
  const spec = (name) => (o.specs[name] ??= {});
  const num = (i) => {
    const v = Number(argv[i]);
    if (i >= argv.length || Number.isNaN(v)) {
      usage(`${argv[i - 1]} needs a number`);
    }
    return v;
  };
  const split_named = (text, sep) => {
    const at = text.lastIndexOf(sep);
    if (at <= 0) {
      usage(`expected NAME${sep}...: ${text}`);
    }
    return [text.slice(0, at), text.slice(at + 1)];
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const t = o.thresholds;
    switch (a) {
      case '--cases': o.cases_file = argv[++i]; break;
      case '--seed': o.seed = num(++i); break;
      case '--dim-default': o.dim_default = num(++i); break;
      case '--shape': {
        const [name, dims] = split_named(argv[++i] ?? '', ':');
        spec(name).shape = dims.split(',').map(Number);
        break;
      }
      case '--value': {
        const [name, v] = split_named(argv[++i] ?? '', '=');
        spec(name).value = Number(v);
        break;
      }
      case '--range': {
        const [name, r] = split_named(argv[++i] ?? '', '=');
        spec(name).range = r.split(',').map(Number);
        break;
      }
      case '--max-rel': t.max_rel = num(++i); break;
      case '--max-abs': t.max_abs = num(++i); break;
      case '--min-cosine': t.min_cosine = num(++i); break;
      case '--allclose': t.allclose = true; break;
      case '--rtol': t.rtol = num(++i); break;
      case '--atol': t.atol = num(++i); break;
      case '--abs-floor': t.abs_floor = num(++i); break;
      case '--scale-floor': t.scale_floor = num(++i); break;
      case '--allow-new-nonfinite': t.allow_new_nonfinite = true; break;
      case '--no-type-check': t.check_type = false; break;
      case '--expected-rtol': o.expected_rtol = num(++i); break;
      case '--expected-atol': o.expected_atol = num(++i); break;
      case '--strict': o.strict = true; break;
      case '--json': o.json = argv[++i]; break;
      case '--threads': o.threads = num(++i); break;
      case '--quiet': o.quiet = true; break;
      case '-h': case '--help': process.stdout.write(`${k_usage}\n`); process.exit(0); break;
      default:
        if (a.startsWith('-')) {
          usage(`unknown option ${a}`);
        }
        o.pairs.push(a);
    }
  }
  if (o.pairs.length % 2 !== 0) {
    usage('models come in pairs: ORIGINAL COMPILED');
  }
  if (!o.cases_file && o.pairs.length === 0) {
    usage('nothing to compare');
  }
  return o;
}

function load_cases(o) {
  const cases = [];
  for (let i = 0; i < o.pairs.length; i += 2) {
    cases.push({ name: o.pairs[i + 1], original: o.pairs[i], compiled: o.pairs[i + 1] });
  }
  if (o.cases_file) {
    let parsed;
    try {
      parsed = JSON.parse(fs.readFileSync(o.cases_file, 'utf8'));
    } catch (e) {
      usage(`cannot read ${o.cases_file}: ${e.message}`);
    }
    const base = path.dirname(path.resolve(o.cases_file));
    const resolve = (p) => (p ? path.resolve(base, p) : p);
    for (const c of Array.isArray(parsed) ? parsed : parsed.cases) {
      cases.push({ ...c, name: c.name ?? c.compiled ?? c.original, original: resolve(c.original),
                   compiled: resolve(c.compiled), inputs: c.inputs?.map(resolve),
                   expected: c.expected?.map(resolve) });
    }
  }
  return cases;
}

// Merges command-line input specs with a case's shapes/values/ranges (the case wins).
function input_specs(o, c) {
  const specs = JSON.parse(JSON.stringify(o.specs));
  const put = (field, key) => {
    for (const [name, v] of Object.entries(c[field] ?? {})) {
      (specs[name] ??= {})[key] = v;
    }
  };
  put('shapes', 'shape');
  put('values', 'value');
  put('ranges', 'range');
  for (const s of Object.values(specs)) {
    s.dim_default ??= o.dim_default;
  }
  return specs;
}

// Maps TensorProto files to a session's inputs/outputs: by the tensor's name when it names one,
// else by position (how ONNX's backend runner feeds them).
function read_named(files, names) {
  const out = {};
  files.forEach((file, index) => {
    const { name, tensor } = read_tensor_proto(fs.readFileSync(file));
    const key = names.includes(name) ? name : names[index];
    if (key === undefined) {
      throw new Error(`${path.basename(file)}: more files than the model has names`);
    }
    out[key] = tensor;
  });
  return out;
}

async function open(file, o) {
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: o.threads, interOpNumThreads: 1, logSeverityLevel: 3,
  });
}

function check_outputs(reference, actual, names, thresholds) {
  const outputs = [];
  const problems = [];
  for (const name of names) {
    if (!reference[name]) {
      continue;
    }
    if (!actual[name]) {
      problems.push(`${name}: missing`);
      continue;
    }
    const m = compare(reference[name], actual[name], thresholds);
    const v = violations(m, thresholds);
    outputs.push({ name, ...m, violations: v });
    problems.push(...v.map((text) => `${name}: ${text}`));
  }
  return { outputs, problems };
}

async function run_case(o, c) {
  const thresholds = { rtol: 1e-3, atol: 1e-7, ...o.thresholds, ...(c.thresholds ?? {}) };
  const expected_t = { allclose: true, rtol: c.expected_rtol ?? o.expected_rtol,
                       atol: c.expected_atol ?? o.expected_atol, allow_new_nonfinite: true };
  let original;
  try {
    original = await open(c.original, o);
  } catch (e) {
    return { status: 'skip', reason: `ORT cannot load the original: ${first_line(e)}` };
  }
  let feeds;
  try {
    for (const meta of original.inputMetadata) {
      if (!meta.isTensor) {
        throw new Error(`input ${meta.name} is not a tensor`);
      }
    }
    const strict = new Set([...Object.keys(c.shapes ?? {}), ...Object.keys(c.values ?? {}),
                            ...Object.keys(c.ranges ?? {})]);
    for (const name of original.inputNames) {
      o.used_specs.add(name);
    }
    feeds = c.inputs ? read_named(c.inputs, original.inputNames)
                     : random_feeds(original, input_specs(o, c), c.seed ?? o.seed, strict);
  } catch (e) {
    await original.release();
    return { status: 'skip', reason: `inputs: ${first_line(e)}` };
  }
  let reference;
  try {
    reference = await original.run(feeds);
  } catch (e) {
    return { status: 'skip', reason: `ORT cannot run the original: ${first_line(e)}` };
  } finally {
    await original.release();
  }
  const names = original.outputNames;
  let expected = null;
  if (c.expected) {
    try {
      expected = read_named(c.expected, names);
    } catch (e) {
      return { status: 'skip', reason: `expected outputs: ${first_line(e)}` };
    }
    const r = check_outputs(expected, reference, names, expected_t);
    if (r.problems.length) {
      return { status: 'skip', reason: `ORT does not reproduce the expected outputs from the original: ${r.problems[0]}` };
    }
  }
  if (!c.compiled) {
    return { status: 'pass', outputs: [] };
  }
  let compiled;
  try {
    compiled = await open(c.compiled, o);
  } catch (e) {
    return { status: 'fail', reason: `ORT cannot load the compiled model: ${first_line(e)}` };
  }
  let actual;
  try {
    const missing = compiled.inputNames.filter((n) => !(n in feeds));
    if (missing.length) {
      throw new Error(`the compiled model has inputs the original lacks: ${missing.join(', ')}`);
    }
    const lost = names.filter((n) => !compiled.outputNames.includes(n));
    if (lost.length) {
      throw new Error(`the compiled model lost outputs: ${lost.join(', ')}`);
    }
    // Both graphs must keep the original's interface so a caller can swap one for the other.
    const dropped = Object.keys(feeds).filter((n) => !compiled.inputNames.includes(n));
    if (dropped.length) {
      throw new Error(`the compiled model lost inputs: ${dropped.join(', ')}`);
    }
    const types = Object.fromEntries(compiled.inputMetadata.map((m) => [m.name, m.type]));
    const retyped = compiled.inputNames.filter((n) => types[n] !== feeds[n].type);
    if (retyped.length && thresholds.check_type !== false) {
      throw new Error(`the compiled model changed input types: ${retyped.map((n) =>
        `${n} ${feeds[n].type} -> ${types[n]}`).join(', ')} (--no-type-check allows it)`);
    }
    const used = Object.fromEntries(compiled.inputNames.map((n) => [n, cast_for(feeds[n], types[n])]));
    actual = await compiled.run(used);
  } catch (e) {
    return { status: 'fail', reason: first_line(e) };
  } finally {
    await compiled.release();
  }
  const vs_original = check_outputs(reference, actual, names, thresholds);
  const result = { status: 'pass', outputs: vs_original.outputs };
  const problems = [...vs_original.problems];
  if (expected) {
    const r = check_outputs(expected, actual, names, expected_t);
    result.expected_outputs = r.outputs;
    problems.unshift(...r.problems.map((p) => `vs expected: ${p}`));
  }
  if (problems.length) {
    result.status = 'fail';
    result.reason = problems[0];
    result.problems = problems;
  }
  return result;
}

function first_line(e) {
  return String(e && e.message ? e.message : e).split('\n')[0].trim();
}

function fmt(x) {
  if (!Number.isFinite(x) || x === 0) {
    return String(x);
  }
  return Math.abs(x) < 1e-3 || Math.abs(x) >= 1e4 ? x.toExponential(2) : x.toPrecision(3);
}

async function main() {
  const o = parse_args(process.argv.slice(2));
  const cases = load_cases(o);
  const report = [];
  const counts = { pass: 0, fail: 0, skip: 0 };
  for (const c of cases) {
    let r;
    try {
      r = await run_case(o, c);
    } catch (e) {
      r = { status: 'fail', reason: `oracle error: ${first_line(e)}` };
    }
    if (r.status === 'skip' && o.strict) {
      r.status = 'fail';
    }
    counts[r.status] += 1;
    report.push({ name: c.name, original: c.original, compiled: c.compiled, ...r });
    const line = `${r.status.toUpperCase()} ${c.name}${r.reason ? `: ${r.reason}` : ''}`;
    if (!o.quiet || r.status !== 'pass') {
      process.stdout.write(`${line}\n`);
    }
    if (!o.quiet) {
      for (const m of r.outputs ?? []) {
        process.stdout.write(`  ${m.name} [${m.actual_dims}] ${m.actual_type}: max_abs=${fmt(m.max_abs)} ` +
                             `max_rel=${fmt(m.max_rel)} cosine=${m.cosine.toFixed(7)} ` +
                             `new_nonfinite=${m.new_nonfinite}\n`);
      }
    }
  }
  // A command-line override applies to every case with that input; one that no case used is a
  // typo and would otherwise go unnoticed.
  for (const name of Object.keys(o.specs)) {
    if (!o.used_specs.has(name)) {
      process.stdout.write(`FAIL --shape/--value/--range "${name}": no model has that input\n`);
      counts.fail += 1;
    }
  }
  if (o.json) {
    fs.writeFileSync(o.json, JSON.stringify({ counts, cases: report }, null, 1) + '\n');
  }
  process.stdout.write(`oracle: ${counts.pass} pass, ${counts.fail} fail, ${counts.skip} skip\n`);
  if (counts.pass + counts.fail + counts.skip === 0) {
    // No case given (an empty list of pairs from the caller) is no verdict, never a pass.
    process.stdout.write('FAIL oracle: no case to compare\n');
    counts.fail = 1;
  }
  process.exitCode = counts.fail ? 1 : 0;
}

// run_corpus.js reuses the input specs, the per-output checks and the error summary.
module.exports = { input_specs, check_outputs, first_line, fmt };

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`compare.js: ${e.stack || e}\n`);
    process.exit(2);
  });
}
