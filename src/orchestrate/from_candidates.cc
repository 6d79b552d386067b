#include "orchestrate/from_candidates.h"

#include "ir/error.h"

namespace orch {

namespace {

std::vector<int> to_global(const VertexSet& set, int begin) {
  std::vector<int> out = set.to_vector();
  for (int& v : out) v += begin;
  return out;
}

}  // namespace

std::vector<Candidate> global_candidates(const Dag& dag, const KernelIdentification& kernels) {
  std::vector<Candidate> out;
  for (const SubgraphCandidates& sub : kernels.candidates) {
    for (const KernelCandidate& k : sub.kept) {
      Candidate c{.primitives = to_global(k.members, sub.begin),
                  .outputs = to_global(k.outputs, sub.begin)};
      for (int v : c.primitives) {
        if (!c.label.empty()) c.label += " + ";
        c.label += dag.label[v];
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

OrchestrationProblem orchestration_problem(const Dag& dag, const KernelIdentification& kernels,
                                           std::span<const double> costs) {
  OrchestrationProblem problem{.num_primitives = dag.size, .primitive_inputs = dag.preds};
  for (int v = 0; v < dag.size; ++v)
    if (dag.is_graph_output[v]) problem.graph_outputs.push_back(v);
  problem.candidates = global_candidates(dag, kernels);
  check(costs.size() == problem.candidates.size(),
        "orchestration problem: {} costs for {} candidates", costs.size(),
        problem.candidates.size());
  for (size_t i = 0; i < costs.size(); ++i) problem.candidates[i].cost_us = costs[i];
  return problem;
}

}  // namespace orch
