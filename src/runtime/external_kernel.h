// A kernel the runtime runs itself (dnnl, reference: "external"), built at load from its graph
// file: a CPU module's oneDNN and reference kernels, and a CUDA module's host kernels (the ops
// the CUDA generator lacks, run by the reference backend between copies from and to the GPU).
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "codegen/kernel.h"
#include "orch/module.h"
#include "runtime/module_manifest.h"

namespace orch::runtime {

/// An external kernel built at load. Kernel::run is not promised to be reentrant, so concurrent
/// contexts take turns on each external kernel.
struct ExternalKernel {
  /// Mutable: Module::set_threads rebuilds oneDNN kernels (under `mutex`), because oneDNN fixes
  /// a kernel's thread count when it builds it.
  mutable std::unique_ptr<codegen::Kernel> kernel;
  std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  Graph graph;  // its graph, weights bound (views of weights.bin)
  const codegen::Backend* backend = nullptr;
  std::string config;  // the backend's configuration
};

/// weights.bin at `path`, mapped read-only; its size must be `expected` (null when empty).
/// Throws Error naming the file when it cannot be mapped or has another size.
std::shared_ptr<const void> map_weights(const std::filesystem::path& path, int64_t expected);

/// Builds kernel `spec`'s external kernel from its graph file in `dir`, binding its weights to
/// views of `weights` (weights.bin's bytes, which the graph keeps alive). Throws Error naming the
/// graph file.
void build_external(const KernelSpec& spec, const ExternalSpec& ext,
                    const std::filesystem::path& dir, const std::shared_ptr<const void>& weights,
                    ExternalKernel& out);

/// Compiles `ext`'s graph with its backend and configuration.
std::unique_ptr<codegen::Kernel> compile_external(const ExternalKernel& ext);

/// Runs `ext` on `inputs`, its results in `outputs` (tensors over the caller's buffers, which
/// they still are on return): a kernel that returned results in buffers of its own (the
/// reference backend does) has them copied there.
void run_external(const ExternalKernel& ext, std::span<const Tensor> inputs,
                  std::span<Tensor> outputs);

}  // namespace orch::runtime
