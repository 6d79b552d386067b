// Deterministic random tensors for checking kernels and models against the interpreter.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace orch::interp {

/// Floats uniform in [-1, 1); integers uniform in [0, 10); bools fair coins.
Tensor random_tensor(const TensorType& type, uint64_t seed);

/// One random tensor per graph input, seeded from `seed` and the input's position.
std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed);

}  // namespace orch::interp
