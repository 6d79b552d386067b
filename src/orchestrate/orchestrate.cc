// orchestrate(): validate, reduce to columns, greedy warm start, solve with cycle cuts, extract.
#include "orchestrate/orchestrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <set>
#include <vector>

#include "ir/error.h"
#include "orchestrate/columns.h"

namespace orch {

using namespace orchestrate_detail;

// The no-recomputation search visits at most this many execution states. Constant-only
// primitives (weight reshapes) multiply the states (they fit anywhere before their reader):
// the attention subgraph of transformer-tiny passes 200,000 states in ~30 s without an
// answer, while the searches that finish need a few thousand; CBC needs no warm start.
constexpr int kMaxChainStates = 20000;
// Each state scans the columns that could follow it, so large problems get fewer states: at most
// this many (states x columns). On the zoo's subgraphs every search that beat the greedy plan had
// at most 1023 candidates, while on those of 17,000-65,000 candidates the full 20,000 states
// took 2.6-6.4 s to return the greedy plan's cost or nothing.
constexpr double kMaxChainWork = 1e8;
constexpr int kMinChainStates = 1000;

namespace {

// How one independent part was solved.
struct PartResult {
  std::vector<int> chosen;  // candidates of the part
  OrchestrateStats stats;
  double bound = 0;
  bool optimal = false;
  std::string note;  // why not optimal
};

// Solves one part within `time_limit_s`: greedy and no-recomputation starts, then CBC rounds
// with cycle cuts until the solution runs.
PartResult solve_part(const OrchestrationProblem& problem, const OrchestrateOptions& options,
                      double time_limit_s) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  PartResult out;
  OrchestrateStats& stats = out.stats;
  OrchestrateStats unpruned_stats;
  Columns columns = build_columns(problem, options.prune_dominated, stats);
  // The search without recomputation needs the complete candidates that pruning may drop.
  Columns unpruned =
      options.prune_dominated ? build_columns(problem, false, unpruned_stats) : columns;

  // Two executable starts; the cheaper one is the answer if the solver finds nothing better.
  std::vector<int> best = greedy_plan(columns);
  double best_cost = total_cost(columns, best);
  stats.greedy_us = best_cost;
  const int max_states =
      static_cast<int>(std::clamp(kMaxChainWork / std::max(1, unpruned.size()),
                                  double{kMinChainStates}, double{kMaxChainStates}));
  std::vector<int> chain = chain_plan(unpruned, max_states);
  stats.no_recompute_us =
      chain.empty() ? std::numeric_limits<double>::infinity() : total_cost(unpruned, chain);
  if (!chain.empty()) {
    // Among the pruned columns a dominated kernel becomes its dominator (or goes, when nobody
    // reads what it writes any more); the replay below confirms the result still runs.
    std::set<int> mapped;
    for (int k : chain) {
      int column = columns.column_of_candidate[unpruned.candidate[k]];
      if (column >= 0) mapped.insert(column);
    }
    std::vector<int> start(mapped.begin(), mapped.end());
    double cost = total_cost(columns, start);
    if (cost < best_cost && replay(columns, start).complete(columns)) {
      best = std::move(start);
      best_cost = cost;
    }
  }

  std::vector<CycleCut> cuts;
  while (true) {
    double left = time_limit_s - elapsed();
    if (left <= 0) {
      out.note = stats.rounds == 0 ? "time limit reached before CBC started"
                                   : "time limit reached while cutting off cyclic solutions";
      break;
    }
    BlpSize size;
    double round_start = elapsed();
    BlpResult result = solve_blp(columns, cuts, options.warm_start ? best : std::vector<int>{},
                                 left, options, size);
    stats.solve_seconds += elapsed() - round_start;
    ++stats.rounds;
    stats.rows = size.rows;
    check(!result.infeasible,
          "orchestrate: internal error: CBC found the BLP infeasible, but the greedy plan is "
          "feasible");
    out.bound = std::max(out.bound, result.bound);
    if (!result.has_solution) {
      out.note = "time limit reached before CBC found a plan; the plan is the better starting plan";
      break;
    }
    Replay run = replay(columns, result.chosen);
    if (run.stuck.empty()) {
      double cost = total_cost(columns, result.chosen);
      if (cost < best_cost) {
        best = result.chosen;
        best_cost = cost;
      }
      out.optimal = result.optimal;
      if (!out.optimal) out.note = "time limit reached: the plan is the best one found";
      break;
    }
    // The solution needs kernels that wait on each other. Its runnable part may still beat the
    // incumbent, which then starts the next round; cut the cycles off and solve again.
    std::vector<int> repaired = repaired_plan(columns, result.chosen, best);
    if (double cost = total_cost(columns, repaired); cost < best_cost) {
      best = std::move(repaired);
      best_cost = cost;
    }
    std::vector<CycleCut> more = cycle_cuts(columns, run);
    stats.cycle_cuts += static_cast<int>(more.size());
    cuts.insert(cuts.end(), more.begin(), more.end());
    if (!result.optimal) {
      out.note = "time limit reached while cutting off cyclic solutions";
      break;
    }
  }
  for (int k : best) out.chosen.push_back(columns.candidate[k]);
  if (out.optimal) out.bound = best_cost;
  return out;
}

void add_stats(OrchestrateStats& total, const OrchestrateStats& part) {
  total.candidates += part.candidates;
  total.unmeasured += part.unmeasured;
  total.unusable += part.unusable;
  total.dominated += part.dominated;
  total.columns += part.columns;
  total.rows += part.rows;
  total.cycle_cuts += part.cycle_cuts;
  total.rounds += part.rounds;
  total.greedy_us += part.greedy_us;
  total.no_recompute_us += part.no_recompute_us;
  total.solve_seconds += part.solve_seconds;
}

}  // namespace

Plan orchestrate(const OrchestrationProblem& problem, const OrchestrateOptions& options) {
  check(options.time_limit_s > 0, "orchestrate: the time limit must be positive, got {} s",
        options.time_limit_s);
  auto start = std::chrono::steady_clock::now();
  validate_problem(problem);
  if (problem.num_primitives == 0) return extract_plan(problem, {});  // nothing to compute
  std::vector<Part> parts = independent_parts(problem);
  // Smallest first, each with a share of the time left: half of it split equally among the
  // parts not yet solved, half by their candidates. In primitive order, with all of it each,
  // YOLOX-Nano's 150,381-candidate neck took the whole 60 s (CBC's first plan was cyclic), and
  // the 8 parts after it ran their greedy plans unsolved. Most parts end far inside their share
  // and leave it to the next. With equal shares alone, mid-sized parts spent theirs on rounds of
  // cycle cuts that gained little: on YOLOX-Nano's CUDA problem (14 parts, analytic costs),
  // parts of 9,000-14,000 columns ran 5-19 rounds each, and the 101,689-column part, which needs
  // 18-26 s, was left 23 s and stopped short (plan 443.1 us; now it solves to optimality, 440.5
  // us). By candidates alone, a 6,567-candidate part of YOLOX-Nano's CPU problem (roofline
  // costs) had 1 s for its cycle cuts and stopped short.
  std::vector<size_t> order(parts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return parts[a].candidates.size() < parts[b].candidates.size();
  });
  OrchestrateStats stats;
  std::vector<int> chosen;
  double bound = 0;
  bool optimal = true;
  std::string note;
  size_t unsolved = problem.candidates.size();
  for (size_t p = 0; p < order.size(); ++p) {
    const Part& part = parts[order[p]];
    double left = options.time_limit_s -
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double by_candidates = static_cast<double>(part.candidates.size()) /
                                 static_cast<double>(std::max<size_t>(unsolved, 1));
    left *= 0.5 * by_candidates + 0.5 / static_cast<double>(order.size() - p);
    unsolved -= part.candidates.size();
    PartResult result;
    try {
      result = solve_part(part.problem, options, std::max(left, 1e-9));
    } catch (const Error&) {
      // An infeasible part: the whole problem's check names the primitive in global numbers.
      OrchestrateStats unused;
      build_columns(problem, false, unused);
      throw;
    }
    add_stats(stats, result.stats);
    for (int c : result.chosen) chosen.push_back(part.candidates[c]);
    bound += result.bound;
    optimal = optimal && result.optimal;
    if (note.empty()) note = result.note;
  }
  stats.parts = static_cast<int>(parts.size());

  Plan plan = extract_plan(problem, std::move(chosen));
  plan.stats = stats;
  if (optimal) {
    plan.status = SolveStatus::Optimal;
    plan.lower_bound_us = plan.objective_us;
  } else {
    plan.status = SolveStatus::TimeLimit;
    plan.lower_bound_us = std::min(bound, plan.objective_us);
    plan.gap =
        plan.objective_us > 0 ? (plan.objective_us - plan.lower_bound_us) / plan.objective_us : 0;
    plan.note = fmt::format("{} (limit {} s, lower bound {:.2f} us, gap {:.1f}%)", note,
                            options.time_limit_s, plan.lower_bound_us, 100 * plan.gap);
  }
  return plan;
}

}  // namespace orch
