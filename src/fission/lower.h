// Lowering of a primitive graph to standard ONNX ops, for ONNX export and ONNX Runtime: each
// primitive becomes its ONNX form (ir/ops/prim.h), with its parameters as constant inputs.
#pragma once

#include "ir/graph.h"

namespace orch::fission {

struct LowerOptions {
  /// Drop a prim.Broadcast whose consumers are all elementwise and let ONNX's implicit numpy
  /// broadcasting do it (a runtime then need not materialize the broadcast tensor).
  bool implicit_broadcast = false;
};

/// The same computation with every `prim.*` node replaced by its standard ONNX op. Value names
/// are kept; other nodes are copied unchanged.
Graph lower_primitives(const Graph& graph, const LowerOptions& options = {});

}  // namespace orch::fission
