// SPDX-License-Identifier: GPL-2.0 OR MIT
// ONNX Runtime on vnpu-kbench's shapes:
//   node ort-bench.js MAKE_MODELS THREADS [NAME,NAME...]
// Prints "name threads best_milliseconds" for 1 thread and THREADS threads
// (1 thread once when THREADS is 1), for the models named (default: the
// four GEMM and convolution ones).
'use strict';
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const shapes = {
  gemm: { a: [1024, 1024] },
  conv3x3: { x: [1, 64, 56, 56] },
  dw3x3: { x: [1, 32, 112, 112] },
  conv1x1: { x: [1, 256, 28, 28] },
  gconv3x3: { x: [1, 128, 56, 56] },
  deconv2x2: { x: [1, 64, 160, 160] },
  gap: { x: [1, 256, 160, 160] },
  conv1x1_7: { x: [1, 2048, 7, 7] },
  conv3x3_7: { x: [1, 512, 7, 7] },
  bert_ffn1: { a: [128, 768] },
  bert_ffn2: { a: [128, 3072] },
  bert_qkv: { a: [128, 768] },
  resize_nn2x: { x: [1, 96, 40, 40] },
  resize_lin2x: { x: [1, 96, 40, 40] },
  softmax: { x: [1, 40, 6625] },
  softmax_c: { x: [1, 64, 40, 40] },
  mul_se: { x: [1, 96, 40, 40], s: [1, 96, 1, 1] },
  add_res: { x: [1, 96, 40, 40], z: [1, 96, 40, 40] },
  hardswish: { x: [1, 96, 40, 40] },
  transpose: { x: [1, 96, 80, 80] },
  concat: { x: [1, 48, 80, 80], z: [1, 48, 80, 80] },
  reduce_mean: { x: [1, 512, 768] },
  layernorm: { x: [1, 512, 768] },
};

async function best(session, feeds, repeat) {
  let min = Infinity;
  await session.run(feeds);
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (ms < min) min = ms;
  }
  return min;
}

async function main() {
  const [makeModels, threadsArg, namesArg] = process.argv.slice(2);
  const threads = parseInt(threadsArg || '1', 10);
  const names = (namesArg || 'gemm,conv3x3,dw3x3,conv1x1').split(',');
  for (const name of names) {
    if (!shapes[name]) throw new Error(`unknown model ${name}`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vnpu-kbench-'));
  const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  try {
    execFileSync(python, [makeModels, dir], { stdio: 'inherit' });
    for (const name of names) {
      const inputs = shapes[name];
      for (const t of threads > 1 ? [1, threads] : [1]) {
        const session = await ort.InferenceSession.create(
          path.join(dir, name + '.onnx'),
          { intraOpNumThreads: t, interOpNumThreads: 1,
            graphOptimizationLevel: 'all', executionMode: 'sequential' });
        const feeds = {};
        for (const [input, dims] of Object.entries(inputs)) {
          const n = dims.reduce((a, b) => a * b, 1);
          const data = new Float32Array(n);
          for (let i = 0; i < n; i++) data[i] = ((i * 7919) % 1000) / 500 - 1;
          feeds[input] = new ort.Tensor('float32', data, dims);
        }
        console.log(`${name} ${t} ${(await best(session, feeds, 10)).toFixed(3)}`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e.message); process.exit(1); });
