// Each file in src/interp/kernels/ registers the reference kernels of one op family.
#pragma once

#include "interp/kernel.h"

namespace orch::interp {

void add_elementwise_kernels(KernelTable& table);
void add_reduce_kernels(KernelTable& table);
void add_normalization_kernels(KernelTable& table);
void add_linear_kernels(KernelTable& table);
void add_pooling_kernels(KernelTable& table);
void add_layout_kernels(KernelTable& table);
void add_indexing_kernels(KernelTable& table);
void add_generator_kernels(KernelTable& table);
void add_opaque_kernels(KernelTable& table);
void add_quantize_kernels(KernelTable& table);
void add_loss_kernels(KernelTable& table);
/// Kernels of the `prim.*` primitives (prim_*.cc).
void add_primitive_kernels(KernelTable& table);

}  // namespace orch::interp
