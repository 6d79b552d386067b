// Private to src/runtime: a loaded module (manifest, weights mapping, kernels.so, external
// kernels) and a context.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "orch/module.h"
#include "runtime/external_kernel.h"
#include "runtime/module_abi.h"
#include "runtime/module_format.h"

namespace orch {

namespace runtime {

/// kernels.so's entry points.
struct Library {
  std::shared_ptr<void> handle;  // dlclose on release
  int (*run)(orch_module_frame*) = nullptr;
  void (*set_threads)(int) = nullptr;
  const char* (*last_error)() = nullptr;
};

}  // namespace runtime

struct Module::Impl {
  std::string dir;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::optional<runtime::Location>> output_copy_from;
  std::vector<KernelSpec> kernels;
  std::vector<std::vector<runtime::KernelValue>> kernel_inputs, kernel_outputs;
  std::vector<runtime::ExternalKernel> external;  // one per kernel; null kernel when internal
  int64_t arena_bytes = 0;
  int64_t weights_bytes = 0;
  std::shared_ptr<const void> weights;  // the mapping of weights.bin (null when empty)
  runtime::Library library;
  /// The OpenMP thread count the oneDNN kernels were built for.
  mutable std::atomic<int> dnnl_threads = 0;
};

struct Context::Impl {
  std::shared_ptr<const Module::Impl> module;
  std::unique_ptr<uint8_t, void (*)(void*)> arena{nullptr, &std::free};
  /// The last run's output buffers, handed out again once the caller has dropped its tensors.
  std::vector<std::shared_ptr<std::byte[]>> outputs;
};

namespace runtime {

/// OpenMP's thread count for the next parallel region of this thread (0 when OpenMP is not
/// loaded: oneDNN runs on it, found at run time so that the runtime need not link it).
int openmp_max_threads();

/// Reads the module directory into `impl` (every field); throws Error naming the file.
void load_module(const std::string& dir, Module::Impl& impl);

}  // namespace runtime
}  // namespace orch
