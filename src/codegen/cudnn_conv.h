// A CUDA kernel that is one f32 convolution runs as a cuDNN call (cudnnConvolutionForward)
// instead of generated code, far slower on a GPU when measured (driver/cuda_target.h); one
// that adds a bias per output channel after it, and then perhaps a ReLU, as cuDNN's fused
// cudnnConvolutionBiasActivationForward (one pass over the output instead of two kernels).
//
// As with the GEMM (cublas_gemm.h): shared by the stitcher that finds such kernels (conv_spec),
// the CUDA runtime that describes them to cuDNN (cudnn_arguments), and the host check of a CUDA
// module (cross_correlation: cuDNN's documented forward convolution computed from the same
// descriptor arguments, which checks their derivation against the interpreter without a GPU).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch::codegen {

/// Y = conv(X, W) of a prim.Conv with 2 or 3 spatial dims, dense row-major f32: X [N, C, ...],
/// W [M, C/group, ...], Y [N, M, ...]. `pads` are the leading pads (cuDNN pads both ends alike;
/// conv_spec accepts a convolution only when that gives its output shape, which then reads the
/// same windows). `x` and `w` are the kernel inputs holding X and W; Y is the kernel's only
/// output. With a `bias` (the kernel input holding M floats, one per output channel), Y =
/// conv(X, W) + bias, then max(Y, 0) when `relu`: cuDNN's fused call, which needs the bias.
struct ConvSpec {
  std::vector<int64_t> pads, strides, dilations;
  int64_t group = 1;
  int x = 0, w = 0;
  int bias = -1;  // -1: none
  bool relu = false;
  bool operator==(const ConvSpec&) const = default;
};

/// The cuDNN convolution `kernel` is, when it is one: an f32 prim.Conv, both operands kernel
/// inputs, 2 or 3 spatial dims, every extent within cuDNN's int, writing the kernel's only
/// output, or followed by an Elementwise add of a bias broadcast along the output channels (a
/// kernel input, perhaps reshaped; cuDNN reads it from memory, so the stitcher makes every
/// constant of such a kernel an input: library_call_of) and then perhaps an Elementwise relu,
/// the last writing the kernel's only output. nullopt otherwise.
std::optional<ConvSpec> conv_spec(const Graph& kernel);

/// "" when `spec` fits tensors of these types (its kernel's inputs and outputs), otherwise why
/// not: the runtime's check of a manifest before it hands cuDNN any pointer.
std::string conv_mismatch(const ConvSpec& spec, std::span<const TensorType> inputs,
                          std::span<const TensorType> outputs);

/// The descriptor arguments of cudnnSetTensorNdDescriptor (x, y: dims and strides),
/// cudnnSetFilterNdDescriptor (w: NCHW dims), cudnnSetConvolutionNdDescriptor (pads, filter
/// strides, dilations; cross-correlation) and cudnnSetConvolutionGroupCount.
/// With a bias: its descriptor's dims and strides ([1, M, 1, ...]) and the activation
/// (cudnnSetActivationDescriptor: ReLU, or identity).
struct CudnnConvArgs {
  std::vector<int> x_dims, x_strides, w_dims, y_dims, y_strides;
  std::vector<int> pads, strides, dilations;
  int group = 1;
  std::vector<int> bias_dims, bias_strides;  // empty: no bias
  bool relu = false;
};
CudnnConvArgs cudnn_arguments(const ConvSpec& spec, const Shape& x, const Shape& w, const Shape& y);

/// What cudnnConvolutionForward computes with `args` (alpha 1, beta 0; cuDNN's
/// CUDNN_CROSS_CORRELATION: y[n, k, o] = sum over c < C/group and window r of
/// x[n, g(k) C/group + c, o s + r d - p] w[k, c, r], zero outside x), on the host; with a bias,
/// what cudnnConvolutionBiasActivationForward computes (alpha1 1, alpha2 0): the activation of
/// that sum plus bias[k].
void cross_correlation(const CudnnConvArgs& args, const float* x, const float* w, float* y,
                       const float* bias = nullptr);

}  // namespace orch::codegen
