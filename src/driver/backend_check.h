// The enumerator's question to the code generators: can some backend generate this candidate?
#pragma once

#include "candidates/candidates.h"
#include "ir/graph.h"

namespace orch::driver {

/// A KernelCheck for the primitive graph `graph` (vertex v is node v; the graph must outlive
/// it): a single primitive is always generable (the reference backend runs anything); a fused
/// candidate is kept when oneDNN or Halide accepts its kernel graph, otherwise rejected with
/// Halide's reason without the node's name, so that equal reasons count together.
KernelCheck backend_check(const Graph& graph);

}  // namespace orch::driver
