// Partitioning: cut the primitive DAG into subgraphs small enough to enumerate (Korch §4.1
// runs its kernel identifier per subgraph). Kernels never span two subgraphs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "partition/dag.h"

namespace orch {

/// Tests whether the vertices [begin, end) may form one subgraph (e.g. a cap on its states).
using PieceTest = std::function<bool(int begin, int end)>;

struct PartitionOptions {
  int max_vertices = 64;         // no subgraph has more vertices
  PieceTest fits;                // an extra test every merged subgraph passes; empty: none
  std::vector<int> manual_cuts;  // cut right after each of these vertices
  bool automatic = true;         // false: cut only at manual cuts and around Opaque vertices
};

/// A subgraph: the vertices [begin, end) of the DAG's topological order, which is convex.
struct Subgraph {
  int begin = 0;
  int end = 0;
  int cut_width = 0;       // values crossing the cut after this subgraph (0 after the last)
  std::string cut_reason;  // why that cut stayed: "opaque", "manual", "size cap", "piece test"
  int size() const { return end - begin; }
};

/// Cuts `dag` into subgraphs in topological order: every Opaque vertex alone, a cut after
/// each manual cut vertex, and (when `automatic`) as few other cuts as the caps allow, the
/// narrowest kept. Throws Error on an invalid DAG or a manual cut out of range.
std::vector<Subgraph> partition(const Dag& dag, const PartitionOptions& options = {});

/// Width of every boundary of the topological order: entry b counts the vertices u < b with a
/// successor >= b, i.e. the values a cut between vertex b-1 and vertex b would cross.
std::vector<int> cut_widths(const Dag& dag);

}  // namespace orch
