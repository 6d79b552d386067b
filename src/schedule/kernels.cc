// Candidate kernels of a graph, extracted as kernel graphs.
#include "schedule/kernels.h"

#include "codegen/kernel.h"
#include "partition/dag.h"

namespace orch::schedule {

std::vector<CandidateKernel> candidate_kernels(const Graph& graph, const IdentifyOptions& options) {
  KernelIdentification ids = identify_kernels(dag_of(graph), options);
  std::vector<CandidateKernel> kernels;
  for (size_t s = 0; s < ids.candidates.size(); ++s) {
    const SubgraphCandidates& sub = ids.candidates[s];
    for (const KernelCandidate& c : sub.kept) {
      CandidateKernel k;
      k.subgraph = static_cast<int>(s);
      c.members.for_each([&](int v) { k.members.push_back(sub.begin + v); });
      c.outputs.for_each([&](int v) {
        for (ValueId out : graph.node(sub.begin + v).outputs) k.outputs.push_back(out);
      });
      kernels.push_back(std::move(k));
    }
  }
  return kernels;
}

Graph kernel_graph(const Graph& graph, const CandidateKernel& kernel) {
  return codegen::extract_kernel(graph, kernel.members, kernel.outputs);
}

}  // namespace orch::schedule
