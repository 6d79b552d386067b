// From kernel identification to orchestration: the kept candidates of every subgraph, in global
// vertex numbers, with their measured costs, as the BLP's input.
#pragma once

#include <span>

#include "candidates/candidates.h"
#include "orchestrate/orchestrate.h"

namespace orch {

/// The kept candidates of all subgraphs, in subgraph order, as orchestration candidates
/// (global vertex numbers, cost 0, label "Add #3 + Relu #4").
std::vector<Candidate> global_candidates(const Dag& dag, const KernelIdentification& kernels);

/// The orchestration problem of `dag` over its kept candidates, costs[i] being the measured
/// latency of the i-th of global_candidates(). Throws Error when the counts differ.
OrchestrationProblem orchestration_problem(const Dag& dag, const KernelIdentification& kernels,
                                           std::span<const double> costs);

}  // namespace orch
