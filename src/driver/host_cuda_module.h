// A CUDA module (stitch_cuda) run on the host: kernels.cu compiled with the host C++ compiler
// (codegen/cuda/cuda_emulate.h) and every kernel's launches run there in plan order, cuBLAS
// and cuDNN calls computed by their documented definitions from the arguments the runtime
// passes them, host kernels through the reference backend. What checks the CUDA emitter and the
// module layout without a GPU: validation (validate_cuda_module_on_host) and the CUDA measurement's
// host mode (cuda_measure.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "orch/module.h"

namespace orch::driver {

class HostCudaModule {
 public:
  /// Loads the module in `dir`. Throws Error naming the file when it is not a CUDA module, its
  /// source lacks the prelude, its weights have the wrong size, or the source does not compile.
  explicit HostCudaModule(const std::string& dir);
  ~HostCudaModule();
  HostCudaModule(HostCudaModule&&) noexcept;
  HostCudaModule& operator=(HostCudaModule&&) noexcept;

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  const std::vector<KernelSpec>& kernels() const;

  /// Runs every kernel on `inputs` (checked against the module's input types) and returns the
  /// outputs; `after_kernel`, when set, gets the values kernel k wrote after it ran.
  std::vector<Tensor> run(std::span<const Tensor> inputs, const KernelHook& after_kernel = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch::driver
