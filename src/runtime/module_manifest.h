// manifest.json parsed and validated without touching any other file of the module (no weights
// mapping, no dlopen), so that a damaged manifest is rejected here and the parser can be tested
// and fuzzed on its own (fuzz/manifest_fuzz.cc). Used by the runtime, and by the driver to run
// a CUDA module's code on the host (driver/cuda_validate.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cublas_gemm.h"
#include "codegen/cudnn_conv.h"
#include "orch/module.h"
#include "runtime/module_format.h"

namespace orch::runtime {

/// A weight an external kernel binds: its graph's input `value` and its bytes in weights.bin.
struct WeightBinding {
  std::string value;
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// An external kernel (dnnl, reference), built at load from its graph file.
struct ExternalSpec {
  std::string graph;   // relative to the module directory
  std::string config;  // the backend's configuration ("" for its default)
  std::vector<WeightBinding> weights;
};

/// One launch of a CUDA module's kernel: a 1-D grid of 1-D blocks, or a cuBLAS call.
struct LaunchSpec {
  std::string function;  // in the module's cubin
  int64_t blocks = 0;
  int threads = 0;
  int64_t shared_bytes = 0;  // dynamic shared memory of a block
  /// A cuBLAS GEMM instead of a function (its kernel's only launch), checked against its
  /// kernel's input and output types.
  std::optional<codegen::GemmSpec> gemm;
  /// A cuDNN convolution instead (likewise its kernel's only launch).
  std::optional<codegen::ConvSpec> conv;
};

/// What the manifest says, every location checked to lie inside its region.
struct ModuleLayout {
  /// A CUDA module (format "orch-cuda-module"): its architecture ("sm_90"), its kernels'
  /// launches (one list per kernel, in order; none for a host kernel, which is external) and the
  /// scratch buffer every launch gets last.
  bool cuda = false;
  std::string target;
  std::vector<std::vector<LaunchSpec>> launches;
  int64_t scratch_bytes = 0;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<std::optional<Location>> output_copy_from;
  std::vector<KernelSpec> kernels;
  std::vector<std::vector<KernelValue>> kernel_inputs, kernel_outputs;
  std::vector<std::optional<ExternalSpec>> external;  // one per kernel; empty when internal
  int64_t arena_bytes = 0;
  int64_t weights_bytes = 0;
  std::string weights_file, library_file;  // relative to the module directory
};

/// Parses manifest.json's `text` (a CPU or a CUDA module) and checks it: format and version, types
/// (known dtypes, shapes whose bytes fit in int64), every location inside its region (arena,
/// weights, an input or output of the same type) and every external weight inside weights.bin.
/// Throws Error naming `path` and the field.
ModuleLayout parse_manifest(std::string_view text, const std::string& path);

}  // namespace orch::runtime
