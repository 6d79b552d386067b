// The compiled module directory that `orch optimize` writes and orch::Module::load reads.
//
// Layout of a module directory:
//
//   manifest.json        what the runtime needs (below), plus what reports and `orch explain` show
//   weights.bin          every constant a kernel reads at run time, each entry 64-byte aligned;
//                        memory-mapped read-only at load
//   kernels.so           the Halide kernels (AOT objects, one shared Halide runtime) and the
//                        generated driver that runs every kernel in plan order; its C entry
//                        points are declared in src/runtime/module_abi.h
//   kernels/k<I>.orch    the kernel graph (IR text format) of each external kernel I (backend
//                        "dnnl" or "reference"), built by the runtime at load; constants listed
//                        in the kernel's "weights" are graph inputs here, bound from weights.bin
//   report.md            per-kernel table, totals, peak arena versus the sum of intermediates
//   plan.dot, plan.svg   the plan drawn by `orch explain` (SVG when Graphviz is installed)
//   build/               the generated driver source, the Halide objects and headers, the link
//                        command: kept for debugging, never read at load
//
// A value's bytes live in one of four regions (a "location"):
//   "arena"   the per-run intermediate arena (offset in bytes, 64-byte aligned)
//   "weights" weights.bin (offset in bytes)
//   "input"   the caller's input tensor `index`
//   "output"  the caller's output tensor `index`
//
// manifest.json (format "orch-module", version 1). Dtypes are dtype_name() spellings ("f32"),
// shapes are arrays of dims:
//   {
//     "format": "orch-module", "version": 1,
//     "model": "<graph name>",
//     "library": "kernels.so", "weights": "weights.bin",
//     "weights_bytes": N,           // exact size of weights.bin; a shorter file is corrupt
//     "arena_bytes": N,             // the planned arena (peak of simultaneously live buffers)
//     "intermediate_bytes": N,      // the sum of all arena buffers (no reuse), for the report
//     "objective_us": X, "lower_bound_us": X, "solve_status": "optimal" | "time limit",
//     "operator_kernels_us": X,     // one kernel per operator, when known (absent otherwise)
//     "primitive_kernels_us": X,    // one kernel per primitive (the plan's costs), when known
//     "inputs":  [{"name", "dtype", "shape"}],
//     "outputs": [{"name", "dtype", "shape", "copy_from": LOCATION?}],
//         // copy_from: an output no kernel writes (a graph input or constant returned as is, or
//         // a value returned twice) is copied from that location after the run
//     "kernels": [{
//         "name": "k0", "backend": "halide" | "dnnl" | "reference", "external": bool,
//         "config": "<backend config text>", "cost_us": X, "optimized": bool,
//             // config: a Halide schedule, or oneDNN's "layout=plain", "layout=blocked" or
//             "weights=transposed"; "" is the default; ";stored_blocked=i0,o0" after
//             it names the kernel inputs / output stored channel-blocked
//         "primitives": [{"node": "<node name or #id>", "op": "prim.MatMul", "id": N,
//                         "inputs": [ids of this kernel's primitives it reads]}],
//         "graph": "kernels/k0.orch",   // external kernels only
//         "inputs":  [{"value", "dtype", "shape", "region", "index"?, "offset"?, "bytes"}],
//         "outputs": [{"value", "dtype", "shape", "region", "index"?, "offset"?, "bytes"}],
//         // "channel_block": B on a value stored channel-blocked (blocked_layout.h): dim 1 in
//         // blocks of B innermost, as oneDNN's nChw16c for B = 16
//             // inputs: in the kernel graph's input order (for external kernels, after the
//             // weights below are bound); outputs: in the kernel graph's output order
//         "weights": [{"value", "offset", "bytes"}]   // external kernels: constants bound at load
//     }],
//     "buffers": [{"value", "region", "offset", "bytes", "producer", "last_use"}]  // arena plan
//   }
// A LOCATION is {"region", "index"?, "offset"?, "bytes"}.
//
// A CUDA module (stitch_cuda, format "orch-cuda-module", same version) has kernels.cubin (every
// kernel, one NVRTC compile) and kernels.cu (its source) instead of kernels.so, kernels/ and
// build/, and these fields besides the above ("library" names the cubin):
//     "target": "sm_90", "gpu": "<the GPU description's name>",
//     "scratch_bytes": N,           // one device buffer every launch gets as its last argument
//     "kernels": [{ ..., "backend": "cuda" | "cublas" | "cudnn", "external": false,
//         "config": "block=... thread=... reduce_step=... shared_bytes=... est_us=..." | "default"
//         | "cublas"
//             | "cudnn",
//         "launches": [{"function", "blocks", "threads", "shared_bytes"}],  // in order, on
//                                                   // one stream; shared_bytes: dynamic
//         "scratch_bytes": N }]
// Each launch's arguments: the kernel's inputs, then its outputs (device pointers at their
// locations), then the scratch buffer. A "cublas" kernel has one launch instead,
// {"gemm": {"batch", "m", "n", "k", "trans_a", "trans_b", "a", "b"}} (codegen::GemmSpec):
// cublasSgemmStridedBatched on inputs a and b, writing its one output; a "cudnn" kernel
// {"conv": {"pads", "strides", "dilations", "group", "x", "w"}} (codegen::ConvSpec):
// cudnnConvolutionForward of inputs x and w, writing its one output. A host kernel (an op the
// CUDA generator lacks) has "backend": "reference", "external": true, "graph" and "weights" as
// a CPU module's external kernel (its graph file in kernels/), and no "launches": the runtime
// copies its inputs from the GPU, runs the reference backend and copies its outputs back.
#pragma once

#include "runtime/module_format.h"  // the file names, format and version (the runtime reads them)
