#!/usr/bin/env node
'use strict';
// Loads and runs each model in ONNX Runtime (CPU) at every graph optimisation level, on seeded
// inputs of each input's own type: a graph npucc emits must survive ORT's fusions, not only
// its plain kernels.
//
//   node run_levels.js [options] MODEL...
//     --shape NAME:D0,D1,...  --value NAME=V  --range NAME=LO,HI   inputs, as in compare.js
//     --levels L1,L2,...    levels to try (default disabled,basic,extended,all)
//     --allow-missing-kernel  "Could not find an implementation" counts as passed (bfloat16
//                           low graphs: ORT has no CPU kernel for most bfloat16 ops)
//
// One line per model and level: "ok", "allowed" or "ERROR <first line of the message>".
// Exit status: 0 every model runs at every level, 1 some does not, 2 bad usage.
// A crash inside ORT (a segfault) ends the process: the caller sees the signal and the lines
// printed so far name the level that was being tried ("try MODEL LEVEL" comes first).

const ort = require('onnxruntime-node');
const { random_feeds, cast_for } = require('./inputs');

const k_levels = ['disabled', 'basic', 'extended', 'all'];
const k_missing_kernel = 'Could not find an implementation';

function usage(message) {
  process.stderr.write(`run_levels.js: ${message}\n`);
  process.exit(2);
}

function parse_args(argv) {
  const o = { specs: {}, levels: k_levels, allow_missing_kernel: false, models: [] };
  const spec = (name) => (o.specs[name] ??= {});
  const named = (text, sep) => {
    const at = (text ?? '').lastIndexOf(sep);
    if (at <= 0) {
      usage(`expected NAME${sep}...: ${text}`);
    }
    return [text.slice(0, at), text.slice(at + 1)];
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--shape') {
      const [name, dims] = named(argv[++i], ':');
      spec(name).shape = dims.split(',').map(Number);
    } else if (a === '--value') {
      const [name, v] = named(argv[++i], '=');
      spec(name).value = Number(v);
    } else if (a === '--range') {
      const [name, r] = named(argv[++i], '=');
      spec(name).range = r.split(',').map(Number);
    } else if (a === '--levels') {
      o.levels = (argv[++i] ?? '').split(',');
      const unknown = o.levels.filter((l) => !k_levels.includes(l));
      if (unknown.length > 0) {
        usage(`unknown level ${unknown[0]} (levels: ${k_levels.join(', ')})`);
      }
    } else if (a === '--allow-missing-kernel') {
      o.allow_missing_kernel = true;
    } else if (a.startsWith('-')) {
      usage(`unknown option ${a}`);
    } else {
      o.models.push(a);
    }
  }
  if (o.models.length === 0) {
    usage('no model given');
  }
  return o;
}

async function run_once(model, level, specs) {
  const session = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
    logSeverityLevel: 3,
  });
  // Feeds of each input's declared type: a float16 input gets the float32 values rounded.
  const feeds = random_feeds(session, specs, 7);
  for (const meta of session.inputMetadata) {
    feeds[meta.name] = cast_for(feeds[meta.name], meta.type);
  }
  await session.run(feeds);
  await session.release();
}

async function main() {
  const o = parse_args(process.argv.slice(2));
  let failed = 0;
  for (const model of o.models) {
    for (const level of o.levels) {
      process.stdout.write(`try ${model} ${level}\n`);
      let verdict = 'ok';
      try {
        await run_once(model, level, o.specs);
      } catch (e) {
        const message = String(e.message || e).split('\n')[0];
        if (o.allow_missing_kernel && message.includes(k_missing_kernel)) {
          verdict = 'allowed';
        } else {
          verdict = `ERROR ${message}`;
          ++failed;
        }
      }
      process.stdout.write(`${verdict} ${model} ${level}\n`);
    }
  }
  process.exit(failed > 0 ? 1 : 0);
}

main().catch((e) => {
  process.stdout.write(`ERROR ${String(e.message || e).split('\n')[0]}\n`);
  process.exit(2);
});
