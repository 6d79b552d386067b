// The elementwise kernel family is split by purpose; add_elementwise_kernels registers all parts.
#pragma once

#include "interp/kernel.h"

namespace orch::interp {

/// Type-exact arithmetic, comparisons, logic, Min/Max/Sum/Mean, Clip, PRelu, Pow, Mod, BitShift.
void add_elementwise_arith_kernels(KernelTable& table);
/// Floating-point math and activations (Sqrt, Sigmoid, Elu, Gelu, ...), computed in double.
void add_elementwise_math_kernels(KernelTable& table);

}  // namespace orch::interp
