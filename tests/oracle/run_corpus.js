#!/usr/bin/env node
'use strict';
// ONNX Runtime as the oracle for the modern-opset corpus (issue 17; tests/tools/make_opset_corpus.py).
//
//   node run_corpus.js [options] CORPUS_DIR
//
// For each case of CORPUS_DIR/cases.json the original model must do in ORT, at every graph
// optimisation level, what the case says: "run" (loads and runs), "load" (valid for ORT, which
// lacks only a CPU kernel: "Could not find an implementation") or "skip" (ORT rejects the model
// with the error quoted in the case's "reason").
//
// With --compiled DIR, DIR/NAME/MODE/ holds npucc's output for the case (MODE: plain, fast =
// 'fast|step|0.9' --emit-emulation, fast1 = 'fast1|loss|1.05' --emit-emulation), and each graph
// runs at every level on the original's inputs, against the original at the same level:
//   high.onnx                 equal: max rel diff <= 1e-5 (floors as compare.js: abs 1e-6,
//                             1e-3 of the largest |reference|), integer/bool/string outputs exact;
//                             or equal to the original at another level (ORT's own variation)
//   fast  low.onnx            runs: the original's output names, shapes and types, no new NaN/Inf
//   fast  emulation.onnx      cosine >= 0.99
//   fast1 low.onnx (bfloat16) runs as fast's, or ORT reports only "Could not find an implementation"
//   fast1 emulation.onnx      cosine >= 0.99
// A low graph's accuracy is the emulation's to show: ORT's CPU kernels compute most float16
// ops in float32 (at "disabled" it drops the Cast pairs and gives the float32 result
// exactly), so a cosine of ORT's run of low.onnx would not show float16's rounding.
// tests/e2e/test_modern_opsets.sh checks with ONNX's reader that each emulation rounds what
// its low graph holds (tests/tools/check_emulation.py).
// Graph files with equal bytes are run once. --compile-log FILE (lines NAME<TAB>MODE<TAB>STATUS<TAB>
// MESSAGE, STATUS ok | refused | fail) merges npucc's own outcome: "refused" (a refusal the caller
// accepted, e.g. an element type npucc does not carry, named in one line) leaves nothing to run for
// that mode, "fail" fails the case.
//
// Prints one line per case (PASS/FAIL name[: first problem], then the other problems indented)
// and at the end "N passed, N failed". Exit 1 if a case fails, 2 on bad usage.
// --probe prints what ORT does with each original at each level (how cases.json's expectations
// were measured) and exits 0.

const child_process = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { compare, violations } = require('./metrics');
const { random_feeds, cast_for } = require('./inputs');
const { input_specs, first_line, fmt } = require('./compare');
const { Reader } = require('./tensor_proto');

ort.env.logLevel = 'fatal'; // ORT's own log would repeat each error on stderr
const k_levels = ['disabled', 'basic', 'extended', 'all'];
const k_missing_kernel = /Could not find an implementation/;
const k_float_types = new Set(['float32', 'float64', 'float16', 'bfloat16']);
const k_equal = { max_rel: 1e-5, abs_floor: 1e-6, scale_floor: 1e-3 };

const k_usage = `usage: run_corpus.js [options] CORPUS_DIR
  --compiled DIR      npucc's output per case: DIR/NAME/{plain,fast,fast1}/{high,low,emulation}.onnx
  --compile-log FILE  NAME<TAB>MODE<TAB>ok|refused|fail<TAB>MESSAGE per compile
  --filter REGEX      only the cases whose name matches
  --levels LIST       ORT optimisation levels (default disabled,basic,extended,all)
  --probe             print ORT's outcome per original and level, check nothing
  --json FILE         full report
  --threads N (1)     --quiet (only failures and the summary)`;

function usage(message) {
  process.stderr.write(`run_corpus.js: ${message}\n${k_usage}\n`);
  process.exit(2);
}

function parse_args(argv) {
  const o = { corpus: null, compiled: null, compile_log: null, filter: null, levels: k_levels,
              probe: false, json: null, threads: 1, quiet: false };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) {
        usage(`${a} needs a value`);
      }
      return argv[++i];
    };
    switch (a) {
      case '--compiled': o.compiled = value(); break;
      case '--compile-log': o.compile_log = value(); break;
      case '--filter': o.filter = new RegExp(value()); break;
      case '--levels': o.levels = value().split(','); break;
      case '--probe': o.probe = true; break;
      case '--json': o.json = value(); break;
      case '--threads': o.threads = Number(value()); break;
      case '--quiet': o.quiet = true; break;
      case '-h': case '--help': process.stdout.write(`${k_usage}\n`); process.exit(0); break;
      default:
        if (a.startsWith('-') || o.corpus) {
          usage(`unexpected argument ${a}`);
        }
        o.corpus = a;
    }
  }
  if (!o.corpus) {
    usage('no corpus folder');
  }
  for (const l of o.levels) {
    if (!k_levels.includes(l)) {
      usage(`unknown level ${l}`);
    }
  }
  return o;
}

// ORT's messages name the model file by its path; the corpus folder is a temporary one.
function clean(message, dir) {
  return first_line(message).split(`${dir}/`).join('');
}

// Where the worker is (the parent reports it if ORT crashes there).
let where = () => {};

async function open(file, level, o) {
  return ort.InferenceSession.create(file, {
    graphOptimizationLevel: level, intraOpNumThreads: o.threads, interOpNumThreads: 1,
    logSeverityLevel: 4,
  });
}

// Runs `file` at `level` on `feeds` (cast to the graph's declared input types where a low graph
// changed them), or on inputs made for the graph itself when the original never loaded
// (make_feeds). Returns {outputs, names, input_types} or {error}.
async function run_graph(file, level, feeds, o, make_feeds = null) {
  let session;
  try {
    session = await open(file, level, o);
  } catch (e) {
    return { error: clean(e, path.dirname(file)), stage: 'load' };
  }
  try {
    const input_types = Object.fromEntries(session.inputMetadata.map((m) => [m.name, m.type]));
    let used = feeds;
    if (feeds) {
      const missing = session.inputNames.filter((n) => !(n in feeds));
      if (missing.length) {
        return { error: `inputs the original lacks: ${missing.join(', ')}`, stage: 'interface' };
      }
      const dropped = Object.keys(feeds).filter((n) => !session.inputNames.includes(n));
      if (dropped.length) {
        return { error: `lost inputs: ${dropped.join(', ')}`, stage: 'interface' };
      }
      used = Object.fromEntries(session.inputNames.map((n) => [n, cast_for(feeds[n], input_types[n])]));
    } else if (make_feeds) {
      used = make_feeds(session);
    }
    const outputs = await session.run(used);
    return { outputs, names: session.outputNames, input_types };
  } catch (e) {
    return { error: clean(e, path.dirname(file)), stage: 'run' };
  } finally {
    await session.release();
  }
}

function load_compile_log(file) {
  const log = new Map();
  if (!file) {
    return log;
  }
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) {
      continue;
    }
    const [name, mode, status, ...rest] = line.split('\t');
    if (!log.has(name)) {
      log.set(name, new Map());
    }
    log.get(name).set(mode, { status, message: rest.join('\t') });
  }
  return log;
}

// The thresholds each compiled graph must meet, by mode and role.
function graph_checks(mode) {
  const checks = [{ role: 'high', kind: 'equal' }];
  if (mode === 'fast') {
    checks.push({ role: 'low', kind: 'runs' });
    checks.push({ role: 'emulation', kind: 'close', min_cosine: 0.99 });
  } else if (mode === 'fast1') {
    checks.push({ role: 'low', kind: 'runs', bfloat16: true });
    checks.push({ role: 'emulation', kind: 'close', min_cosine: 0.99 });
  }
  return checks;
}

function judge(reference, ref_names, actual, names, check) {
  const problems = [];
  const metrics = [];
  for (const name of ref_names) {
    if (!names.includes(name) || !actual[name]) {
      problems.push(`${name}: missing`);
      continue;
    }
    const r = reference[name];
    const a = actual[name];
    const is_float = k_float_types.has(r.type);
    let t;
    if (check.kind === 'equal') {
      t = is_float ? { ...k_equal } : { max_abs: 0 };
    } else if (check.kind === 'runs') {
      t = { abs_floor: 1e-6, scale_floor: 1e-3 }; // shape, type and no new NaN/Inf only
    } else {
      t = { min_cosine: check.min_cosine, abs_floor: 1e-6, scale_floor: 1e-3 };
      if (!is_float) {
        t.min_cosine = check.min_cosine; // indices and masks: compared as numbers
      }
    }
    const m = compare(r, a, t);
    if (r.type === 'string' && m.mismatched) {
      m.max_abs = Infinity;
    }
    const v = violations(m, t);
    metrics.push({ name, max_abs: m.max_abs, max_rel: m.max_rel, cosine: m.cosine, type: m.actual_type,
                   dims: m.actual_dims, violations: v });
    problems.push(...v.map((text) => `${name}: ${text}`));
  }
  return { problems, metrics };
}

// ModelProto.ir_version (field 1) and the ai.onnx opset (opset_import = 8: domain 1, version 2),
// read with a wire-format walk: the high graph must keep the model's own (issue 17).
function model_versions(file) {
  const reader = new Reader(fs.readFileSync(file));
  const out = { ir: null, opset: null };
  while (!reader.done()) {
    const key = Number(reader.varint());
    const field = key >> 3;
    const wire = key & 7;
    if (field === 1 && wire === 0) {
      out.ir = Number(reader.varint());
    } else if (field === 8 && wire === 2) {
      const sub = new Reader(reader.take(Number(reader.varint())));
      let domain = '';
      let version = null;
      while (!sub.done()) {
        const k = Number(sub.varint());
        if (k >> 3 === 1 && (k & 7) === 2) {
          domain = Buffer.from(sub.take(Number(sub.varint()))).toString('utf8');
        } else if (k >> 3 === 2 && (k & 7) === 0) {
          version = Number(sub.varint());
        } else {
          sub.skip(k & 7);
        }
      }
      if (domain === '' || domain === 'ai.onnx') {
        out.opset = version;
      }
    } else {
      reader.skip(wire);
    }
  }
  return out;
}

// The field numbers present in each model-local function (ModelProto.functions = 25).
function function_fields(file) {
  const reader = new Reader(fs.readFileSync(file));
  const functions = [];
  while (!reader.done()) {
    const key = Number(reader.varint());
    if (key >> 3 === 25 && (key & 7) === 2) {
      const sub = new Reader(reader.take(Number(reader.varint())));
      const fields = new Set();
      while (!sub.done()) {
        const k = Number(sub.varint());
        fields.add(k >> 3);
        sub.skip(k & 7);
      }
      functions.push(fields);
    } else {
      reader.skip(key & 7);
    }
  }
  return functions;
}

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

async function run_case(o, c, log) {
  const file = path.join(o.corpus, c.model);
  const problems = [];
  const notes = [];
  const report = { name: c.name, expect: c.expect, original: {}, graphs: [] };
  // The inputs: from the original as ORT sees it (the least optimised session).
  let feeds = null;
  const specs = input_specs({ specs: {}, dim_default: 1 }, c);
  const strict = new Set([...Object.keys(c.shapes ?? {}), ...Object.keys(c.values ?? {}),
                          ...Object.keys(c.ranges ?? {})]);
  const reference = {};
  for (const level of o.levels) {
    let r;
    if (!feeds) {
      let session;
      try {
        where(`the original at ${level}`);
        session = await open(file, level, o);
        feeds = random_feeds(session, specs, c.seed ?? 1, strict);
        await session.release();
      } catch (e) {
        r = { error: clean(e, o.corpus), stage: 'load' };
      }
    }
    if (!r) {
      where(`the original at ${level}`);
      r = await run_graph(file, level, feeds, o);
    }
    report.original[level] = r.error ? `${r.stage}: ${r.error}` : 'ran';
    if (!r.error && !report.output_shapes) {
      // what the generator declares as the graph's output shapes (make_opset_corpus.py)
      report.output_shapes = Object.fromEntries(r.names.map((n) => [n, Array.from(r.outputs[n].dims, Number)]));
    }
    if (!r.error) {
      reference[level] = r;
    }
    if (o.probe) {
      continue;
    }
    if (c.expect === 'run' && r.error) {
      problems.push(`original at ${level}: ${r.stage}: ${r.error}`);
    } else if (c.expect === 'load' && r.error && !k_missing_kernel.test(r.error)) {
      problems.push(`original at ${level} (expected only a missing kernel): ${r.error}`);
    } else if (c.expect === 'load' && !r.error) {
      notes.push(`original runs at ${level} (cases.json says load)`);
    } else if (c.expect === 'skip' && !r.error) {
      problems.push(`original runs at ${level}, cases.json says skip (${c.reason})`);
    } else if (c.expect === 'skip' && !r.error.includes(c.reason)) {
      problems.push(`original at ${level}: ORT now says "${r.error}", not "${c.reason}"`);
    }
  }
  if (o.probe || !o.compiled) {
    return { problems, notes, report };
  }
  const modes = log.get(c.name) ?? new Map();
  const cache = new Map();
  // npucc's failures, one line for the modes that failed with the same message
  const by_message = new Map();
  for (const mode of ['plain', 'fast', 'fast1']) {
    const entry = modes.get(mode);
    if (entry && entry.status === 'fail') {
      by_message.set(entry.message, [...(by_message.get(entry.message) ?? []), mode]);
    }
  }
  for (const [message, failed_modes] of by_message) {
    problems.push(`npucc ${failed_modes.join(', ')}: ${message}`);
  }
  for (const mode of ['plain', 'fast', 'fast1']) {
    const entry = modes.get(mode);
    if (entry && entry.status === 'fail') {
      continue;
    }
    if (entry && entry.status === 'refused') {
      notes.push(`npucc ${mode} refused: ${entry.message}`);
      continue;
    }
    const dir = path.join(o.compiled, c.name, mode);
    if (!fs.existsSync(dir)) {
      if (entry) {
        problems.push(`npucc ${mode}: no output folder ${dir}`);
      }
      continue;
    }
    if (c.expect === 'skip') {
      notes.push(`${mode}: not compared (ORT cannot load the original)`);
      continue;
    }
    for (const default_check of graph_checks(mode)) {
      const label = `${mode}/${default_check.role}`;
      // A gap known and open (cases.json known_gaps: {"mode/role": {min_cosine, why}}): the
      // graph is held to the figure it reaches, so a regression still fails, and said so.
      const gap = (c.known_gaps || {})[label];
      const check = gap ? { ...default_check, min_cosine: gap.min_cosine } : default_check;
      if (gap) {
        notes.push(`KNOWN GAP ${label}: held at cosine ${gap.min_cosine}, not ${default_check.min_cosine}: ${gap.why}`);
      }
      const graph = path.join(dir, `${check.role}.onnx`);
      if (!fs.existsSync(graph)) {
        problems.push(`${label}: missing`);
        continue;
      }
      const sha = sha256(graph);
      if (check.role === 'high') {
        const want = { ir: c.ir, opset: c.opset };
        const got = model_versions(graph);
        if (got.ir !== want.ir || got.opset !== want.opset) {
          problems.push(`${label}: IR ${got.ir} opset ${got.opset}, the model's are IR ${want.ir} opset ${want.opset}`);
        }
        // IR 9/10 function fields (attribute_proto 11, value_info 12, overload 13): kept by a
        // function npucc keeps (inlining it is npucc's choice; the outputs check the meaning)
        if (c.function_fields) {
          const functions = function_fields(graph);
          if (!functions.length) {
            notes.push(`${label}: the model-local functions were inlined`);
          }
          for (const n of c.function_fields) {
            if (functions.some((f) => !f.has(n))) {
              problems.push(`${label}: a model-local function lost FunctionProto field ${n}`);
            }
          }
        }
      }
      for (const level of o.levels) {
        const key = `${sha}:${level}`;
        let r = cache.get(key);
        if (!r) {
          where(`${label} at ${level}`);
          r = await run_graph(graph, level, feeds, o,
                              (session) => random_feeds(session, specs, c.seed ?? 1, strict));
          cache.set(key, r);
        }
        const row = { graph: label, level };
        report.graphs.push(row);
        if (r.error) {
          row.error = r.error;
          const allowed = (check.bfloat16 || c.expect === 'load') && k_missing_kernel.test(r.error);
          if (allowed) {
            row.allowed = true;
          } else {
            problems.push(`${label} at ${level}: ${r.stage}: ${r.error}`);
          }
          continue;
        }
        const ref = reference[level];
        if (!ref) {
          row.note = 'original did not run: not compared';
          continue;
        }
        const typed = Object.entries(r.input_types).filter(([n, t]) => feeds[n] && t !== feeds[n].type);
        if (typed.length) {
          problems.push(`${label}: input types changed: ${typed.map(([n, t]) => `${n} ${feeds[n].type} -> ${t}`).join(', ')}`);
        }
        let j = judge(ref.outputs, ref.names, r.outputs, r.names, check);
        if (j.problems.length && check.kind === 'equal') {
          // ORT's own fusions move float32 results by up to ~1e-5 (the transformer block differs
          // by 9.7e-6 between "disabled" and "all"): a high graph that ORT optimises differently
          // from the original still equals the original if it matches ORT's result for the
          // original at another level.
          for (const [other, alt] of Object.entries(reference)) {
            const k = other === level ? null : judge(alt.outputs, alt.names, r.outputs, r.names, check);
            if (k && !k.problems.length) {
              notes.push(`${label} at ${level} equals the original at ${other}`);
              j = k;
              break;
            }
          }
        }
        row.metrics = j.metrics;
        problems.push(...j.problems.map((p) => `${label} at ${level}: ${p}`));
      }
    }
  }
  return { problems, notes, report };
}

// Prints one case's verdict; returns true if it passed.
function print_case(o, c, r) {
  if (o.probe) {
    const outcomes = Object.entries(r.report.original ?? {}).map(([l, v]) => `${l}=${v}`);
    const values = Object.values(r.report.original ?? {});
    const same = values.length && new Set(values).size === 1;
    process.stdout.write(`${c.name}\t${same ? values[0] : outcomes.join(' | ') || r.problems[0]}\n`);
    return true;
  }
  if (r.problems.length) {
    process.stdout.write(`FAIL ${c.name}: ${r.problems[0]}\n`);
    for (const p of r.problems.slice(1, 6)) {
      process.stdout.write(`  ${p}\n`);
    }
    if (r.problems.length > 6) {
      process.stdout.write(`  (${r.problems.length - 6} more)\n`);
    }
    return false;
  }
  if (!o.quiet) {
    const worst = (r.report.graphs ?? []).flatMap((g) => g.metrics ?? []);
    const cos = worst.length ? Math.min(...worst.map((m) => m.cosine)) : null;
    const extra = [c.expect !== 'run' ? `expect ${c.expect}` : '', ...r.notes.slice(0, 1),
                   cos !== null ? `min cosine ${cos.toFixed(6)}` : ''].filter(Boolean);
    process.stdout.write(`PASS ${c.name}${extra.length ? ` (${extra.join('; ')})` : ''}\n`);
  }
  return true;
}

async function evaluate(o, c, log) {
  try {
    return await run_case(o, c, log);
  } catch (e) {
    return { problems: [`oracle error: ${first_line(e)}`], notes: [], report: { name: c.name } };
  }
}

// ORT can crash on a graph (1.30 segfaults optimising some float16 LSTMs at "all"): the cases run
// in a worker process, which reports where it is; when it dies, the case it was on fails with
// the signal and the graph and level it was running, and a new worker takes the rest.
function run_in_workers(o, cases, on_result) {
  return new Promise((resolve) => {
    let next = 0;
    const spawn = () => {
      if (next >= cases.length) {
        resolve();
        return;
      }
      const worker = child_process.fork(__filename, [...process.argv.slice(2), '--worker-from', String(next)],
                                        { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let at = 'the original';
      worker.on('message', (m) => {
        if (m.type === 'at') {
          at = m.where;
        } else if (m.type === 'result') {
          on_result(m.index, m.result);
          next = m.index + 1;
          at = 'the original';
        }
      });
      worker.on('exit', (code, signal) => {
        if (next < cases.length && (signal || code !== 0)) {
          const how = signal ? `ORT crashed (${signal})` : `the oracle's worker exited with ${code}`;
          on_result(next, { problems: [`${how} running ${at}`], notes: [], report: { name: cases[next].name } });
          next += 1;
        }
        spawn();
      });
    };
    spawn();
  });
}

async function main() {
  const worker_from = process.argv.indexOf('--worker-from');
  const argv = process.argv.slice(2).filter((a, i, all) => a !== '--worker-from' && all[i - 1] !== '--worker-from');
  const o = parse_args(argv);
  let cases;
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(o.corpus, 'cases.json'), 'utf8'));
    cases = Array.isArray(parsed) ? parsed : parsed.cases;
  } catch (e) {
    usage(`cannot read ${o.corpus}/cases.json: ${e.message}`);
  }
  o.corpus = path.resolve(o.corpus);
  cases = cases.filter((c) => !o.filter || o.filter.test(c.name));
  const log = load_compile_log(o.compile_log);
  if (worker_from >= 0) {
    where = (text) => process.send({ type: 'at', where: text });
    for (let i = Number(process.argv[worker_from + 1]); i < cases.length; ++i) {
      const result = await evaluate(o, cases[i], log);
      await new Promise((done) => process.send({ type: 'result', index: i, result }, done));
    }
    process.disconnect();
    return;
  }
  const reports = [];
  let passed = 0;
  let failed = 0;
  const by_opset = new Map();
  await run_in_workers(o, cases, (index, r) => {
    const c = cases[index];
    reports.push({ ...r.report, problems: r.problems, notes: r.notes });
    const ok = print_case(o, c, r);
    passed += ok ? 1 : 0;
    failed += ok ? 0 : 1;
    const tally = by_opset.get(c.opset) ?? [0, 0];
    tally[ok ? 0 : 1] += 1;
    by_opset.set(c.opset, tally);
  });
  if (!o.probe && by_opset.size > 1) {
    const parts = [...by_opset].sort((a, b) => a[0] - b[0]).map(([v, [p, f]]) => `${v}: ${p}/${p + f}`);
    process.stdout.write(`passed by opset: ${parts.join(', ')}\n`);
  }
  if (o.json) {
    fs.writeFileSync(o.json, `${JSON.stringify({ passed, failed, cases: reports }, null, 1)}\n`);
  }
  if (!o.probe) {
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
  }
  // No case judged (a filter matching nothing, an empty corpus) is no verdict, never a pass.
  process.exitCode = failed || (!o.probe && passed === 0) ? 1 : 0;
}

main().catch((e) => {
  process.stderr.write(`run_corpus.js: ${e.stack || e}\n`);
  process.exit(2);
});
