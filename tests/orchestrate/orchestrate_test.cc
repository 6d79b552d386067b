// Hand-built orchestration problems: recomputation (Korch Fig. 4), cycles, plan extraction,
// infeasible problems, the time limit and the plan text.
#include "orchestrate/orchestrate.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "brute_force.h"
#include "ir/error.h"
#include "orchestrate/synthetic.h"

namespace orch {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Candidate candidate(std::vector<int> primitives, std::vector<int> outputs, double cost,
                    std::string label) {
  return Candidate{std::move(primitives), std::move(outputs), cost, std::move(label)};
}

std::string error_of(const OrchestrationProblem& problem) {
  try {
    orchestrate(problem);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

int kernels_computing(const OrchestrationProblem& problem, const Plan& plan, int primitive) {
  int count = 0;
  for (const PlanKernel& k : plan.kernels) {
    const std::vector<int>& prims = problem.candidates[k.candidate].primitives;
    count += std::count(prims.begin(), prims.end(), primitive);
  }
  return count;
}

// Korch Fig. 4: a layout primitive p0 (a transpose) feeds three linear primitives p1..p3 (the
// attention projections), all graph outputs; a kernel holds at most one linear primitive.
// Kernel latency = launch 5 + compute (transpose t, matmul 10) + 2 per input read + write
// cost (2 for a matmul output, 4 for the transposed tensor).
OrchestrationProblem attention_projections(double transpose_compute) {
  const double t = transpose_compute;
  OrchestrationProblem problem;
  problem.num_primitives = 4;
  problem.primitive_inputs = {{}, {0}, {0}, {0}};
  problem.graph_outputs = {1, 2, 3};
  problem.candidates.push_back(candidate({0}, {0}, 5 + t + 2 + 4, "transpose"));
  for (int k = 1; k <= 3; ++k) {
    std::string mm = "matmul" + std::to_string(k);
    problem.candidates.push_back(candidate({k}, {k}, 5 + 10 + 2 + 2, mm));
    problem.candidates.push_back(candidate({0, k}, {k}, 5 + t + 10 + 2 + 2, "transpose+" + mm));
    problem.candidates.push_back(
        candidate({0, k}, {0, k}, 5 + t + 10 + 2 + 2 + 4, "transpose+" + mm + ">both"));
  }
  return problem;
}

TEST(Orchestrate, RecomputationPaysKorchFigure4) {
  // Separate kernels: 12 + 3 * 19 = 69; transpose fused into each matmul: 3 * 20 = 60.
  OrchestrationProblem problem = attention_projections(1);
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_EQ(plan.status, SolveStatus::Optimal);
  EXPECT_DOUBLE_EQ(plan.objective_us, 60);
  EXPECT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(kernels_computing(problem, plan, 0), 3);  // p0 executes in three kernels
  // Computing p0 once costs at least 62: one matmul kernel writes it for the other two.
  EXPECT_DOUBLE_EQ(plan.stats.no_recompute_us, 62);
  EXPECT_DOUBLE_EQ(*testing::brute_force_optimum(problem), 60);
}

TEST(Orchestrate, NoRecomputationWhenItDoesNotPay) {
  // An expensive transpose (8): fused into every matmul 3 * 27 = 81, separate kernels
  // 19 + 3 * 19 = 76, fused into one matmul that also writes it 31 + 2 * 19 = 69.
  OrchestrationProblem problem = attention_projections(8);
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_DOUBLE_EQ(plan.objective_us, 69);
  EXPECT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(kernels_computing(problem, plan, 0), 1);
  EXPECT_DOUBLE_EQ(plan.stats.no_recompute_us, 69);
  ASSERT_EQ(plan.kernels[0].outputs.size(), 2u);  // writes p0 for the other two matmuls
  EXPECT_EQ(plan.kernels[0].outputs[0], 0);
  EXPECT_DOUBLE_EQ(*testing::brute_force_optimum(problem), 69);
}

// a1 -> b1 and b2 -> a2: {a1, a2} and {b1, b2} are both convex, and each needs a value only
// the other writes. Together they satisfy the paper's constraints at cost 2 but cannot run.
TEST(Orchestrate, CyclicSolutionsAreCutOff) {
  OrchestrationProblem problem;
  problem.num_primitives = 4;  // a1 = 0, a2 = 1, b1 = 2, b2 = 3
  problem.primitive_inputs = {{}, {3}, {0}, {}};
  problem.graph_outputs = {1, 2};
  problem.candidates = {candidate({0, 1}, {0, 1}, 1, "a"), candidate({2, 3}, {2, 3}, 1, "b"),
                        candidate({0}, {0}, 10, "a1"),     candidate({1}, {1}, 10, "a2"),
                        candidate({2}, {2}, 10, "b1"),     candidate({3}, {3}, 10, "b2")};
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_EQ(plan.status, SolveStatus::Optimal);
  EXPECT_DOUBLE_EQ(plan.objective_us, 12);  // one singleton breaks the cycle
  EXPECT_GE(plan.stats.cycle_cuts, 1);
  EXPECT_GE(plan.stats.rounds, 2);
  EXPECT_DOUBLE_EQ(*testing::brute_force_optimum(problem), 12);
}

// Two subgraphs as kernel identification makes them (no candidate spans both): 0 -> 1 and
// 2 -> 3 with 1 -> 2. Each part is solved alone: the value 1 that the second part reads is an
// output of the first, and each part fuses its chain.
TEST(Orchestrate, IndependentPartsAreSolvedAloneWithTheirCrossingValuesWritten) {
  OrchestrationProblem problem;
  problem.num_primitives = 4;
  problem.primitive_inputs = {{}, {0}, {1}, {2}};
  problem.graph_outputs = {3};
  problem.candidates = {candidate({0}, {0}, 4, "a0"),     candidate({1}, {1}, 4, "a1"),
                        candidate({0, 1}, {1}, 5, "a01"), candidate({2}, {2}, 4, "b2"),
                        candidate({3}, {3}, 4, "b3"),     candidate({2, 3}, {3}, 5, "b23")};
  Plan plan = orchestrate(problem);
  EXPECT_EQ(plan.stats.parts, 2);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_DOUBLE_EQ(plan.objective_us, 10);
  EXPECT_DOUBLE_EQ(plan.objective_us, *testing::brute_force_optimum(problem));
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(problem.candidates[plan.kernels[0].candidate].label, "a01");
  EXPECT_EQ(problem.candidates[plan.kernels[1].candidate].label, "b23");
}

// A candidate spanning both chains joins them into one part.
TEST(Orchestrate, ACandidateAcrossChainsKeepsOnePart) {
  OrchestrationProblem problem;
  problem.num_primitives = 3;
  problem.primitive_inputs = {{}, {0}, {1}};
  problem.graph_outputs = {2};
  problem.candidates = {candidate({0}, {0}, 4, "a"), candidate({1}, {1}, 4, "b"),
                        candidate({2}, {2}, 4, "c"), candidate({1, 2}, {2}, 5, "bc")};
  Plan plan = orchestrate(problem);
  EXPECT_EQ(plan.stats.parts, 2);  // {0} and {1, 2}
  EXPECT_DOUBLE_EQ(plan.objective_us, 9);
}

TEST(Orchestrate, UnreadOutputsAreDroppedAndLifetimesRecorded) {
  // p0 -> p1, p0 -> p2. Only "k1" computes p1, and it also writes p0; fusing p0 into p2's
  // kernel (3) is cheaper than reading k1's p0 from {p2} (4), so k1's p0 goes unread.
  OrchestrationProblem problem;
  problem.num_primitives = 3;
  problem.primitive_inputs = {{}, {0}, {0}};
  problem.graph_outputs = {1, 2};
  problem.candidates = {candidate({0, 1}, {0, 1}, 3, "k1"), candidate({0, 2}, {2}, 3, "k2"),
                        candidate({0}, {0}, 10, "p0"), candidate({2}, {2}, 4, "p2")};
  Plan plan = orchestrate(problem);
  ASSERT_EQ(check_plan(problem, plan), "");
  EXPECT_DOUBLE_EQ(plan.objective_us, 6);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].candidate, 0);
  EXPECT_EQ(plan.kernels[0].outputs, std::vector<int>{1});
  EXPECT_EQ(plan.kernels[0].dropped_outputs, std::vector<int>{0});
  ASSERT_EQ(plan.buffers.size(), 2u);
  EXPECT_EQ(plan.buffers[0].primitive, 1);
  EXPECT_TRUE(plan.buffers[0].graph_output);
}

TEST(Orchestrate, LifetimesOfAChain) {
  OrchestrationProblem problem;
  problem.num_primitives = 3;
  problem.primitive_inputs = {{}, {0}, {1}};
  problem.graph_outputs = {2};
  problem.candidates = {candidate({2}, {2}, 1, "c"), candidate({1}, {1}, 1, "b"),
                        candidate({0}, {0}, 1, "a")};
  Plan plan = orchestrate(problem);
  ASSERT_EQ(check_plan(problem, plan), "");
  ASSERT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(plan.kernels[0].candidate, 2);  // dependency order, not candidate order
  EXPECT_EQ(plan.kernels[2].inputs, std::vector<int>{1});
  ASSERT_EQ(plan.buffers.size(), 3u);
  EXPECT_EQ((std::vector<int>{plan.buffers[0].primitive, plan.buffers[0].producer,
                              plan.buffers[0].last_use}),
            (std::vector<int>{0, 0, 1}));
  EXPECT_EQ((std::vector<int>{plan.buffers[2].primitive, plan.buffers[2].producer,
                              plan.buffers[2].last_use}),
            (std::vector<int>{2, 2, 2}));
  EXPECT_TRUE(plan.buffers[2].graph_output);
  EXPECT_FALSE(plan.buffers[0].graph_output);
}

TEST(Orchestrate, UnmeasuredCandidatesAreLeftOut) {
  OrchestrationProblem problem;
  problem.num_primitives = 2;
  problem.primitive_inputs = {{}, {0}};
  problem.graph_outputs = {1};
  const double unmeasured = std::numeric_limits<double>::infinity();
  problem.candidates = {candidate({0, 1}, {1}, unmeasured, "fused"), candidate({0}, {0}, 2, "a"),
                        candidate({1}, {1}, 2, "b")};
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_DOUBLE_EQ(plan.objective_us, 4);
  EXPECT_EQ(plan.stats.unmeasured, 1);
  EXPECT_EQ(plan.stats.columns, 2);
}

TEST(Orchestrate, DominatedCandidatesArePruned) {
  OrchestrationProblem problem;
  problem.num_primitives = 2;
  problem.primitive_inputs = {{}, {0}};
  problem.graph_outputs = {0, 1};
  // "both" writes a superset of "only1" for no more cost and the same (no) inputs.
  problem.candidates = {candidate({0, 1}, {0, 1}, 3, "both"), candidate({0, 1}, {1}, 3, "only1"),
                        candidate({0}, {0}, 1, "a"), candidate({1}, {1}, 1, "b")};
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_DOUBLE_EQ(plan.objective_us, 2);
  EXPECT_EQ(plan.stats.dominated, 1);
}

TEST(Orchestrate, InfeasibleWhenNoCandidateWritesAnOutput) {
  OrchestrationProblem problem;
  problem.num_primitives = 2;
  problem.primitive_inputs = {{}, {0}};
  problem.graph_outputs = {1};
  problem.candidates = {candidate({0}, {0}, 1, "a"),
                        candidate({1}, {1}, std::numeric_limits<double>::infinity(), "b")};
  EXPECT_EQ(error_of(problem),
            "orchestrate: infeasible: no measured candidate writes graph output primitive 1");
}

TEST(Orchestrate, InfeasibleWhenAnInputCannotBeComputed) {
  OrchestrationProblem problem;
  problem.num_primitives = 3;
  problem.primitive_inputs = {{}, {0}, {1}};
  problem.graph_outputs = {2};
  problem.candidates = {candidate({0}, {0}, 1, "a"), candidate({2}, {2}, 1, "c")};
  EXPECT_EQ(error_of(problem),
            "orchestrate: infeasible: graph output primitive 2 cannot be computed: each of its 1 "
            "measured writers needs an input no plan computes (candidate 1 (c) needs primitive "
            "1); it starts at primitive 1, which no measured candidate writes");
}

// The message names the root too: the primitive, up the chain, that no measured candidate
// writes (here 1, two primitives above the output's missing input).
TEST(Orchestrate, InfeasibleNamesThePrimitiveNoCandidateWrites) {
  OrchestrationProblem problem;
  problem.num_primitives = 5;
  problem.primitive_inputs = {{}, {0}, {1}, {2}, {3}};
  problem.graph_outputs = {4};
  problem.candidates = {candidate({0}, {0}, 1, "a"), candidate({2}, {2}, 1, "c"),
                        candidate({3}, {3}, 1, "d"), candidate({4}, {4}, 1, "e")};
  EXPECT_EQ(error_of(problem),
            "orchestrate: infeasible: graph output primitive 4 cannot be computed: each of its 1 "
            "measured writers needs an input no plan computes (candidate 3 (e) needs primitive "
            "3); it starts at primitive 1, which no measured candidate writes");
}

TEST(Orchestrate, InvalidProblemsAreRejected) {
  OrchestrationProblem base;
  base.num_primitives = 3;
  base.primitive_inputs = {{}, {0}, {1}};
  base.graph_outputs = {2};
  base.candidates = {candidate({0}, {0}, 1, "a"), candidate({1}, {1}, 1, "b"),
                     candidate({2}, {2}, 1, "c")};

  OrchestrationProblem p = base;
  p.candidates.push_back(candidate({0, 2}, {2}, 1, "gap"));
  EXPECT_EQ(error_of(p),
            "orchestrate: candidate 3 (gap) is not convex: primitive 1 lies on a path between "
            "two of its primitives");
  p = base;
  p.candidates.push_back(candidate({0, 1}, {0, 1}, 1, "ab"));
  EXPECT_EQ(error_of(p),
            "orchestrate: candidate 3 (ab): output 0 is neither read outside the kernel nor a "
            "graph output");
  p = base;
  p.candidates[1].cost_us = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of(p), "orchestrate: candidate 1 (b): cost nan is not a latency");
  p = base;
  p.candidates[1].cost_us = -1;
  EXPECT_EQ(error_of(p), "orchestrate: candidate 1 (b): cost -1 is not a latency");
  p = base;
  p.candidates[0].primitives = {1, 0};
  EXPECT_EQ(error_of(p),
            "orchestrate: candidate 0 (a): primitives and outputs must be sorted without "
            "duplicates");
  p = base;
  p.primitive_inputs[0] = {2};
  EXPECT_EQ(error_of(p),
            "orchestrate: the primitive graph has a cycle (primitive 0 depends on itself)");
  p = base;
  p.graph_outputs = {3};
  EXPECT_EQ(error_of(p), "orchestrate: graph output 3 is not a primitive");
}

// A model whose outputs all folded to constants at import has no primitives: the empty plan.
TEST(Orchestrate, ProblemWithoutPrimitivesHasTheEmptyPlan) {
  OrchestrationProblem empty;
  Plan plan = orchestrate(empty);
  EXPECT_TRUE(plan.kernels.empty());
  EXPECT_EQ(plan.objective_us, 0);
  EXPECT_EQ(plan.status, SolveStatus::Optimal);
  EXPECT_EQ(check_plan(empty, plan), "");
}

SyntheticProblem large_problem() {
  SyntheticSpec spec;
  spec.layers = 12;
  spec.min_width = 2;
  spec.max_width = 4;
  spec.edge_probability = 0.5;
  spec.max_kernel_size = 8;
  spec.max_states = 2000;
  spec.max_candidates = 3000;
  return synthetic_problem(spec, 1);  // 39 primitives, 723 states
}

void expect_stopped_by_time_limit(const OrchestrationProblem& problem, const Plan& plan,
                                  const std::string& note) {
  EXPECT_EQ(plan.status, SolveStatus::TimeLimit);
  EXPECT_EQ(check_plan(problem, plan), "");
  EXPECT_TRUE(contains(plan.note, note)) << plan.note;
  EXPECT_LE(plan.lower_bound_us, plan.objective_us);
  EXPECT_LE(plan.objective_us, plan.stats.no_recompute_us + 1e-9);  // never worse than a start
  EXPECT_GE(plan.gap, 0);
  EXPECT_LE(plan.gap, 1);
  std::string text = format_plan(problem, plan);
  EXPECT_TRUE(contains(text, "not proven optimal")) << text;
}

TEST(Orchestrate, TimeLimitReturnsTheBestPlanWithItsGap) {
  OrchestrationProblem problem = large_problem().problem;
  OrchestrateOptions options;
  options.time_limit_s = 0.001;  // spent before CBC starts: the better starting plan
  Plan before = orchestrate(problem, options);
  expect_stopped_by_time_limit(problem, before, "time limit reached before CBC started");
  EXPECT_DOUBLE_EQ(before.lower_bound_us, 0);

  // Without coverage rows CBC needs minutes here: the limit stops branch and bound.
  options.time_limit_s = 1;
  options.coverage_rows = false;
  Plan stopped = orchestrate(problem, options);
  expect_stopped_by_time_limit(problem, stopped, "time limit reached: the plan is the best");
  EXPECT_GT(stopped.lower_bound_us, 0);  // the root LP bound
  EXPECT_GT(stopped.gap, 0);

  Plan solved = orchestrate(problem);  // no better than the bound, no worse than the plans
  EXPECT_EQ(solved.status, SolveStatus::Optimal);
  EXPECT_GE(solved.objective_us, stopped.lower_bound_us - 1e-6);
  EXPECT_LE(solved.objective_us, stopped.objective_us + 1e-6);
}

TEST(Orchestrate, TimeLimitMustBePositive) {
  OrchestrateOptions options;
  options.time_limit_s = 0;
  EXPECT_THROW(orchestrate(attention_projections(1), options), Error);
}

TEST(Orchestrate, FormatPlanListsKernelsCostsAndObjective) {
  OrchestrationProblem problem = attention_projections(1);
  std::string text = format_plan(problem, orchestrate(problem));
  EXPECT_TRUE(contains(text, "plan: 3 kernels, 60.00 us, optimal")) << text;
  EXPECT_TRUE(contains(text, "transpose+matmul1")) << text;
  EXPECT_TRUE(contains(text, "20.00")) << text;
  EXPECT_TRUE(contains(text, "cycle cuts")) << text;
}

TEST(CheckPlan, FindsBrokenPlans) {
  OrchestrationProblem problem;
  problem.num_primitives = 3;
  problem.primitive_inputs = {{}, {0}, {1}};
  problem.graph_outputs = {2};
  problem.candidates = {candidate({0}, {0}, 1, "a"), candidate({1}, {1}, 1, "b"),
                        candidate({2}, {2}, 1, "c")};
  Plan plan = orchestrate(problem);
  ASSERT_EQ(check_plan(problem, plan), "");

  Plan swapped = plan;
  std::swap(swapped.kernels[0], swapped.kernels[1]);
  EXPECT_EQ(check_plan(problem, swapped),
            "kernel 0 (candidate 1 (b)) reads primitive 0 before any kernel writes it");
  Plan truncated = plan;
  truncated.kernels.pop_back();
  EXPECT_EQ(check_plan(problem, truncated), "no kernel writes graph output primitive 2");
  Plan wrong_cost = plan;
  wrong_cost.objective_us = 2;
  EXPECT_EQ(check_plan(problem, wrong_cost), "objective 2 us, kernels sum to 3 us");
  Plan wrong_lifetime = plan;
  wrong_lifetime.buffers[0].last_use = 2;
  std::string problem_found = check_plan(problem, wrong_lifetime);
  EXPECT_TRUE(contains(problem_found, "lifetime of primitive 0")) << problem_found;
}

}  // namespace
}  // namespace orch
