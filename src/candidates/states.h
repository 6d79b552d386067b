// Execution states (Korch Definition 2): the predecessor-closed vertex sets of one subgraph.
#pragma once

#include <cstdint>
#include <vector>

#include "candidates/vertex_set.h"
#include "partition/dag.h"

namespace orch {

/// One subgraph [begin, end) of a Dag with local vertex numbers 0..size-1 (local v is global
/// begin + v), as bitsets.
struct SubDag {
  int begin = 0;
  int size = 0;
  std::vector<VertexSet> preds;  // local predecessors (those outside the subgraph dropped)
  std::vector<VertexSet> succs;  // local successors
  VertexSet external;  // vertices a graph output is or a vertex outside the subgraph reads
  std::vector<Category> category;
};

/// The subgraph [begin, end) of `dag`; `last_consumer` is last_consumers(dag). Throws Error when
/// it has more than VertexSet::kCapacity vertices or the range is invalid.
SubDag sub_dag(const Dag& dag, const std::vector<int>& last_consumer, int begin, int end);
/// The same, computing last_consumers(dag) (linear in the whole DAG).
SubDag sub_dag(const Dag& dag, int begin, int end);

/// The execution states of a subgraph, found by DFS from the empty state (Korch Algorithm 1).
struct StateSet {
  std::vector<VertexSet> states;  // deduplicated, sorted by size, then by bits
  bool capped = false;            // more than max_states exist: `states` holds the first found
};

/// Enumerates the execution states of `sub`, the empty and the full set included, stopping
/// once more than `max_states` are found.
StateSet execution_states(const SubDag& sub, int64_t max_states);

}  // namespace orch
