#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (onnxruntime-node from .deps/ort).
//
//   node tools/ort/run_model.js MODEL.onnx DIR [MODEL2.onnx DIR2 ...] [--threads N] [--bench RUNS]
//                               [--profile PREFIX]
//
// For each MODEL DIR pair: reads DIR/input_K.npy for the model's K-th input and writes
// DIR/output_K.npy for its K-th output; a model ONNX Runtime cannot load or run gets
// DIR/error.txt with the reason instead (the other pairs still run). With --bench, also times
// RUNS runs after a warm-up and prints "MODEL: median_ms=... min_ms=... runs=..." (sequential
// execution, one inter-op thread, graphOptimizationLevel 'all', spinning off so that timings on
// a shared machine stay quiet). With --profile, ONNX Runtime's own profiler records every run and
// writes PREFIX_<date>.json (per-node kernel times; tools/ort/profile_summary.py totals them).
'use strict';
const fs = require('fs');
const path = require('path');

const ortPath = path.join(__dirname, '..', '..', '.deps', 'ort', 'node_modules', 'onnxruntime-node');
const ort = require(ortPath);

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i8': ['int64', BigInt64Array], '<i4': ['int32', Int32Array], '<i2': ['int16', Int16Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '<u2': ['uint16', Uint16Array],
  '<u4': ['uint32', Uint32Array], '<u8': ['uint64', BigUint64Array], '|b1': ['bool', Uint8Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const [type, Array_] = DTYPES[descr];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr}`);
  const offset = start + headerLen;
  const bytes = buf.subarray(offset);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  let data = new Array_(copy.buffer, 0, bytes.length / Array_.BYTES_PER_ELEMENT);
  if (type === 'bool') data = Uint8Array.from(data);
  return new ort.Tensor(type, data, dims);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, [t]]) => t === tensor.type);
  if (!entry) throw new Error(`output type ${tensor.type} has no .npy dtype`);
  const dims = tensor.dims;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

async function runOne(model, dir, threads, runs, profile) {
  const session = await ort.InferenceSession.create(model, {
    ...(profile ? { enableProfiling: true, profileFilePrefix: profile } : {}),
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    feeds[name] = readNpy(path.join(dir, `input_${k}.npy`));
  });
  const results = await session.run(feeds);
  session.outputNames.forEach((name, k) => writeNpy(path.join(dir, `output_${k}.npy`), results[name]));
  if (runs > 0) {
    for (let i = 0; i < Math.min(3, runs); ++i) await session.run(feeds);
    const times = [];
    for (let i = 0; i < runs; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    console.log(`${model}: median_ms=${times[Math.floor(runs / 2)].toFixed(3)} ` +
                `min_ms=${times[0].toFixed(3)} runs=${runs}`);
  }
  if (profile) session.endProfiling();
}

async function main() {
  const args = process.argv.slice(2);
  const positional = [];
  const options = {};
  for (let i = 0; i < args.length; ++i) {
    if (args[i].startsWith('--')) options[args[i]] = args[++i];
    else positional.push(args[i]);
  }
  if (positional.length === 0 || positional.length % 2 !== 0) {
    console.error('usage: run_model.js MODEL.onnx DIR [MODEL DIR ...] [--threads N] [--bench RUNS] ' +
                  '[--profile PREFIX]');
    process.exit(2);
  }
  for (let i = 0; i < positional.length; i += 2) {
    const [model, dir] = [positional[i], positional[i + 1]];
    try {
      await runOne(model, dir, Number(options['--threads'] || 1), Number(options['--bench'] || 0),
                   options['--profile']);
    } catch (e) {
      fs.writeFileSync(path.join(dir, 'error.txt'), `${e.message}\n`);
    }
  }
}

main().catch((e) => {
  console.error(`run_model.js: ${e.message}`);
  process.exit(1);
});
