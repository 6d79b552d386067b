// The hand-off from kernel identification to orchestration.
#include <gtest/gtest.h>

#include "../candidates/dag_util.h"
#include "ir/error.h"
#include "orchestrate/from_candidates.h"

namespace orch {
namespace {

using testing::make_dag;

TEST(OrchestrationProblem, CarriesTheDagAndCostedCandidates) {
  Dag dag = make_dag(3, {{0, 1}, {1, 2}});
  KernelIdentification kernels = identify_kernels(dag, {});
  std::vector<Candidate> candidates = global_candidates(dag, kernels);
  ASSERT_EQ(candidates.size(), 6u);
  // Fusing is cheaper: one launch per kernel plus a little per primitive.
  std::vector<double> costs;
  for (const Candidate& c : candidates)
    costs.push_back(10.0 + static_cast<double>(c.primitives.size()));
  OrchestrationProblem problem = orchestration_problem(dag, kernels, costs);
  EXPECT_EQ(problem.num_primitives, 3);
  EXPECT_EQ(problem.primitive_inputs, dag.preds);
  EXPECT_EQ(problem.graph_outputs, std::vector<int>{2});
  Plan plan = orchestrate(problem);
  EXPECT_EQ(check_plan(problem, plan), "");
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(problem.candidates[plan.kernels[0].candidate].label, "v0 + v1 + v2");
  EXPECT_DOUBLE_EQ(plan.objective_us, 13.0);
}

TEST(OrchestrationProblem, CostCountMustMatch) {
  Dag dag = make_dag(1, {});
  KernelIdentification kernels = identify_kernels(dag, {});
  try {
    orchestration_problem(dag, kernels, std::vector<double>{});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "orchestration problem: 0 costs for 1 candidates");
  }
}

}  // namespace
}  // namespace orch
