// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: weights, ignore_index, each reduction,
// an input with a spatial dim, and a target outside the classes, by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

Attributes reduction(const char* r) {
  return {{"reduction", std::string(r)}};
}

// Log-probabilities of 2 samples over 3 classes, and class weights.
Tensor scores() {
  return f32({2, 3}, {-1, -2, -3, -0.5, -1.5, -2.5});
}
Tensor weights() {
  return f32({3}, {1, 2, 3});
}

TEST(NegativeLogLikelihoodLoss, WeightedMeanDividesByTheSummedWeights) {
  // Targets 2 and 0: (3 * 3 + 0.5 * 1) / (3 + 1).
  Tensor loss =
      run("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {2, 0}), weights()});
  EXPECT_EQ(loss.shape(), Shape{});
  EXPECT_EQ(loss.to_doubles(), (Doubles{2.375}));
  EXPECT_EQ(
      run("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {2, 0})}, reduction("sum"))
          .to_doubles(),
      (Doubles{3.5}));
}

TEST(NegativeLogLikelihoodLoss, IgnoredTargetsAddNoLossAndNoWeight) {
  Attributes attrs = {{"ignore_index", int64_t{1}}};
  // Target 1 is ignored: 3 * 3 / 3.
  Tensor targets = ints(DType::i32, {2}, {2, 1});
  EXPECT_EQ(run("NegativeLogLikelihoodLoss", {scores(), targets, weights()}, attrs).to_doubles(),
            (Doubles{3}));
  // A negative ignore_index may sit outside [0, C); without weights mean counts targets.
  attrs = {{"ignore_index", int64_t{-1}}};
  EXPECT_EQ(run("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {-1, 0})}, attrs)
                .to_doubles(),
            (Doubles{0.5}));
  // Every target ignored: mean is 0 / 0, NaN as in the ONNX reference.
  Tensor loss =
      run("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {-1, -1})}, attrs);
  EXPECT_TRUE(std::isnan(loss.get(0)));
}

TEST(NegativeLogLikelihoodLoss, ReductionNoneKeepsTheTargetShape) {
  Tensor loss = run("NegativeLogLikelihoodLoss",
                    {scores(), ints(DType::i64, {2}, {1, 2}), weights()}, reduction("none"));
  EXPECT_EQ(loss.to_doubles(), (Doubles{4, 7.5}));
  // [N, C, d1] = [1, 2, 2]: targets [[1, 0]] pick (c1, d0) = -3 and (c0, d1) = -2.
  loss =
      run("NegativeLogLikelihoodLoss",
          {f32({1, 2, 2}, {-1, -2, -3, -4}), ints(DType::i64, {1, 2}, {1, 0})}, reduction("none"));
  EXPECT_EQ(loss.shape(), (Shape{1, 2}));
  EXPECT_EQ(loss.to_doubles(), (Doubles{3, 2}));
}

TEST(NegativeLogLikelihoodLoss, RejectsTargetsOutsideTheClassesAndBadShapes) {
  EXPECT_NE(error_of("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {0, 3})})
                .find("target 3 at target[1] is not a class in [0, 3) nor the ignore_index"),
            std::string::npos);
  EXPECT_NE(error_of("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {3}, {0, 0, 0})})
                .find("the target must be [2] for the input [2,3], got [3]"),
            std::string::npos);
  EXPECT_NE(error_of("NegativeLogLikelihoodLoss", {scores(), ints(DType::i64, {2}, {0, 0})},
                     reduction("max"))
                .find("reduction 'max' is not one of none, sum, mean"),
            std::string::npos);
}

// Rows [0, 0] and [0, ln 3]: log_softmax is [-ln 2, -ln 2] and [-ln 4, -ln (4 / 3)].
TEST(SoftmaxCrossEntropyLoss, LogSoftmaxThenNegativeLogLikelihood) {
  Tensor x = f32({2, 2}, {0, 0, 0, std::log(3.0)});
  Tensor targets = ints(DType::i64, {2}, {0, 1});
  std::vector<Tensor> out = run_all("SoftmaxCrossEntropyLoss", {x, targets}, {}, 2);
  EXPECT_NEAR(out[0].get(0), (std::log(2.0) + std::log(4.0 / 3)) / 2, 1e-6);
  Doubles log_prob = out[1].to_doubles();
  Doubles expected = {-std::log(2.0), -std::log(2.0), -std::log(4.0), -std::log(4.0 / 3)};
  ASSERT_EQ(out[1].shape(), (Shape{2, 2}));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(log_prob[i], expected[i], 1e-6);
  Tensor loss = run("SoftmaxCrossEntropyLoss", {x, targets}, reduction("none"));
  EXPECT_NEAR(loss.get(0), std::log(2.0), 1e-6);
  EXPECT_NEAR(loss.get(1), std::log(4.0 / 3), 1e-6);
}

}  // namespace
}  // namespace orch::op_test
