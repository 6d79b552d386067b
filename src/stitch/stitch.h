// Executable generation: an orchestration plan becomes one compiled module directory (layout and
// manifest in stitch/manifest.h) that orch::Module::load runs.
//
// Each plan kernel is extracted from the primitive graph with the values later kernels read (or
// the graph returns) as its outputs and generated with its chosen backend: Halide kernels become
// AOT objects linked with one Halide runtime and a generated C++ driver into kernels.so; dnnl and
// reference kernels are "external": their kernel graphs are written out and the runtime builds
// them at load, the driver calling back into it. Intermediates live in one arena planned by
// lifetime (memory_plan.h); constants the kernels read at run time go to weights.bin.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "codegen/choice.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/graph.h"
#include "orchestrate/orchestrate.h"
#include "schedule/gpu/gpu_machine.h"

namespace orch::stitch {

struct StitchOptions {
  /// Constants of this many bytes or more are read from weights.bin instead of being compiled
  /// into a Halide kernel.
  int64_t min_weight_bytes = 1024;
  /// The C++ compiler that builds the driver and links kernels.so (looked up in PATH).
  std::string cxx = "c++";
  /// The latency of one kernel per operator, for the report; negative when unknown.
  double operator_kernels_us = -1;
  /// CPU modules: store intermediates channel-blocked between the kernels that allow it
  /// (blocked_layout.h), instead of every kernel reading and writing the model's layout.
  bool blocked_between_kernels = true;
  /// With blocked_between_kernels: oneDNN kernels tuned in the model's layout move to the blocked
  /// one where the module can then store their tensors blocked (blocked_layout.h).
  bool relayout_convolutions = false;
  /// CUDA modules: the vendor libraries lone MatMuls and convolutions may call.
  codegen::CudaLibraries cuda_libraries;
};

/// What stitch() built.
struct StitchResult {
  int kernels = 0;
  int halide_kernels = 0;
  int dnnl_kernels = 0;
  int reference_kernels = 0;
  int cuda_kernels = 0;            // stitch_cuda: kernels generated as CUDA C
  int cublas_kernels = 0;          // stitch_cuda: kernels that are one cuBLAS GEMM call
  int cudnn_kernels = 0;           // stitch_cuda: kernels that are one cuDNN convolution
  int cuda_launches = 0;           // launches on the stream: __global__ functions (one per
                                   // materialized value) and cuBLAS calls
  int64_t arena_bytes = 0;         // peak of the arena plan
  int64_t intermediate_bytes = 0;  // sum of all intermediates (no reuse)
  int64_t weights_bytes = 0;
  int blocked_tensors = 0;         // intermediates stored channel-blocked
  double seconds = 0;              // wall time, code generation and link included
  std::vector<std::string> notes;  // kernels that fell back to another backend, and why
};

/// Writes the module for `plan` (over `problem`, whose primitives are the nodes of `graph`) into
/// `out_dir` (created; files in it are overwritten). `choices` has one entry per candidate of
/// `problem`. Throws Error naming the kernel on a generation failure, or the compiler command
/// and its output when building kernels.so fails.
StitchResult stitch(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                    std::span<const codegen::KernelChoice> choices, const std::string& out_dir,
                    const StitchOptions& options = {});

/// The CUDA variant: every plan kernel generated as CUDA C (codegen/cuda/cuda_source.h) with
/// the launch geometry of its best GPU tile config on `gpu` (schedule::gpu_configs), all kernels
/// in one translation unit compiled by NVRTC for the GPU's architecture. Writes kernels.cu,
/// kernels.cubin, weights.bin, manifest.json (format "orch-cuda-module"), report.md and the plan
/// drawing; a single op the generator rejects becomes a host kernel (the reference backend, its
/// graph in kernels/). Nothing runs: the costs in the report are the plan's (analytic) ones.
/// Throws Error naming a fused kernel that cannot be generated, or with NVRTC's log.
StitchResult stitch_cuda(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                         std::span<const codegen::KernelChoice> choices, const std::string& out_dir,
                         const schedule::GpuMachine& gpu, const StitchOptions& options = {});

}  // namespace orch::stitch
