// Each file in src/ir/ops/ registers the shape rules of one op family.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace orch::ops {

void add_elementwise_ops(std::vector<OpSchema>& table);
void add_reduce_ops(std::vector<OpSchema>& table);
void add_normalization_ops(std::vector<OpSchema>& table);
void add_linear_ops(std::vector<OpSchema>& table);
void add_pooling_ops(std::vector<OpSchema>& table);
void add_layout_ops(std::vector<OpSchema>& table);
void add_indexing_ops(std::vector<OpSchema>& table);
void add_generator_ops(std::vector<OpSchema>& table);
void add_opaque_ops(std::vector<OpSchema>& table);
void add_quantize_ops(std::vector<OpSchema>& table);
void add_loss_ops(std::vector<OpSchema>& table);
/// The `prim.*` primitives that fission produces (src/ir/ops/prim_*.cc).
void add_primitive_ops(std::vector<OpSchema>& table);

}  // namespace orch::ops
