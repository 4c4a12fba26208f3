// SPDX-License-Identifier: MIT
// ONNX Runtime (onnxruntime-node) on zoo models, for scripts/bench-models
// and the zoo check:
//   node ort.js NODE_MODULES run MODEL OUTDIR NAME=FILE.bin:TYPE:D,D,... ...
//     one inference on the inputs given as raw little-endian files; writes
//     OUTDIR/<i>.bin per output and OUTDIR/outputs.json (names, types, dims)
//   node ort.js NODE_MODULES bench MODEL THREADS SECONDS JSON NAME:TYPE:D,D,...:LOW:HIGH ...
//     sync latency for SECONDS after 5 warm-up runs on random inputs;
//     writes {"count", "latency_ms": {"median", "min"}, "create_ms",
//     "first_run_ms"} to JSON (the session's creation, its first run)
//   node ort.js NODE_MODULES profile MODEL THREADS RUNS PREFIX NAME:TYPE:D,D,...:LOW:HIGH ...
//     5 warm-up runs and RUNS more with ONNX Runtime's profiler on: its
//     trace (one event a node a run, op_name and dur in us) goes to
//     PREFIX_<date>.json
'use strict';
const fs = require('fs');
const path = require('path');

const [nodeModules, mode, model, ...rest] = process.argv.slice(2);
const ort = require(path.resolve(nodeModules, 'onnxruntime-node'));
const arrays = { float32: Float32Array, int64: BigInt64Array };

function session(threads, profilePrefix) {
  const opts = { intraOpNumThreads: threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential' };
  if (profilePrefix)
    Object.assign(opts, { enableProfiling: true, profileFilePrefix: profilePrefix });
  return ort.InferenceSession.create(model, opts);
}

function dims(s) {
  return s.split(',').map(Number);
}

async function run(outDir, specs) {
  const feeds = {};
  for (const spec of specs) {
    const [name, rest] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
    const [file, type, shape] = rest.split(':');
    const buf = fs.readFileSync(file);
    const T = arrays[type];
    const data = new T(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
    feeds[name] = new ort.Tensor(type, data, dims(shape));
  }
  const s = await session(0);
  const out = await s.run(feeds);
  const meta = [];
  s.outputNames.forEach((name, i) => {
    const t = out[name];
    fs.writeFileSync(path.join(outDir, `${i}.bin`), Buffer.from(t.data.buffer,
      t.data.byteOffset, t.data.byteLength));
    meta.push({ name, type: t.type, dims: t.dims });
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(meta));
}

function random(type, shape, low, high) {
  const n = dims(shape).reduce((a, b) => a * b, 1);
  if (type === 'int64')
    return BigInt64Array.from({ length: n },
      () => BigInt(low + Math.floor(Math.random() * (high - low + 1))));
  return Float32Array.from({ length: n }, () => low + Math.random() * (high - low));
}

function randomFeeds(specs) {
  const feeds = {};
  for (const spec of specs) {
    const [name, type, shape, low, high] = spec.split(':');
    feeds[name] = new ort.Tensor(type, random(type, shape, +low, +high), dims(shape));
  }
  return feeds;
}

async function profile(threads, runs, prefix, specs) {
  const s = await session(+threads, prefix);
  const feeds = randomFeeds(specs);
  for (let i = 0; i < 5 + +runs; i++)
    await s.run(feeds);
  await s.release();
}

async function bench(threads, secs, outPath, specs) {
  const feeds = randomFeeds(specs);
  const c0 = process.hrtime.bigint();
  const s = await session(+threads);
  const c1 = process.hrtime.bigint();
  await s.run(feeds);
  const c2 = process.hrtime.bigint();
  for (let i = 1; i < 5; i++)
    await s.run(feeds);
  const lat = [];
  const end = Date.now() + 1000 * secs;
  while (Date.now() < end || lat.length < 3) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  lat.sort((a, b) => a - b);
  fs.writeFileSync(outPath, JSON.stringify({ count: lat.length,
    latency_ms: { median: lat[lat.length >> 1], min: lat[0] },
    create_ms: Number(c1 - c0) / 1e6, first_run_ms: Number(c2 - c1) / 1e6 }));
}

(mode === 'run' ? run(rest[0], rest.slice(1)) :
 mode === 'bench' ? bench(rest[0], rest[1], rest[2], rest.slice(3)) :
 mode === 'profile' ? profile(rest[0], rest[1], rest[2], rest.slice(3)) :
 Promise.reject(new Error(`unknown mode '${mode}'`)))
  .catch((e) => { console.error(`ort.js: ${e.message}`); process.exit(1); });
