// A cyclic solution made runnable (orchestrate_detail::repaired_plan),
// and the cut against it (cycle_cuts).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {
namespace {

// a1 -> b1 and b2 -> a2 (a1 = 0, a2 = 1, b1 = 2, b2 = 3): the fused {a1, a2} and {b1, b2} wait
// on each other; the four singletons run in any order.
OrchestrationProblem crossed_chains() {
  OrchestrationProblem problem;
  problem.num_primitives = 4;
  problem.primitive_inputs = {{}, {3}, {0}, {}};
  problem.graph_outputs = {1, 2};
  problem.candidates = {{{0, 1}, {0, 1}, 1, "a"}, {{2, 3}, {2, 3}, 1, "b"}, {{0}, {0}, 10, "a1"},
                        {{1}, {1}, 10, "a2"},     {{2}, {2}, 10, "b1"},     {{3}, {3}, 10, "b2"}};
  return problem;
}

std::vector<std::string> labels(const OrchestrationProblem& problem, const Columns& columns,
                                const std::vector<int>& chosen) {
  std::vector<std::string> out;
  for (int k : chosen) out.push_back(problem.candidates[columns.candidate[k]].label);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RepairedPlan, KeepsTheCyclicSolutionsKernelsThatRunWithOneSingletonToBreakTheCycle) {
  OrchestrationProblem problem = crossed_chains();
  OrchestrateStats stats;
  Columns columns = build_columns(problem, false, stats);
  auto column = [&](int candidate) { return columns.column_of_candidate[candidate]; };
  std::vector<int> cyclic = {column(0), column(1)};
  ASSERT_FALSE(replay(columns, cyclic).complete(columns));
  std::vector<int> incumbent = {column(2), column(3), column(4), column(5)};
  ASSERT_TRUE(replay(columns, incumbent).complete(columns));

  std::vector<int> repaired = repaired_plan(columns, cyclic, incumbent);
  EXPECT_TRUE(replay(columns, repaired).complete(columns));
  EXPECT_DOUBLE_EQ(total_cost(columns, repaired), 12);  // the optimum, against 40
  EXPECT_EQ(labels(problem, columns, repaired), (std::vector<std::string>{"a", "b", "b2"}));
}

// The cyclic {a, b} repaired with the four singletons as the incumbent.
struct Repair {
  bool runs = false;
  double cost = 0;
  std::vector<std::string> labels;
};

Repair repair_crossed(const OrchestrationProblem& problem) {
  OrchestrateStats stats;
  Columns columns = build_columns(problem, false, stats);
  auto column = [&](int candidate) { return columns.column_of_candidate[candidate]; };
  std::vector<int> incumbent = {column(2), column(3), column(4), column(5)};
  std::vector<int> repaired = repaired_plan(columns, {column(0), column(1)}, incumbent);
  return {replay(columns, repaired).complete(columns), total_cost(columns, repaired),
          labels(problem, columns, repaired)};
}

TEST(RepairedPlan, IsNeverWorseThanTheIncumbentWhenTheSolutionHelpsNothing) {
  OrchestrationProblem problem = crossed_chains();
  problem.candidates[0].cost_us = 100;  // the fused kernels now cost more than the singletons
  problem.candidates[1].cost_us = 100;
  Repair repair = repair_crossed(problem);
  EXPECT_TRUE(repair.runs);
  EXPECT_DOUBLE_EQ(repair.cost, 40);
}

// A cheap way to write b2 that neither the solution nor the incumbent uses: the greedy plan with
// the solution's kernels for free breaks the cycle with it.
TEST(RepairedPlan, BreaksTheCycleWithTheCheapestColumnOutsideBothPlans) {
  OrchestrationProblem problem = crossed_chains();
  problem.candidates.push_back({{3}, {3}, 2, "cheap b2"});
  Repair repair = repair_crossed(problem);
  EXPECT_TRUE(repair.runs);
  EXPECT_DOUBLE_EQ(repair.cost, 4);  // with the incumbent's b2: 12
  EXPECT_EQ(repair.labels, (std::vector<std::string>{"a", "b", "cheap b2"}));
}

// {a, b} passes a1 (buffer 0) and b2 (buffer 3) around: the cut is over those two buffers. Every
// column reading one of them needs a1 or b2, the only columns that write one and read neither.
TEST(CycleCuts, CoverTheBuffersTheCycleWaitsOn) {
  OrchestrationProblem problem = crossed_chains();
  OrchestrateStats stats;
  Columns columns = build_columns(problem, false, stats);
  auto column = [&](int candidate) { return columns.column_of_candidate[candidate]; };
  Replay stuck = replay(columns, {column(0), column(1)});
  ASSERT_EQ(stuck.stuck.size(), 2u);

  std::vector<CycleCut> cuts = cycle_cuts(columns, stuck);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_EQ(cuts[0].buffers, (std::vector<int>{0, 3}));
  EXPECT_EQ(labels(problem, columns, cuts[0].readers),
            (std::vector<std::string>{"a", "a2", "b", "b1"}));
  EXPECT_EQ(labels(problem, columns, cuts[0].first_writers),
            (std::vector<std::string>{"a1", "b2"}));
}

}  // namespace
}  // namespace orch::orchestrate_detail
