// Tuning a model: kernel identification, then each candidate kernel measured (or found in the
// tuning database), then orchestration over the measured costs.
//
// The default is a lazy exact scheme: the BLP is solved with measured costs where known and a
// roofline lower bound elsewhere; the unmeasured kernels the optimal plan uses are measured and
// the BLP solved again, until the plan uses measured kernels only. That plan is optimal for the
// true costs as long as the bounds are lower bounds. Every single-primitive kernel is measured
// first, so a plan over measured kernels always exists: when a cap on rounds or time stops the
// search early, the plan is the best one over what was measured (stats.converged is false).
// `exhaustive` measures every candidate.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "candidates/candidates.h"
#include "codegen/choice.h"
#include "driver/fusion_policy.h"
#include "ir/graph.h"
#include "orchestrate/orchestrate.h"
#include "partition/dag.h"

namespace orch::driver {

/// Progress of a tuning run, reported after each measurement.
struct TuneProgress {
  int done = 0;                // measurements finished in this round
  int total = 0;               // measurements of this round
  int round = 0;               // lazy rounds (1 for exhaustive tuning)
  double elapsed_s = 0;        // since tune_model started
  double round_elapsed_s = 0;  // since this round's measurements started
  std::string last;            // the kernel just measured, with its result
};

struct TuneOptions {
  std::string db_path;        // "" : the default database (profile/tuning_db.h)
  std::string machine_path;   // machine description; "" : this machine
  int jobs = 0;               // measurement workers; 0: the number of cores
  bool exhaustive = false;    // measure every unique candidate (otherwise lazily)
  bool prune = false;         // with exhaustive: skip candidates the roofline bound rules out
  int max_primitives = 32;    // candidate size cap (FeasibilityRules::max_primitives)
  int64_t max_states = 2000;  // execution states per subgraph
  double budget_ms = 20;      // timed runs per measurement
  int halide_configs = 1;     // tile-search configs measured besides Halide's default
  double timeout_s = 30;      // CPU seconds per kernel (wall: ten times that)
  int max_rounds = 30;        // lazy rounds before settling for the measured kernels
  double max_lazy_s = 600;    // wall time of the lazy rounds before settling
  /// Lazy bounds are at least this fraction of the fastest kernel measured on this machine:
  /// every kernel pays the same per-call overhead, which the roofline cannot see. Empirical
  /// (not a proven bound); 0 turns it off.
  double overhead_floor = 0.8;
  double solve_time_limit_s = 60;  // per orchestrate() call
  /// Non-empty: exactly these kernels (a baseline fusion policy, fusion_policy.h) instead of
  /// kernel identification's candidates.
  std::vector<KernelRange> fixed_kernels;
  std::function<void(const TuneProgress&)> progress;  // null: silent
};

/// Counts of a tuning run.
struct TuneStats {
  int64_t candidates = 0;     // kept candidates (problem.candidates.size())
  int64_t unique = 0;         // distinct kernels (structural hash without constant contents)
  int64_t from_db = 0;        // unique kernels whose result was already stored
  int64_t measured = 0;       // unique kernels measured by this run
  int64_t failed = 0;         // unique kernels with no working backend (stored or measured)
  int64_t pruned = 0;         // unique kernels never measured (lazy bound or --prune)
  int64_t measurements = 0;   // backend/config measurements performed (>= measured)
  int rounds = 0;             // lazy rounds
  bool converged = true;      // the plan is optimal over all candidates (as far as the bounds
                              // hold); false when a round or time cap stopped the lazy search
  double tuning_seconds = 0;  // wall time of tune_model
};

/// A tuned model: everything the stitcher needs to build the module.
struct TunedModel {
  Graph graph;  // the primitive graph; node v is vertex v of `dag`
  Dag dag;
  KernelIdentification kernels;
  /// global_candidates(dag, kernels) with costs: measured latency (us), +infinity when the
  /// kernel failed or was not measured. candidates[i].primitives are NodeIds of `graph`.
  OrchestrationProblem problem;
  /// One per problem.candidates entry: how to generate it (backend "" when not measured).
  std::vector<codegen::KernelChoice> choices;
  Plan plan;
  TuneStats stats;
};

/// Tunes `primitive_graph` (the pipeline's output) and returns the optimal plan over measured
/// kernels. Throws Error when no plan exists (a graph output no working kernel computes).
TunedModel tune_model(Graph primitive_graph, const TuneOptions& options);

}  // namespace orch::driver
