// The text form of orchestration problems: round trip and error messages.
#include "orchestrate/problem_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ir/error.h"
#include "orchestrate/synthetic.h"

namespace orch {
namespace {

TEST(ProblemText, RoundTripKeepsEveryFieldButLabels) {
  OrchestrationProblem problem = synthetic_problem(SyntheticSpec{}, 3).problem;
  problem.candidates[0].cost_us = std::numeric_limits<double>::infinity();
  problem.candidates[1].cost_us = 0.1 + 0.2;  // not exact in decimal: needs round-trip digits
  OrchestrationProblem back = problem_from_text(problem_to_text(problem));
  EXPECT_EQ(back.num_primitives, problem.num_primitives);
  EXPECT_EQ(back.primitive_inputs, problem.primitive_inputs);
  EXPECT_EQ(back.graph_outputs, problem.graph_outputs);
  ASSERT_EQ(back.candidates.size(), problem.candidates.size());
  EXPECT_TRUE(std::isinf(back.candidates[0].cost_us));
  for (size_t i = 0; i < problem.candidates.size(); ++i) {
    EXPECT_EQ(back.candidates[i].primitives, problem.candidates[i].primitives);
    EXPECT_EQ(back.candidates[i].outputs, problem.candidates[i].outputs);
    if (i > 0) EXPECT_EQ(back.candidates[i].cost_us, problem.candidates[i].cost_us);
  }
  EXPECT_EQ(orchestrate(back).objective_us, orchestrate(problem).objective_us);
}

TEST(ProblemText, ErrorsNameTheLine) {
  auto message = [](const std::string& text) {
    try {
      problem_from_text(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("orchestration 2\ninputs 5 0\n"),
            "orchestration text, line 2: primitive out of range");
  EXPECT_EQ(message("orchestration 1\ncandidate fast 1 0 1 0\n"),
            "orchestration text, line 2: 'fast' is not a cost");
  EXPECT_EQ(message("orchestration 1\noutputs 2 0\n"),
            "orchestration text, line 2: expected 2 ids");
  EXPECT_EQ(message("orchestration 1\nkernel 0\n"),
            "orchestration text, line 2: unknown entry 'kernel'");
}

}  // namespace
}  // namespace orch
