#!/usr/bin/env node
// Runs npucc's emulation graphs in ONNX Runtime for the second oracle (issue 45 item 3).
//
//   node tests/oracle2/run_emulation.js JOBS.json
//
// JOBS.json: [{graph, inputs: [TensorProto .pb files], out}]. Each graph runs once on its
// inputs with the session settings npucc's accuracy check uses (one thread, sequential,
// basic optimisations, cast-chain elimination off: npucc-compile(1), ACCURACY), so no
// fusion removes the emulation's rounding Casts. `out` gets {outputs: [{name, type, dims,
// data}]}, data the raw little-endian bytes in base64 (NaN and infinities survive, which
// JSON numbers cannot hold). A graph that fails to load or run writes {error} and the
// process exits 1 after the others ran.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, '..', 'oracle', 'node_modules', 'onnxruntime-node'));
const { read_tensor_proto } = require(path.join(__dirname, '..', 'oracle', 'tensor_proto.js'));

const k_options = {
  intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
  graphOptimizationLevel: 'basic',
  extra: { optimization: { enable_cast_chain_elimination: '0' } },
};

function encode(name, tensor) {
  const data = tensor.data;
  let bytes;
  if (tensor.type === 'bool') {
    bytes = Buffer.from(Uint8Array.from(data, (v) => (v ? 1 : 0)));
  } else {
    bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }
  return { name, type: tensor.type, dims: tensor.dims, data: bytes.toString('base64') };
}

async function run_job(job) {
  const session = await ort.InferenceSession.create(job.graph, k_options);
  const feeds = {};
  job.inputs.forEach((file, i) => {
    const { name, tensor } = read_tensor_proto(fs.readFileSync(file));
    feeds[name || session.inputNames[i]] = tensor;
  });
  const results = await session.run(feeds);
  return { outputs: session.outputNames.map((name) => encode(name, results[name])) };
}

async function main() {
  const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let failed = 0;
  for (const job of jobs) {
    let result;
    try {
      result = await run_job(job);
    } catch (e) {
      result = { error: String(e.message || e).split('\n')[0] };
      failed += 1;
      console.error(`run_emulation: ${job.graph}: ${result.error}`);
    }
    fs.writeFileSync(job.out, JSON.stringify(result));
  }
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`run_emulation: ${e.stack || e}`);
  process.exit(2);
});
