#!/usr/bin/env node
'use strict';
// Checks npucc's shape inference against ONNX Runtime: runs each model a unit test wrote and
// compares the real shape of every output with the one npucc inferred.
//
//   mkdir -p /tmp/cases && NPUCC_ORT_SHAPE_CASES=/tmp/cases \
//     build/tests/npucc_unit_tests -ts='npucc::schemas::Inference'
//   node tests/tools/ort_shape_check.js /tmp/cases
//
// A case is NAME.onnx (graph outputs without shapes) and NAME.json ({"output": "[2,?,4]"},
// "?" an unknown dim). Inputs are seeded random values (tests/oracle/inputs.js); the cases
// written for ORT keep every value that decides a shape in an initializer.
// Exit status: 0 every known dim matches, 1 a mismatch or a model ORT cannot run, 2 usage.

const fs = require('fs');
const path = require('path');
const ort = require('../oracle/node_modules/onnxruntime-node');
const { random_feeds } = require('../oracle/inputs');

function compare(expected, actual) {
  if (expected === 'none') {
    return 'npucc inferred no shape';
  }
  const dims = expected.replace(/^\[|\]$/g, '').split(',').filter((d) => d !== '');
  if (dims.length !== actual.length) {
    return 'rank differs';
  }
  const unknown = dims.filter((d) => d === '?').length;
  for (let i = 0; i < dims.length; ++i) {
    if (dims[i] !== '?' && /^\d+$/.test(dims[i]) && Number(dims[i]) !== actual[i]) {
      return 'dims differ';
    }
  }
  return unknown ? `match (${unknown} dim(s) unknown to npucc)` : 'match';
}

async function check(dir, name) {
  const expected = JSON.parse(fs.readFileSync(path.join(dir, `${name}.json`), 'utf8'));
  const session = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`),
                                                    { graphOptimizationLevel: 'disabled' });
  const results = await session.run(random_feeds(session, {}, 1));
  let ok = true;
  for (const [output, npucc] of Object.entries(expected)) {
    const actual = Array.from(results[output].dims);
    const verdict = compare(npucc, actual);
    ok = ok && verdict.startsWith('match');
    console.log(`${name.padEnd(28)} ${output.padEnd(18)} npucc ${npucc.padEnd(14)} ` +
                `ort [${actual.join(',')}]`.padEnd(22) + ` ${verdict}`);
  }
  return ok;
}

async function main() {
  const dir = process.argv[2];
  if (!dir || !fs.existsSync(dir)) {
    process.stderr.write('usage: ort_shape_check.js DIR (cases written by the unit tests)\n');
    process.exit(2);
  }
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
  let failures = 0;
  for (const name of names.sort()) {
    try {
      failures += (await check(dir, name)) ? 0 : 1;
    } catch (error) {
      failures += 1;
      console.log(`${name.padEnd(28)} ORT failed: ${String(error.message).split('\n')[0]}`);
    }
  }
  console.log(`${names.length} cases, ${failures} failed (onnxruntime-node ${ort.env.versions?.common ?? ''})`);
  process.exit(failures ? 1 : 0);
}

main();
