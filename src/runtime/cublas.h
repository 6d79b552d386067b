// cuBLAS, opened at run time like the driver (cuda_driver.h): a CUDA module whose plan has GEMM
// kernels (codegen/cublas_gemm.h) needs libcublas from the CUDA toolkit; others run without it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "codegen/cublas_gemm.h"
#include "runtime/cuda_driver.h"

namespace orch::runtime {

/// One cuBLAS handle, bound to a stream of the current CUDA context.
class Cublas {
 public:
  /// Loads libcublas (once per process) and creates a handle whose calls go on `stream`.
  /// Throws Error naming what is missing: the library, an entry point, or a handle cuBLAS
  /// would not create (no GPU).
  explicit Cublas(void* stream);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  /// Enqueues cublasSgemmStridedBatched with `args` (alpha 1, beta 0) on the stream; `first` and
  /// `second` are cuBLAS's A and B. Throws Error naming `kernel` with cuBLAS's status on
  /// failure.
  void sgemm(const codegen::CublasGemmArgs& args, CuDevicePtr first, CuDevicePtr second,
             CuDevicePtr c, std::string_view kernel) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace orch::runtime
