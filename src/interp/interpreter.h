// The reference interpreter: runs a Graph node by node with the reference kernels.
#pragma once

#include <span>
#include <vector>

#include "ir/graph.h"

namespace orch::interp {

/// Runs `graph` on `inputs` (one per graph input, in order) and returns the graph outputs.
/// Throws an Error naming the input on a wrong dtype or shape, and naming the node when a
/// kernel fails.
std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs);

/// Runs a single op outside any graph (constant folding, rule checks).
std::vector<Tensor> run_op(std::string_view op, const Attributes& attrs, std::vector<Tensor> inputs,
                           const std::vector<TensorType>& outputs);

}  // namespace orch::interp
