// A brute-force orchestrator for small problems, written independently of src/orchestrate:
// try every subset of measured candidates, keep the cheapest that can run in some order
// (each kernel after the kernels writing its inputs) and writes every graph output;
// optionally only subsets whose kernels share no primitive (no recomputation).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "orchestrate/orchestrate.h"

namespace orch::testing {

/// Minimum cost over all executable subsets, or nullopt when none computes the outputs.
inline std::optional<double> brute_force_optimum(const OrchestrationProblem& problem,
                                                 bool without_recomputation = false) {
  std::vector<int> measured;
  for (int i = 0; i < static_cast<int>(problem.candidates.size()); ++i) {
    if (std::isfinite(problem.candidates[i].cost_us)) measured.push_back(i);
  }
  const int m = static_cast<int>(measured.size());
  std::vector<std::vector<int>> reads(m);
  for (int i = 0; i < m; ++i) {
    const Candidate& c = problem.candidates[measured[i]];
    for (int p : c.primitives) {
      for (int q : problem.primitive_inputs[p]) {
        if (std::find(c.primitives.begin(), c.primitives.end(), q) == c.primitives.end())
          reads[i].push_back(q);
      }
    }
  }
  std::optional<double> best;
  for (uint64_t subset = 0; subset < (uint64_t{1} << m); ++subset) {
    double cost = 0;
    for (int i = 0; i < m; ++i) {
      if (subset >> i & 1) cost += problem.candidates[measured[i]].cost_us;
    }
    if (best && cost >= *best) continue;
    if (without_recomputation) {
      std::vector<int> computed(problem.num_primitives, 0);
      bool shared = false;
      for (int i = 0; i < m; ++i) {
        if (!(subset >> i & 1)) continue;
        for (int p : problem.candidates[measured[i]].primitives) shared |= computed[p]++ > 0;
      }
      if (shared) continue;
    }
    std::vector<char> written(problem.num_primitives, 0);
    uint64_t ran = 0;
    for (bool progress = true; progress;) {
      progress = false;
      for (int i = 0; i < m; ++i) {
        if (!(subset >> i & 1) || (ran >> i & 1)) continue;
        bool ready =
            std::all_of(reads[i].begin(), reads[i].end(), [&](int q) { return written[q]; });
        if (!ready) continue;
        ran |= uint64_t{1} << i;
        for (int o : problem.candidates[measured[i]].outputs) written[o] = 1;
        progress = true;
      }
    }
    bool outputs = std::all_of(problem.graph_outputs.begin(), problem.graph_outputs.end(),
                               [&](int g) { return written[g]; });
    if (ran == subset && outputs) best = cost;
  }
  return best;
}

}  // namespace orch::testing
