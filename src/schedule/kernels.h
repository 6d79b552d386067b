// The candidate kernels of a primitive graph as standalone kernel graphs: what the tile search
// runs on (kernel identification, then codegen::extract_kernel per candidate).
#pragma once

#include <vector>

#include "candidates/candidates.h"
#include "ir/graph.h"

namespace orch::schedule {

/// One candidate kernel of a graph, in the graph's node and value ids.
struct CandidateKernel {
  int subgraph = 0;
  std::vector<NodeId> members;   // in topological order
  std::vector<ValueId> outputs;  // the candidate's output set
};

/// Every candidate kept by kernel identification over `dag_of(graph)`.
std::vector<CandidateKernel> candidate_kernels(const Graph& graph, const IdentifyOptions& options);

/// The standalone kernel graph of a candidate.
Graph kernel_graph(const Graph& graph, const CandidateKernel& kernel);

}  // namespace orch::schedule
