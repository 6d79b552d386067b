// `orch candidates` as a user meets it: the table's totals, manual cuts, errors, the state-cap
// note. Skipped when the orch binary has not been built yet.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../common/orch_cli.h"

namespace orch {
namespace {

using cli_test::Outcome;

Outcome orch_candidates(const std::string& args) {
  return cli_test::orch_cli("candidates " + std::string(ORCH_SOURCE_DIR) +
                            "/examples/tiny_mlp.orch.txt --no-fission " + args);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CandidatesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(ORCH_BINARY)) GTEST_SKIP() << "orch not built";
  }
};

// tiny_mlp: MatMul, Add, Relu, MatMul, Add, Softmax in a chain: 7 states, 21 convex subgraphs.
TEST_F(CandidatesCli, OperatorsStandAloneUnlessFused) {
  Outcome r = orch_candidates("");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "primitives: 6 (Operator 6)")) << r.output;
  EXPECT_TRUE(contains(r.output, "operator with others: 15")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "total: 1 subgraphs, 7 states, 21 convex subgraphs, 6 candidates "
                       "kept, 15 rejected"))
      << r.output;
  // Fused operators pass the shape rules; no backend generates a fused ONNX operator.
  r = orch_candidates("--fuse-operators --no-backend-check");
  EXPECT_TRUE(contains(r.output, "21 convex subgraphs, 21 candidates kept, 0 rejected"))
      << r.output;
  r = orch_candidates("--fuse-operators");
  EXPECT_TRUE(contains(r.output, "6 candidates kept, 15 rejected")) << r.output;
  EXPECT_TRUE(contains(r.output, "not generable: 'MatMul' is not a primitive")) << r.output;
}

TEST_F(CandidatesCli, ManualCutSplitsTheChain) {
  Outcome r = orch_candidates("--cut a --fuse-operators");  // after the Relu
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 (manual)")) << r.output;
  // Chains of 3 and 3: 4 + 4 states, 6 + 6 candidates.
  EXPECT_TRUE(contains(r.output, "total: 2 subgraphs, 8 states, 12 convex subgraphs")) << r.output;
}

TEST_F(CandidatesCli, BadCutsAreErrors) {
  Outcome r = orch_candidates("--cut nosuch");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "orch: error: --cut nosuch: no such value")) << r.output;
  r = orch_candidates("--cut x");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output,
                       "orch: error: --cut x: a graph input or constant; cut at a value "
                       "a node computes"))
      << r.output;
}

TEST_F(CandidatesCli, StateCapIsReported) {
  Outcome r = orch_candidates("--max-states 3 --no-auto-cut");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "note: state cap reached in subgraph of vertices [0, 6) (6 "
                       "vertices): more than 3 execution states"))
      << r.output;
}

TEST_F(CandidatesCli, EnumeratesThePrimitiveGraphByDefault) {
  Outcome r = cli_test::orch_cli("candidates " + std::string(ORCH_SOURCE_DIR) +
                                 "/examples/tiny_mlp.orch.txt");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Two MatMuls, the biases' broadcasts and adds, the Relu and the fissioned Softmax; the
  // rewrite stage folded the biases' reshapes and the second bias's small broadcast.
  EXPECT_TRUE(contains(r.output, "(Elementwise 6, Reduce 2, Broadcast 3, Linear 2)")) << r.output;
  // A kernel holding both MatMuls is one oneDNN call too many.
  EXPECT_TRUE(contains(r.output, "more than 1 Linear")) << r.output;
}

}  // namespace
}  // namespace orch
