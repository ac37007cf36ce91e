#!/usr/bin/env node
'use strict';
// ONNX Runtime's verdict on npucc's graphs for the classic-topology corpus (issue 33,
// tests/tools/make_classic_corpus.py, tests/e2e/test_classic_models.sh).
//
//   node classic_check.js CASES.json COMPILED_DIR [--filter RE] [--levels a,b]
//
// COMPILED_DIR/NAME/MODE/{high,low,emulation}.onnx for MODE fast1 and fast. Every case is fed
// its rendered image (input_file). At each optimisation level (default all four):
// - the original runs;
// - each high graph equals the original (max relative difference 1e-5, floors 1e-6 and 1e-3
//   of the largest |reference|);
// - each emulation graph is within cosine 0.99 of the high graph for fast (float16); for
//   fast1 (bfloat16) the bound is argued from fast's drift on the same image, graph and
//   level, not set under a measured value: bfloat16 keeps 8 significant bits to float16's
//   11, so each rounding error is 8 times larger, and 1 - cosine, which grows with the
//   square of the error, about 64 times. fast1 must stay within twice that:
//   1 - cosine(fast1) <= 2 * 64 * (1 - cosine(fast)), and never below 0.9 (floor 1e-4 for
//   nets where float16 drifts by nothing). Measured on the 10 logits of the random-weight
//   nets (fast / fast1 / the bound): GoogLeNet 0.99937 / 0.9764 / 0.919, MobileNetV2 0.99936
//   / 0.9810 / 0.918, ResNet-18 0.999985 / 0.99905 / 0.998 (a ratio of 63: the argument's
//   64), the others above 0.9999 either way;
// - fast's float16 low graph runs at every level with the high graph's output names, shapes
//   and types (cast back to float32) and no new NaN/Inf. Its accuracy is not judged from
//   ONNX Runtime's run of it: the CPU kernels compute float16 Conv in float32 and would hide
//   float16's rounding; the emulation graph above is what shows it;
// - fast1's bfloat16 low graph loads, or fails only with "Could not find an implementation".
// A case's "masks" are outputs holding a Dropout mask. ORT's Dropout kernels for versions 7
// to 11 write zeros there, its 12 and later ones (ONNX's meaning in inference: nothing
// dropped) true; so where a graph raised to opset 12 or later stands against one below, its
// mask must be all true (1) instead of equal.
// One line per case and mode; exit 1 if any fails.

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { compare, violations } = require('./metrics');
const { read_tensor_proto, Reader } = require('./tensor_proto');

const k_levels = ['disabled', 'basic', 'extended', 'all'];

function parse_args(argv) {
  const o = { cases: argv[0], compiled: argv[1], filter: null, levels: k_levels };
  if (!o.cases || !o.compiled) {
    process.stderr.write('usage: classic_check.js CASES.json COMPILED_DIR [--filter RE] [--levels a,b]\n');
    process.exit(2);
  }
  for (let i = 2; i < argv.length; ++i) {
    if (argv[i] === '--filter') {
      o.filter = new RegExp(argv[++i]);
    } else if (argv[i] === '--levels') {
      o.levels = argv[++i].split(',');
    } else {
      process.stderr.write(`classic_check.js: unknown option ${argv[i]}\n`);
      process.exit(2);
    }
  }
  return o;
}

// The ai.onnx opset a model imports, from the file's opset_import (ModelProto field 8:
// OperatorSetIdProto {1: domain, 2: version}) by a flat protobuf walk.
function opset_of(file) {
  const reader = new Reader(fs.readFileSync(file));
  let opset = 0;
  while (!reader.done()) {
    const key = Number(reader.varint());
    if (key !== ((8 << 3) | 2)) {
      reader.skip(key & 7);
      continue;
    }
    const entry = new Reader(reader.take(Number(reader.varint())));
    let domain = '';
    let version = 0;
    while (!entry.done()) {
      const k = Number(entry.varint());
      if (k === ((1 << 3) | 2)) {
        domain = Buffer.from(entry.take(Number(entry.varint()))).toString();
      } else if (k === ((2 << 3) | 0)) {
        version = Number(entry.varint());
      } else {
        entry.skip(k & 7);
      }
    }
    if (domain === '' || domain === 'ai.onnx') {
      opset = version;
    }
  }
  return opset;
}

async function run(file, level, feeds) {
  // Severity 3 (errors only): IR 3 models draw a warning per initializer listed as an input.
  const session = await ort.InferenceSession.create(file, { graphOptimizationLevel: level,
                                                            logSeverityLevel: 3 });
  const results = await session.run(feeds);
  // Copied out: a result's data may live in memory ORT reuses for the next session's run.
  const copies = {};
  for (const [name, tensor] of Object.entries(results)) {
    copies[name] = new ort.Tensor(tensor.type, tensor.data.slice(), tensor.dims);
  }
  await session.release();
  return copies;
}

function all_true(tensor) {
  return Array.from(tensor.data).every((v) => Number(v) === 1);
}

// Problems of `got` against `want` under `thresholds`; masks as described above.
function judge(c, want, want_opset, got, got_opset, thresholds) {
  const problems = [];
  for (const name of Object.keys(want)) {
    if (!(name in got)) {
      problems.push(`${name}: missing`);
      continue;
    }
    if (c.masks.includes(name) && want_opset < 12 && got_opset >= 12) {
      if (!all_true(got[name])) {
        problems.push(`${name}: an inference Dropout mask that is not all true`);
      }
      continue;
    }
    const m = compare(want[name], got[name]);
    for (const v of violations(m, thresholds)) {
      problems.push(`${name}: ${v} (max rel ${m.max_rel.toExponential(2)}, cosine ${m.cosine.toFixed(6)})`);
    }
  }
  return problems;
}

// fast1's bound at a level, per output, from fast's emulation cosines there (see above).
function fast1_bound(fast_cosine) {
  if (fast_cosine === undefined || !Number.isFinite(fast_cosine)) { return 0.99; }
  return Math.max(0.9, 1 - Math.max(2 * 64 * (1 - fast_cosine), 1e-4));
}

// Problems of an emulation against the high graph: fast at cosine 0.99, fast1 at the bound
// argued from fast's cosine of the same output (fast_cosines[name]); records each cosine.
function judge_emulation(c, mode, high, opset, emulation, fast_cosines, cosines) {
  const problems = [];
  for (const name of Object.keys(high)) {
    const min_cosine = mode === 'fast1' ? fast1_bound(fast_cosines[name]) : 0.99;
    const one = { [name]: high[name] };
    problems.push(...judge(c, one, opset.high, emulation, opset.emulation, { min_cosine }));
    if (!c.masks.includes(name) && name in emulation) {
      cosines[name] = compare(high[name], emulation[name]).cosine;
    }
  }
  return problems;
}

async function check_mode(c, dir, mode, levels, feeds, fast_cosines = {}) {
  const problems = [];
  const file = (role) => path.join(dir, c.name, mode, `${role}.onnx`);
  const opset = { original: opset_of(c.file) };
  for (const role of ['high', 'low', 'emulation']) {
    if (!fs.existsSync(file(role))) {
      return [`${role}.onnx missing`];
    }
    opset[role] = opset_of(file(role));
  }
  let worst = 1;
  const cosines = {};
  for (const level of levels) {
    const original = await run(c.file, level, feeds);
    const high = await run(file('high'), level, feeds);
    problems.push(...judge(c, original, opset.original, high, opset.high,
                           { max_rel: 1e-5 }).map((p) => `high at ${level}: ${p}`));
    const emulation = await run(file('emulation'), level, feeds);
    cosines[level] = {};
    const e = judge_emulation(c, mode, high, opset, emulation, fast_cosines[level] || {}, cosines[level]);
    problems.push(...e.map((p) => `emulation at ${level}: ${p}`));
    worst = Math.min(worst, ...Object.values(cosines[level]));
    try {
      const low = await run(file('low'), level, feeds);
      if (mode === 'fast1') {
        problems.push(`low at ${level}: ran, but a bfloat16 Conv has no ORT CPU kernel`);
      }
      // Runs, with the high graph's names, shapes and types, no new NaN/Inf: no accuracy
      // bound (ORT computes float16 Conv in float32; the emulation is judged above).
      problems.push(...judge(c, high, opset.high, low, opset.low, {})
        .map((p) => `low at ${level}: ${p}`));
    } catch (e) {
      const text = String(e.message || e).split('\n')[0];
      if (mode !== 'fast1' || !text.includes('Could not find an implementation')) {
        problems.push(`low at ${level}: ${text}`);
      }
    }
  }
  return { problems, worst, cosines };
}

async function main() {
  const o = parse_args(process.argv.slice(2));
  const cases = JSON.parse(fs.readFileSync(o.cases, 'utf8'));
  let failed = 0;
  let passed = 0;
  for (const c of cases) {
    if (o.filter && !o.filter.test(c.name)) {
      continue;
    }
    const feeds = { [c.input]: read_tensor_proto(fs.readFileSync(c.input_file)).tensor };
    let fast_cosines = {};
    for (const mode of ['fast', 'fast1']) { // fast first: fast1's bound comes from its drift
      let result;
      try {
        result = await check_mode(c, o.compiled, mode, o.levels, feeds, fast_cosines);
        if (mode === 'fast' && result.cosines) { fast_cosines = result.cosines; }
      } catch (e) {
        result = { problems: [String(e.message || e).split('\n')[0]], worst: NaN };
      }
      if (Array.isArray(result)) {
        result = { problems: result, worst: NaN };
      }
      if (result.problems.length === 0) {
        ++passed;
        console.log(`ok   ${c.name} ${mode}: high = original, emulation cosine >= ${result.worst.toFixed(6)}`);
      } else {
        ++failed;
        console.log(`FAIL ${c.name} ${mode}: ${result.problems.slice(0, 4).join('; ')}`);
      }
    }
  }
  console.log(`classic_check: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 && passed > 0 ? 0 : 1);
}

main().catch((e) => {
  console.log(`ERROR ${String(e.message || e).split('\n')[0]}`);
  process.exit(2);
});
