// The verifier: checks every Graph invariant and throws an Error naming the first violation.
#pragma once

#include "ir/graph.h"

namespace orch {

/// Checks: ids in range, unique names, one producer per value, topological node order
/// (so no cycle), arity, constant inputs, attributes and output types against the op's shape
/// rule, graph outputs defined.
void verify(const Graph& graph);

}  // namespace orch
