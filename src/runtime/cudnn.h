// cuDNN, opened at run time like cuBLAS (cublas.h): a CUDA module whose plan has convolution
// kernels (codegen/cudnn_conv.h) needs libcudnn 9; others run without it. The legacy
// descriptor API (cudnnConvolutionForward), which cuDNN 9 still ships.
#pragma once

#include <memory>
#include <string_view>

#include "codegen/cudnn_conv.h"
#include "runtime/cuda_driver.h"

namespace orch::runtime {

/// One cuDNN handle, bound to a stream of the current CUDA context.
class Cudnn {
 public:
  /// Loads libcudnn (once per process) and creates a handle whose calls go on `stream`. Throws
  /// Error naming what is missing: the library, an entry point, or a handle (no GPU).
  explicit Cudnn(void* stream);
  ~Cudnn();
  Cudnn(const Cudnn&) = delete;
  Cudnn& operator=(const Cudnn&) = delete;

  /// A convolution described to cuDNN once: its descriptors (fp32 arithmetic, no TF32: the
  /// module must match the interpreter) and the algorithm cuDNN's heuristics rank first among
  /// those that need at most 256 MiB of workspace; with a bias, the bias and activation
  /// descriptors of the fused call too, and for the identity activation the one algorithm
  /// cuDNN fuses it with (implicit precomputed GEMM).
  class Conv {
   public:
    ~Conv();
    Conv(const Conv&) = delete;
    Conv& operator=(const Conv&) = delete;
    size_t workspace_bytes() const { return workspace_bytes_; }

   private:
    friend class Cudnn;
    Conv() = default;
    void *x_ = nullptr, *w_ = nullptr, *conv_ = nullptr, *y_ = nullptr;
    void *bias_ = nullptr, *activation_ = nullptr;  // the fused call's, when it has a bias
    int algorithm_ = 0;
    size_t workspace_bytes_ = 0;
  };

  /// Throws Error naming `kernel` when cuDNN refuses the description.
  std::unique_ptr<Conv> prepare(const codegen::CudnnConvArgs& args, std::string_view kernel) const;

  /// Enqueues y = conv(x, w) on the stream, with `workspace` of at least conv.workspace_bytes();
  /// for a convolution prepared with a bias, y = activation(conv(x, w) + bias) in one call.
  void forward(const Conv& conv, CuDevicePtr x, CuDevicePtr w, CuDevicePtr bias, CuDevicePtr y,
               CuDevicePtr workspace, std::string_view kernel) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace orch::runtime
