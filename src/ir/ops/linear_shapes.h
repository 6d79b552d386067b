// Shape helpers the float linear ops share with their integer and quantized variants.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace orch::ops {

/// numpy matmul's result shape (1-D operands drop their dim, batch dims broadcast).
Shape matmul_shape(const Shape& a, const Shape& b);

/// Conv's result shape for X [N, C, D...] and W [M, C/group, K...]; checks channels, group and
/// kernel_shape.
Shape conv_shape(const Attributes& attrs, const Shape& x, const Shape& w);

/// Registers MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv.
void add_linear_quant_ops(std::vector<OpSchema>& table);

}  // namespace orch::ops
