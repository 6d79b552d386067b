// The enumerator's question to the code generators: can some backend generate this candidate?
#pragma once

#include <functional>
#include <string>

#include "candidates/candidates.h"
#include "ir/graph.h"

namespace orch::driver {

/// A KernelCheck for the primitive graph `graph` (vertex v is node v; the graph must outlive
/// it): a single primitive is always generable (the reference backend runs anything); a fused
/// candidate is kept when oneDNN or Halide accepts its kernel graph (one of several Linear
/// primitives when oneDNN chains them), otherwise rejected with Halide's reason (oneDNN's for
/// several Linear primitives) without the node's name, so that equal reasons count together.
KernelCheck backend_check(const Graph& graph);

/// The same for any generator: `reject` answers "" or why not for a fused candidate's kernel
/// graph (the values it writes are those read outside it; with `min_weight_bytes` > 0, constants
/// that large are kernel inputs, as the stitcher passes them:
/// codegen::extract_kernel_with_weight_inputs).
KernelCheck kernel_check(const Graph& graph, std::function<std::string(const Graph&)> reject,
                         int64_t min_weight_bytes = 0);

}  // namespace orch::driver
