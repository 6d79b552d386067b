// The primitive graph as a plain DAG: what kernel identification needs of a Graph and nothing
// more, so that partitioning and enumeration are testable on hand-made and random DAGs.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_registry.h"

namespace orch {

/// A DAG whose vertices are in topological order (every predecessor has a smaller index).
/// Vertex v of `dag_of(graph)` is node v of the graph.
struct Dag {
  int size = 0;
  std::vector<std::vector<int>> preds;  // sorted, without duplicates
  std::vector<bool> is_graph_output;    // some output of the vertex is a graph output
  std::vector<Category> category;
  std::vector<std::string> label;   // for messages: "Add 'name'" or "Add #3"
  std::vector<bool> constant_only;  // computes from constants alone (no graph input upstream)
};

/// One vertex per node; an edge u -> v when v reads a value u produces. Graph inputs and
/// constants are not vertices. Categories come from the op registry (Operator when unknown).
Dag dag_of(const Graph& graph);

/// Throws Error naming the vertex when a predecessor is out of range or not earlier, a
/// constant-only vertex has a predecessor that is not, or the per-vertex vectors do not have
/// `size` entries.
void check_dag(const Dag& dag);

/// The predecessors enumeration orders by: `preds` plus anchors. A constant-only vertex (weight
/// preprocessing such as the Reshape and Broadcast of a bias) needs no vertex, so it could run in
/// any execution state before its consumer, and every such place would be another state: its
/// anchors are the earlier non-constant-only vertices its first consumer reads (directly, or
/// through that consumer's own anchors), so it runs just before that consumer. Sibling views
/// (Layout vertices reading the same values, with one and the same consumer: the strided Slices
/// a pooling window or SpaceToDepth stacks into a Concat) run in vertex order, each anchored to
/// the one before: n of them are n + 1 states instead of 2^n (YOLO's 13-tap SPP windows ran as
/// lone Slices, since no subgraph under the state cap could hold all 13 and their Concat).
/// Anchors only remove states; candidates found with them are convex with or without them.
std::vector<std::vector<int>> anchored_preds(const Dag& dag);

/// For each vertex, its last (largest) successor, or -1 when it has none.
std::vector<int> last_consumers(const Dag& dag);

/// Successor lists of every vertex, sorted.
std::vector<std::vector<int>> successors(const Dag& dag);

}  // namespace orch
