// Orchestration solve times on synthetic problems of Korch's size (its largest subgraph:
// 584 execution states, 3078 candidates), with ablations of the formulation.
//
// usage: bench_orchestrate [--no-ablation] [--time-limit SECONDS] [--only INSTANCE]
//                          [--problem FILE ...]
//   --problem solves saved problems (orchestrate/problem_text.h, e.g. from
//   bench_orchestrate_zoo --dump, or `orch optimize --save-problem FILE`, which saves what a
//   real tuning run solved, CUDA targets included) instead of the synthetic rows.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "orchestrate/orchestrate.h"
#include "orchestrate/problem_text.h"
#include "orchestrate/synthetic.h"

namespace {

using namespace orch;

struct Row {
  std::string name;
  int layers, min_width, max_width;
  double edge_probability;
  int min_states, max_states;  // first seed whose execution states fall in this range
  int max_candidates;          // 0: every convex subgraph of up to 8 primitives
};

// The paper's rows beyond this many nonzeros exhaust this machine's memory in CBC.
constexpr double kMaxPaperNonzeros = 20e6;

struct Timed {
  Plan plan;
  double seconds = 0;      // wall clock
  double cpu_seconds = 0;  // this process (the machine is shared)
};

Timed timed_orchestrate(const OrchestrationProblem& problem, const OrchestrateOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  Plan plan = orchestrate(problem, options);
  double cpu = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::move(plan), seconds, cpu};
}

SyntheticProblem find_problem(const Row& row, uint64_t& seed) {
  SyntheticSpec spec;
  spec.layers = row.layers;
  spec.min_width = row.min_width;
  spec.max_width = row.max_width;
  spec.edge_probability = row.edge_probability;
  spec.max_kernel_size = 8;
  spec.max_states = 4 * row.max_states;
  spec.max_candidates = row.max_candidates;
  for (seed = 0;; ++seed) {
    try {
      SyntheticProblem p = synthetic_problem(spec, seed);
      if (p.states >= row.min_states && p.states <= row.max_states) return p;
    } catch (const Error&) {
      // too many states for this seed: try the next one
    }
  }
}

// Nonzeros of the paper's dependency rows: one row per (candidate, external input) over all
// writers of the input.
double paper_nonzeros(const OrchestrationProblem& problem) {
  std::vector<double> writers(problem.num_primitives, 0);
  for (const Candidate& c : problem.candidates) {
    for (int o : c.outputs) writers[o] += 1;
  }
  double total = 0;
  for (const Candidate& c : problem.candidates) {
    for (int j : external_inputs(problem, c)) total += writers[j] + 1;
  }
  return total;
}

std::string seconds_or_limit(const Timed& t) {
  return t.plan.status == SolveStatus::Optimal ? fmt::format("{:.2f}", t.seconds)
                                               : fmt::format(">{:.0f}", t.seconds);
}

// Solves `problem` (and its ablations) and prints one table row; false on an invalid plan.
bool print_row(const std::string& name, const OrchestrationProblem& problem, int states,
               int subgraphs, const OrchestrateOptions& options, bool ablation) {
  Timed t = timed_orchestrate(problem, options);
  std::string error = check_plan(problem, t.plan);
  if (!error.empty()) {
    fmt::print(stderr, "{}: invalid plan: {}\n", name, error);
    return false;
  }
  const OrchestrateStats& s = t.plan.stats;
  fmt::print(
      "{:<14} {:>5} {:>6} {:>9} {:>6} {:>6} {:>6} {:>6} {:>9.1f} {:>9.1f} {:>9.1f} {:>5.1f} "
      "{:>4} {:>7.2f} {:>7} {:>7.2f}",
      name, problem.num_primitives, states, subgraphs, s.candidates, s.unmeasured, s.columns,
      s.rows, s.greedy_us, s.no_recompute_us, t.plan.objective_us, 100 * t.plan.gap, s.cycle_cuts,
      s.solve_seconds, seconds_or_limit(t), t.cpu_seconds);
  if (ablation) {
    OrchestrateOptions no_prune = options, no_warm = options, no_cover = options, paper = options;
    no_prune.prune_dominated = false;
    no_warm.warm_start = false;
    no_cover.coverage_rows = false;
    paper.prune_dominated = paper.warm_start = paper.buffer_variables = false;
    paper.coverage_rows = false;
    double nonzeros = paper_nonzeros(problem);
    for (const OrchestrateOptions& o : {no_prune, no_warm, no_cover, paper}) {
      if (!o.buffer_variables && nonzeros > kMaxPaperNonzeros) {
        fmt::print(" {:>9}", fmt::format("{:.0f}M nz", nonzeros / 1e6));  // would not fit
        continue;
      }
      Timed a = timed_orchestrate(problem, o);
      std::string mark = a.plan.objective_us > t.plan.objective_us + 1e-6 ? "*" : "";
      fmt::print(" {:>9}", seconds_or_limit(a) + mark);
    }
  }
  fmt::print("\n");
  std::fflush(stdout);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool ablation = true;
  double limit = 60;
  std::string only;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--no-ablation") {
      ablation = false;
    } else if (arg == "--time-limit" && i + 1 < argc) {
      limit = std::atof(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--problem" && i + 1 < argc) {
      files.push_back(argv[++i]);
    } else {
      fmt::print(stderr,
                 "usage: bench_orchestrate [--no-ablation] [--time-limit SECONDS] [--only "
                 "INSTANCE] [--problem FILE ...]\n");
      return 2;
    }
  }
  const std::vector<Row> rows = {
      {"small", 8, 2, 3, 0.5, 150, 250, 1000},    {"medium", 10, 2, 3, 0.5, 250, 400, 2000},
      {"korch-a", 12, 2, 4, 0.5, 550, 650, 3100}, {"korch-b", 12, 2, 4, 0.5, 650, 750, 3100},
      {"korch-c", 14, 2, 3, 0.5, 550, 750, 3100}, {"korch-d", 10, 2, 4, 0.5, 550, 650, 4000},
      {"large", 14, 2, 4, 0.5, 900, 1100, 6000},  {"all-subgraphs", 12, 2, 4, 0.5, 550, 750, 0},
  };
  fmt::print(
      "{:<14} {:>5} {:>6} {:>9} {:>6} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>5} {:>4} {:>7} "
      "{:>7} {:>7}",
      "instance", "prims", "states", "subgraphs", "cands", "unmeas", "cols", "rows", "greedy",
      "no_recomp", "best_us", "gap%", "cuts", "solve_s", "total_s", "cpu_s");
  if (ablation) {
    fmt::print(" {:>9} {:>9} {:>9} {:>9}", "no_prune", "no_warm", "no_cover", "paper");
  }
  fmt::print("\n");
  OrchestrateOptions options;
  options.time_limit_s = limit;
  try {
    for (const std::string& file : files) {
      std::ifstream in(file);
      check(static_cast<bool>(in), "cannot read {}", file);
      std::stringstream text;
      text << in.rdbuf();
      if (!print_row(file, problem_from_text(text.str()), -1, -1, options, ablation)) return 1;
    }
    for (const Row& row : files.empty() ? rows : std::vector<Row>{}) {
      if (!only.empty() && row.name != only) continue;
      uint64_t seed = 0;
      SyntheticProblem p = find_problem(row, seed);
      if (!print_row(fmt::format("{}/{}", row.name, seed), p.problem, p.states, p.convex_subgraphs,
                     options, ablation))
        return 1;
    }
  } catch (const Error& e) {
    fmt::print(stderr, "bench_orchestrate: {}\n", e.what());
    return 1;
  }
  fmt::print(
      "greedy: cheapest-writer plan; no_recomp: best plan computing each primitive once (the\n"
      "warm start is the cheaper of the two); best_us: the plan returned. solve_s: CBC rounds;\n"
      "total_s: orchestrate() end to end (validation, pruning, starts, CBC, extraction), wall\n"
      "clock; cpu_s: its process CPU time.\n"
      "Ablations (total_s): no_prune: no dominance pruning; no_warm: CBC starts without a plan;\n"
      "no_cover: no coverage rows; paper: Korch's formulation (one dependency row over all\n"
      "writers, no coverage rows, no pruning, no warm start; 'NM nz': not run, its matrix would\n"
      "have N million nonzeros). '>': stopped at the time limit; '*': worse plan than best_us.\n");
  return 0;
}
