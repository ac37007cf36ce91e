'use strict';
// How far ONNX Runtime's default optimisation level moves a graph's own outputs from its
// 'basic' level (npucc's check runs at basic): the same graph, the same inputs, both levels,
// per output and set the cosine and max abs difference. Separates the float32 reference's
// own drift between levels from a low graph's (tests/bench/accuracy_levels.py).
//
//   node tests/bench/level_drift.js GRAPH SAMPLES
//
// SAMPLES: a folder of test_data_set_*/input_*.pb. One line per set and output.
const fs = require('fs');
const path = require('path');
const ort = require('../oracle/node_modules/onnxruntime-node');
const { read_tensor_proto } = require('../oracle/tensor_proto');

async function run(file, feeds, level) {
  const options = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' };
  if (level !== 'default') { options.graphOptimizationLevel = level; }
  const session = await ort.InferenceSession.create(file, options);
  return Promise.all(feeds.map((f) => session.run(f)));
}

function compare(a, b) {
  let dot = 0, na = 0, nb = 0, worst = 0;
  for (let i = 0; i < a.length; ++i) {
    dot += a[i] * b[i]; na += a[i] * a[i]; nb += b[i] * b[i];
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
  }
  return { cosine: a.length < 8 || na === 0 || nb === 0 ? null : dot / Math.sqrt(na * nb), worst };
}

async function main() {
  const [graph, samples] = process.argv.slice(2);
  const sets = fs.readdirSync(samples).filter((n) => n.startsWith('test_data_set_'))
    .sort((a, b) => Number(a.split('_').pop()) - Number(b.split('_').pop()));
  const session = await ort.InferenceSession.create(graph);
  const feeds = sets.map((set) => {
    const files = fs.readdirSync(path.join(samples, set)).filter((n) => /^input_\d+\.pb$/.test(n)).sort();
    const feed = {};
    files.forEach((n, i) => {
      const { name, tensor } = read_tensor_proto(fs.readFileSync(path.join(samples, set, n)));
      feed[name || session.inputNames[i]] = tensor;
    });
    return feed;
  });
  const basic = await run(graph, feeds, 'basic');
  const fallback = await run(graph, feeds, 'default');
  sets.forEach((set, s) => {
    for (const name of Object.keys(basic[s])) {
      const r = compare(basic[s][name].data, fallback[s][name].data);
      console.log(`${set} ${name}: cosine ${r.cosine === null ? 'undefined' : r.cosine.toFixed(9)}, max abs ${r.worst.toPrecision(3)}`);
    }
  });
}

main().catch((e) => { console.error(`level_drift: ${String(e.message || e).split('\n')[0]}`); process.exit(2); });
