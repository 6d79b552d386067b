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

/// The interpreter run on demand, for checking a compiled module's kernels as they run:
/// value(v) runs the nodes (in node order) up to v's producer. A value is freed once the nodes
/// reading it ran and its holds (reads announced up front) were released: the memory is that of
/// the live values, not of every value checked. Segformer-B0 at batch 16 has 12.8 GiB of them.
class Interpretation {
 public:
  /// `holds[v]`: how many times the caller will release(v); one entry per graph value.
  Interpretation(const Graph& graph, std::span<const Tensor> inputs, std::vector<int> holds);
  /// v's value, computed if it was not yet; v must still be held or read by a node not run.
  const Tensor& value(ValueId v);
  /// One hold of v (or, inside, one node's read of it) is over.
  void release(ValueId v);
  /// Runs the nodes not run yet.
  void run_rest();

 private:
  void run_next();

  const Graph& graph_;
  std::vector<Tensor> env_;
  std::vector<int> uses_;  // readers not run plus holds not released
  NodeId next_ = 0;
};

/// Runs a single op outside any graph (constant folding, rule checks).
std::vector<Tensor> run_op(std::string_view op, const Attributes& attrs, std::vector<Tensor> inputs,
                           const std::vector<TensorType>& outputs);

}  // namespace orch::interp
