// Synthetic orchestration problems for tests and benchmarks: layered random DAGs whose
// candidates are convex subgraphs, found as differences of execution states (Korch Theorem 1).
#pragma once

#include <cstdint>

#include "orchestrate/orchestrate.h"

namespace orch {

/// Shape of a synthetic problem. At most 64 primitives.
struct SyntheticSpec {
  int layers = 6;
  int min_width = 1;  // primitives per layer, drawn uniformly
  int max_width = 3;
  double edge_probability = 0.5;    // reads each primitive of the previous layer (at least one)
  double skip_probability = 0.1;    // reads each primitive two layers back
  int max_kernel_size = 6;          // primitives per candidate
  int max_states = 100000;          // more execution states than this is an error
  int max_candidates = 0;           // sample down to this many (0: keep all)
  bool keep_singletons = true;      // sampling keeps every one-primitive candidate
  bool random_output_sets = false;  // add a variant writing a random subset of possible outputs
  bool modeled_costs = true;        // a latency model; false: uniform random costs in [1, 20]
};

/// A synthetic problem and the sizes of what it was drawn from.
struct SyntheticProblem {
  OrchestrationProblem problem;
  int states = 0;            // execution states enumerated
  int convex_subgraphs = 0;  // distinct differences within the size cap
};

/// Draws a problem; the same spec and seed give the same problem.
SyntheticProblem synthetic_problem(const SyntheticSpec& spec, uint64_t seed);

}  // namespace orch
