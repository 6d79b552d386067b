// Lowering of a primitive graph to standard ONNX ops, for ONNX export and ONNX Runtime: each
// primitive becomes its ONNX form (ir/ops/prim.h), with its parameters as constant inputs.
#pragma once

#include "ir/graph.h"

namespace orch::fission {

/// The same computation with every `prim.*` node replaced by its standard ONNX op. Value names
/// are kept; other nodes are copied unchanged.
Graph lower_primitives(const Graph& graph);

}  // namespace orch::fission
