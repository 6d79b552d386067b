// Operator fission (Korch §3): every ONNX operator becomes a small graph of primitives
// (`prim.*` ops, ir/ops/prim.h), each with one output. Rules are data, one file per op family
// (rule.h); an operator with no applicable rule, and every Opaque op, is kept whole (and says why
// in the report). Example, Softmax on axis 1 of f32[2,5]:
//
//   m = prim.Reduce(x) {kind = "max", axes = [1]}        f32[2,1]
//   d = prim.Elementwise(x, prim.Broadcast(m)) {fn = "sub"}
//   e = prim.Elementwise(d) {fn = "exp"}
//   s = prim.Reduce(e) {kind = "sum", axes = [1]}
//   y = prim.Elementwise(e, prim.Broadcast(s)) {fn = "div"}
//
// Operator outputs keep their value names, so graph inputs and outputs are unchanged.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch::fission {

struct FissionOptions {
  /// When false, an operator without an applicable rule is an error instead of kept whole.
  bool keep_unmatched = true;
};

/// What fission did.
struct FissionReport {
  int rewritten = 0;
  /// "Op 'name': reason" for each node kept whole (Opaque ops included).
  std::vector<std::string> kept;
  /// Per node of the primitive graph, the operator node it came from. An operator's
  /// primitives are consecutive nodes, except the identities that give graph outputs their
  /// names: they come last and count as their operator's (kNoNode when they return a graph
  /// input or constant).
  std::vector<NodeId> origin;
};

/// The primitive graph equivalent to `graph`. Graph inputs and outputs keep their names.
Graph fission(const Graph& graph, const FissionOptions& options = {},
              FissionReport* report = nullptr);

}  // namespace orch::fission
