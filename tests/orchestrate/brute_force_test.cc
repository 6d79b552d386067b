// The BLP against brute force on random small problems.
#include "brute_force.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "ir/error.h"
#include "orchestrate/orchestrate.h"
#include "orchestrate/synthetic.h"

namespace orch {
namespace {

constexpr int kInstances = 240;

SyntheticSpec small_spec(int seed) {
  SyntheticSpec spec;
  spec.layers = 2 + seed % 3;
  spec.min_width = 1;
  spec.max_width = seed % 2 ? 3 : 2;
  spec.edge_probability = 0.6;
  spec.skip_probability = 0.3;
  spec.max_kernel_size = 4;
  spec.max_candidates = 8;
  spec.keep_singletons = seed % 4 != 0;  // without them some problems are infeasible
  spec.random_output_sets = true;
  spec.modeled_costs = seed % 2 == 0;
  return spec;
}

// The paper's rows (cycle cuts per reader), no coverage rows, no pruning, no warm start.
OrchestrateOptions paper_options() {
  OrchestrateOptions paper;
  paper.prune_dominated = false;
  paper.warm_start = false;
  paper.buffer_variables = false;
  paper.coverage_rows = false;
  return paper;
}

struct Tally {
  int feasible = 0, infeasible = 0, with_cycle_cuts = 0, recomputing = 0;
};

// Solves one problem with the given options and compares with the brute-force optimum.
std::optional<Plan> compare(const OrchestrationProblem& problem, const OrchestrateOptions& options,
                            const std::optional<double>& expected, const std::string& name,
                            Tally* tally) {
  if (!expected) {
    try {
      orchestrate(problem, options);
      ADD_FAILURE() << name << ": brute force finds no plan, orchestrate returned one";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("infeasible"), std::string::npos) << e.what();
    }
    if (tally) ++tally->infeasible;
    return std::nullopt;
  }
  Plan plan = orchestrate(problem, options);
  EXPECT_EQ(plan.status, SolveStatus::Optimal) << name;
  EXPECT_NEAR(plan.objective_us, *expected, 1e-6 * std::max(1.0, *expected)) << name;
  EXPECT_EQ(check_plan(problem, plan), "") << name << "\n" << format_plan(problem, plan);
  if (!tally) return plan;
  ++tally->feasible;
  tally->with_cycle_cuts += plan.stats.cycle_cuts > 0;
  std::vector<int> computed(problem.num_primitives, 0);
  for (const PlanKernel& k : plan.kernels) {
    for (int p : problem.candidates[k.candidate].primitives) ++computed[p];
  }
  tally->recomputing += *std::max_element(computed.begin(), computed.end()) > 1;
  return plan;
}

TEST(BruteForce, BlpOptimumEqualsBruteForceOnRandomProblems) {
  Tally tally;
  for (int seed = 0; seed < kInstances; ++seed) {
    OrchestrationProblem problem = synthetic_problem(small_spec(seed), seed).problem;
    ASSERT_LE(problem.candidates.size(), 16u);
    std::optional<double> expected = testing::brute_force_optimum(problem);
    std::string name = "seed " + std::to_string(seed);
    std::optional<Plan> plan = compare(problem, {}, expected, name, &tally);
    compare(problem, paper_options(), expected, name + " (paper formulation)", nullptr);
    OrchestrateOptions per_input;  // one row per (column, input), CBC's preprocessing and pump
    per_input.need_sets = false;
    per_input.cbc_preprocess = true;
    per_input.feasibility_pump = true;
    compare(problem, per_input, expected, name + " (per-input rows)", nullptr);
    if (!plan) continue;
    // Every primitive here is a graph output's ancestor: the chain search is exact.
    std::optional<double> chain = testing::brute_force_optimum(problem, true);
    double no_recompute = plan->stats.no_recompute_us;
    if (chain) {
      EXPECT_NEAR(no_recompute, *chain, 1e-6 * std::max(1.0, *chain)) << name;
    } else {
      EXPECT_TRUE(std::isinf(no_recompute)) << name;
    }
  }
  // The comparison must cover feasible problems, infeasible ones, recomputation and cycles.
  EXPECT_GE(tally.feasible, 200);
  EXPECT_GT(tally.infeasible, 0);
  EXPECT_GT(tally.recomputing, 0);
  EXPECT_GT(tally.with_cycle_cuts, 0);
  std::printf("%d feasible (%d recompute a primitive, %d needed cycle cuts), %d infeasible\n",
              tally.feasible, tally.recomputing, tally.with_cycle_cuts, tally.infeasible);
}

// Kernels reading the same buffers share their dependency rows: {2}, {3} and {2, 3} all read
// {0, 1}, so two z rows and three member rows replace six per-input rows; same optimum. The
// expensive {0, 2} and {1, 3} keep the problem one part.
TEST(BruteForce, NeedSetsShareRowsWithTheSameOptimum) {
  OrchestrationProblem problem{
      .num_primitives = 4, .primitive_inputs = {{}, {}, {0, 1}, {0, 1}}, .graph_outputs = {2, 3}};
  problem.candidates = {{{0}, {0}, 1.0, "a"},        {{1}, {1}, 1.0, "b"},
                        {{2}, {2}, 1.0, "c"},        {{3}, {3}, 1.0, "d"},
                        {{2, 3}, {2, 3}, 1.5, "cd"}, {{0, 2}, {2}, 5.0, "ac"},
                        {{1, 3}, {3}, 5.0, "bd"}};
  OrchestrateOptions per_input;
  per_input.need_sets = false;
  Plan shared = orchestrate(problem);
  Plan separate = orchestrate(problem, per_input);
  // 4 buffer rows, 4 coverage rows, and 2 + 3 need-set rows or 6 per-input rows, + 2 for ac, bd
  EXPECT_EQ(shared.stats.rows, 15);
  EXPECT_EQ(separate.stats.rows, 16);
  EXPECT_DOUBLE_EQ(shared.objective_us, 3.5);
  EXPECT_DOUBLE_EQ(separate.objective_us, 3.5);
  EXPECT_EQ(testing::brute_force_optimum(problem), 3.5);
}

// Two chains a0 -> a1 -> a2 and b0 -> b1 -> b2 with a horizontal kernel {ai, bj} for every pair,
// the crossed ones (i != j) cheaper: every permutation but the identity pairs up the steps so
// that its kernels wait on each other, and a cut that names one cycle's kernels leaves CBC the
// other four. The cut over the buffers the cycle passes around forbids them together.
TEST(BruteForce, CrossedHorizontalKernelsAreCutOffTogether) {
  const int n = 3;
  OrchestrationProblem problem{.num_primitives = 2 * n};  // a_i = i, b_i = n + i
  problem.primitive_inputs.resize(2 * n);
  for (int i = 1; i < n; ++i) {
    problem.primitive_inputs[i] = {i - 1};
    problem.primitive_inputs[n + i] = {n + i - 1};
  }
  problem.graph_outputs = {n - 1, 2 * n - 1};
  for (int p = 0; p < 2 * n; ++p) problem.candidates.push_back({{p}, {p}, 10, "single"});
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      problem.candidates.push_back({{i, n + j}, {i, n + j}, i == j ? 1.5 : 1.0, "pair"});
  }
  ASSERT_LE(problem.candidates.size(), 16u);
  std::optional<double> expected = testing::brute_force_optimum(problem);
  ASSERT_TRUE(expected);
  Plan plan = compare(problem, {}, expected, "crossed chains", nullptr).value();
  EXPECT_DOUBLE_EQ(plan.objective_us, 4.5);  // the identity: no other pairing runs
  EXPECT_GE(plan.stats.cycle_cuts, 1);
  EXPECT_LE(plan.stats.rounds, 3);
  Plan paper =
      compare(problem, paper_options(), expected, "crossed chains (paper)", nullptr).value();
  EXPECT_GE(paper.stats.cycle_cuts, 1);
}

}  // namespace
}  // namespace orch
