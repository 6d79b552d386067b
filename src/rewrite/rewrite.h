// The primitive-graph optimizer (Korch §3, TASO's search): verified substitutions applied by a
// cost-guided backtracking search.
//
//   1. Cleanup rules (constant folding, identities, CSE, folds that remove a node; dead code
//      goes with every rebuild) run greedily to a fixpoint, one rule at all its matches per
//      round: they never increase the cost.
//   2. The search keeps a priority queue of graphs ordered by cost. It pops the cheapest, cleans
//      it up, applies every other rule at every node where its guard holds, and queues each
//      new graph (deduplicated by structural hash) whose cost is below alpha times
//      the best so far: alpha > 1 lets it pass through slightly costlier graphs, as the
//      attention rewrite of Fig. 2b needs (reduce-sum -> MatMul costs a little more on its own;
//      the Div commute and the MatMul merge that it enables pay for it).
//   3. It stops when the queue is empty or the step, time or fuel budget is spent, and returns
//      the cheapest graph seen (cleaned up), never one costlier than its input.
//
// Fuel counts rule applications; running with fuel N and N+1 differ by one application, which
// bisects a bad rewrite (`ORCH_REWRITE_FUEL=N`, read by the tools and the pipeline).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rewrite/cost.h"

namespace orch::rewrite {

struct RewriteOptions {
  CostOptions cost;
  /// Replaces the analytic model when set (e.g. measured costs).
  CostFn cost_fn;
  /// Relaxation: graphs up to alpha * best cost stay in the queue.
  double alpha = 1.05;
  /// Graphs popped from the queue.
  int max_steps = 300;
  double max_seconds = 2.0;
  /// Rule applications allowed; negative: unlimited.
  int64_t fuel = -1;
  /// False: cleanup only.
  bool search = true;
  /// Rules (by name) not to apply.
  std::vector<std::string> disabled;
};

/// What the optimizer did.
struct RewriteReport {
  /// Rule name -> applications on the way to the returned graph.
  std::map<std::string, int> applied;
  double cost_before = 0;
  double cost_after = 0;
  int steps = 0;
  /// Distinct graphs the search generated.
  int graphs = 0;
  /// Applications a patch refused (a cycle, an output name) or that threw: a rule bug if > 0.
  int rejected = 0;
  int64_t fuel_used = 0;
};

/// The optimized graph, with the same inputs, outputs (by name) and results.
Graph rewrite(const Graph& graph, const RewriteOptions& options = {},
              RewriteReport* report = nullptr);

/// Fuel from the environment variable ORCH_REWRITE_FUEL, or -1 when unset or invalid.
int64_t fuel_from_env();

}  // namespace orch::rewrite
