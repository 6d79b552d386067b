// Execution states (Korch Definition 2): the predecessor-closed vertex sets of one subgraph.
#pragma once

#include <cstdint>
#include <vector>

#include "candidates/vertex_set.h"
#include "partition/dag.h"

namespace orch {

/// One subgraph [begin, end) of a Dag with local vertex numbers 0..size-1 (local v is global
/// begin + v), as bitsets. Enumeration orders by the anchored edges (anchored_preds); output
/// sets follow the values actually read.
struct SubDag {
  int begin = 0;
  int size = 0;
  std::vector<VertexSet> preds;    // local anchored predecessors (outside ones dropped)
  std::vector<VertexSet> succs;    // local anchored successors
  std::vector<VertexSet> readers;  // local vertices reading each vertex's value
  VertexSet external;  // vertices a graph output is or a vertex outside the subgraph reads
  std::vector<Category> category;
};

/// What sub_dag needs of the whole DAG, computed once per DAG.
struct DagIndex {
  std::vector<std::vector<int>> anchored;  // anchored_preds(dag)
  std::vector<int> last_consumer;          // last_consumers(dag)
};

DagIndex index_dag(const Dag& dag);

/// The subgraph [begin, end) of `dag`, whose index is `index`. Throws Error when it has more
/// than VertexSet::kCapacity vertices or the range is invalid.
SubDag sub_dag(const Dag& dag, const DagIndex& index, int begin, int end);
/// The same, indexing `dag` first (linear in the whole DAG).
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
