// Runs generated CUDA C on the host: the check of the CUDA emitter against the interpreter on
// machines without a GPU. The kernel source is compiled with the host C++ compiler after a
// prelude that defines the CUDA names it uses (__global__, threadIdx, blockIdx, the math
// helpers); each launch runs its blocks one after another, and a block's threads one after
// another, as fibers when the code has barriers (__syncthreads switches to the next thread).
// Reads of shared arrays are checked against their staged boxes (ORCH_IN), and every access to
// shared memory and to the buffers a launch writes against the order a GPU guarantees
// (cuda_race_check.cc): a thread touching a byte that another one wrote (or, for a write, read)
// with no barrier between, or in the same launch, races on a GPU, and reading a shared byte no
// thread of the block wrote reads garbage there, though the serial run here would get a value.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_source.h"
#include "ir/tensor.h"

namespace orch::codegen {

/// A buffer a launch may write (an output or the scratch), whose bytes the race check watches.
struct WrittenBuffer {
  int arg = 0;        // its index among the launch's arguments
  int64_t bytes = 0;  // its size
  std::string name;   // in messages: out0, scratch
};

/// The buffers a launch of a kernel with `inputs` inputs, outputs of `output_bytes` and
/// `scratch_bytes` of scratch may write, in the parameter order of cuda_source.h.
std::vector<WrittenBuffer> written_buffers(size_t inputs, std::span<const int64_t> output_bytes,
                                           int64_t scratch_bytes);

/// Fills memory a kernel is to write with 0xFF bytes (NaN floats, -1 integers), as GPU memory
/// holds garbage: an element the kernel leaves unwritten then differs from the interpreter's
/// instead of passing as the zero a fresh host buffer holds.
void poison(std::span<std::byte> bytes);

/// A __global__ function of generated code and its number of parameters.
struct HostFunction {
  std::string name;
  int parameters = 0;
};

/// A translation unit of generated kernels (the `code` of one or more CudaKernelSources,
/// concatenated, without cuda_prelude()) compiled for the host and loaded; `functions` are the
/// ones launch() may run.
class HostKernels {
 public:
  /// Throws Error with the compiler's output when `code` does not compile.
  HostKernels(const std::string& code, std::span<const HostFunction> functions,
              const std::string& cxx = "c++");
  ~HostKernels();
  HostKernels(const HostKernels&) = delete;
  HostKernels& operator=(const HostKernels&) = delete;

  /// Runs one launch: its blocks and threads one after another, with `args` in the parameter
  /// order of cuda_source.h (inputs, outputs, scratch), the race check watching the `written`
  /// ones. Throws Error for an unknown function, a wrong number of arguments, reads outside a
  /// staged box or a race.
  void launch(const CudaLaunch& launch, std::span<void* const> args,
              std::span<const WrittenBuffer> written = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Compiles `source` for the host (`cxx`, looked up in PATH) and runs its launches on `inputs`
/// (one per kernel input); returns one tensor per kernel output. Throws Error with the
/// compiler's output when the source does not compile.
std::vector<Tensor> cuda_emulate(const Graph& kernel, const CudaKernelSource& source,
                                 std::span<const Tensor> inputs, const std::string& cxx = "c++");

/// One kernel for cuda_emulate_all.
struct CudaEmulation {
  const Graph* kernel = nullptr;
  const CudaKernelSource* source = nullptr;  // its function names differ from the others'
  std::vector<Tensor> inputs;
};

/// cuda_emulate for several kernels with one host compile (a compile costs ~0.5 s); one output
/// list per run, in order.
std::vector<std::vector<Tensor>> cuda_emulate_all(std::span<const CudaEmulation> runs,
                                                  const std::string& cxx = "c++");

}  // namespace orch::codegen
