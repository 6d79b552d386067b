// The linear family's kernels in three files (linear.cc: MatMul, Gemm, Einsum; linear_conv.cc:
// Conv, ConvTranspose; linear_quant.cc: the integer and quantized variants) and the cores the
// quantized kernels share with the float ones.
#pragma once

#include <vector>

#include "interp/kernel.h"

namespace orch::interp {

/// numpy matmul of a [..., M, K] (or [K]) by b [..., K, N] (or [K]) into shape `y`.
std::vector<double> matmul_doubles(const std::vector<double>& a, const Shape& a_shape,
                                   const std::vector<double>& b, const Shape& b_shape,
                                   const Shape& y);

/// Conv of x by w (Conv's attributes, zero padding) into shape `y`; `bias` has one value per
/// output channel or is empty.
std::vector<double> conv_doubles(const std::vector<double>& x, const Shape& x_shape,
                                 const std::vector<double>& w, const Shape& w_shape,
                                 const std::vector<double>& bias, const Attributes& attrs,
                                 const Shape& y);

void add_linear_conv_kernels(KernelTable& table);
void add_linear_quant_kernels(KernelTable& table);

}  // namespace orch::interp
