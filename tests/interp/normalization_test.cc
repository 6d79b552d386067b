// Softmax, LogSoftmax, Hardmax, the mean/variance normalizations, LpNormalization and LRN: shape
// rules and kernels, with expected values worked out by hand from the ONNX definitions.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::error_of;
using op_test::run;
using op_test::run_all;

Tensor f64(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f64, std::move(shape), values);
}
Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}

void expect_near(const Tensor& t, const std::vector<double>& expected, double tol = 1e-12) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(t.get(i), expected[i], tol) << i;
}

TEST(Softmax, OfZeroAndLn3IsAQuarterAndThreeQuarters) {
  // e^0 / (1 + 3) = 1/4 and e^ln3 / (1 + 3) = 3/4.
  expect_near(run("Softmax", {f64({2}, {0, std::log(3.0)})}), {0.25, 0.75});
  expect_near(run("LogSoftmax", {f64({2}, {0, std::log(3.0)})}), {std::log(0.25), std::log(0.75)});
}

TEST(Softmax, AlongAxis0) {
  // Columns [0, ln3] and [1, 1].
  Tensor out = run("Softmax", {f64({2, 2}, {0, 1, std::log(3.0), 1})}, {{"axis", int64_t{0}}});
  expect_near(out, {0.25, 0.5, 0.75, 0.5});
}

TEST(Softmax, LargeInputsDoNotOverflow) {
  expect_near(run("Softmax", {f32({2}, {1000, 1000})}), {0.5, 0.5});
  expect_near(run("LogSoftmax", {f32({2}, {1000, 1000})}), {-std::log(2.0), -std::log(2.0)}, 1e-6);
}

TEST(Softmax, IntegerInputIsRejected) {
  Tensor x = Tensor::from_ints(DType::i32, {2}, std::vector<int64_t>{1, 2});
  EXPECT_EQ(error_of("Softmax", {x}), "Softmax: input must be a floating-point tensor, got i32");
}

TEST(Hardmax, FirstMaximumWins) {
  Tensor x = f32({2, 3}, {1, 3, 3, 2, 1, 0});
  expect_near(run("Hardmax", {x}), {0, 1, 0, 1, 0, 0});
  expect_near(run("Hardmax", {x}, {{"axis", int64_t{-2}}}), {0, 1, 1, 1, 0, 0});
}

TEST(LayerNormalization, NormalizesTheLastAxisWithStatistics) {
  // Rows [1, 3] (mean 2, variance 1) and [0, 4] (mean 2, variance 4) both normalize to [-1, 1].
  auto out = run_all("LayerNormalization",
                     {f32({2, 2}, {1, 3, 0, 4}), f32({2}, {2, 1}), f32({2}, {0.5, 0})},
                     {{"epsilon", 0.0f}}, 3);
  expect_near(out[0], {-1.5, 1, -1.5, 1});
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].dtype(), DType::f32);
  expect_near(out[1], {2, 2});
  expect_near(out[2], {1, 0.5});
}

TEST(LayerNormalization, Axis0WithoutBias) {
  // All four values [1, 3, 0, 4]: mean 2, variance (1 + 1 + 4 + 4) / 4 = 2.5.
  Tensor out = run("LayerNormalization", {f64({2, 2}, {1, 3, 0, 4}), f64({2}, {1, 1})},
                   {{"axis", int64_t{0}}, {"epsilon", 0.0f}});
  double s = std::sqrt(2.5);
  expect_near(out, {-1 / s, 1 / s, -2 / s, 2 / s});
}

TEST(LayerNormalization, ScaleMustBroadcastToX) {
  EXPECT_EQ(error_of("LayerNormalization", {f32({2, 2}, {1, 3, 0, 4}), f32({3}, {1, 1, 1})}),
            "LayerNormalization: shapes [3] and [2,2] do not broadcast");
}

TEST(InstanceNormalization, PerSampleAndChannel) {
  // x: N=1, C=2, 2 positions: [1, 3] and [0, 4] both normalize to [-1, 1].
  Tensor out =
      run("InstanceNormalization",
          {f64({1, 2, 2}, {1, 3, 0, 4}), f64({2}, {2, 3}), f64({2}, {1, 0})}, {{"epsilon", 0.0f}});
  expect_near(out, {-1, 3, -3, 3});
}

TEST(BatchNormalization, UsesTheGivenStatistics) {
  // x: N=2, C=2; channel 0 has mean 1, var 4; channel 1 mean 2, var 1, scale 2, bias 1.
  Tensor out = run("BatchNormalization",
                   {f64({2, 2}, {1, 2, 3, 4}), f64({2}, {1, 2}), f64({2}, {0, 1}), f64({2}, {1, 2}),
                    f64({2}, {4, 1})},
                   {{"epsilon", 0.0f}});
  expect_near(out, {0, 1, 1, 5});
}

TEST(BatchNormalization, TrainingModeUsesBatchStatistics) {
  // One channel over a batch of two: x = {1, 3} has mean 2 and population variance 1, so
  // y = (x - 2) / 1 = {-1, 1}; running mean 0 * 0.9 + 2 * 0.1 = 0.2, variance 1 * 0.9 + 1 * 0.1.
  auto out =
      run_all("BatchNormalization",
              {f64({2, 1}, {1, 3}), f64({1}, {1}), f64({1}, {0}), f64({1}, {0}), f64({1}, {1})},
              {{"training_mode", int64_t{1}}, {"epsilon", 0.0f}}, 3);
  expect_near(out[0], {-1, 1});
  expect_near(out[1], {0.2}, 1e-7);
  expect_near(out[2], {1.0}, 1e-7);
}

TEST(BatchNormalization, RunningStatisticsOnlyInTrainingMode) {
  Tensor v = f32({2}, {1, 1});
  EXPECT_EQ(error_of("BatchNormalization", {f32({1, 2}, {1, 2}), v, v, v, v}, {}, 3),
            "BatchNormalization: running_mean and running_var exist only in training mode");
}

TEST(GroupNormalization, ScaleAndBiasPerChannelOrPerGroup) {
  // Channels [1, 3, 0, 4] in 2 groups: {1, 3} and {0, 4} both normalize to [-1, 1].
  Tensor x = f64({1, 4, 1}, {1, 3, 0, 4});
  Attributes a = {{"num_groups", int64_t{2}}, {"epsilon", 0.0f}};
  expect_near(run("GroupNormalization", {x, f64({4}, {1, 2, 3, 4}), f64({4}, {0, 0, 0, 0})}, a),
              {-1, 2, -3, 4});
  expect_near(run("GroupNormalization", {x, f64({2}, {1, 2}), f64({2}, {0, 1})}, a),
              {-1, 1, -1, 3});
}

TEST(GroupNormalization, GroupsMustDivideChannels) {
  Tensor v = f32({3}, {1, 1, 1});
  EXPECT_EQ(
      error_of("GroupNormalization", {f32({1, 3}, {1, 2, 3}), v, v}, {{"num_groups", int64_t{2}}}),
      "GroupNormalization: num_groups 2 must divide the channel count 3");
}

TEST(LpNormalization, L1AndL2) {
  expect_near(run("LpNormalization", {f64({2}, {3, 4})}), {0.6, 0.8});
  expect_near(run("LpNormalization", {f64({2}, {1, -3})}, {{"p", int64_t{1}}}), {0.25, -0.75});
  EXPECT_EQ(error_of("LpNormalization", {f64({2}, {1, 1})}, {{"p", int64_t{3}}}),
            "LpNormalization: p must be 1 or 2, got 3");
}

TEST(MeanVarianceNormalization, DefaultAxesKeepChannels) {
  // [N=1, C=2, 1, 2]: channel 0 [1, 3] (std 1), channel 1 [0, 4] (std 2).
  Tensor out = run("MeanVarianceNormalization", {f64({1, 2, 1, 2}, {1, 3, 0, 4})});
  expect_near(out, {-1, 1, -1, 1}, 1e-8);
}

TEST(LRN, OddWindowIsCentredAndClippedAtTheEnds) {
  // Channels [1, 2, 3], size 3, alpha / size = 1, beta 1, bias 1: the windows {0, 1}, {0, 1, 2}
  // and {1, 2} sum squares 5, 14 and 13, so y = 1 / 6, 2 / 15 and 3 / 14.
  Tensor out = run("LRN", {f64({1, 3, 1, 1}, {1, 2, 3})},
                   {{"size", int64_t{3}}, {"alpha", 3.0f}, {"beta", 1.0f}, {"bias", 1.0f}});
  expect_near(out, {1.0 / 6, 2.0 / 15, 3.0 / 14});
}

TEST(LRN, EvenWindowReachesOneChannelFurtherUp) {
  // size 2: channels c and c + 1. Position 0 has channels [1, 2, 3] (sums 5, 13, 9), position 1
  // [0, 0, 1] (sums 0, 1, 1); alpha / size = 1, beta 0.5, default bias 1.
  Tensor out = run("LRN", {f64({1, 3, 2}, {1, 0, 2, 0, 3, 1})},
                   {{"size", int64_t{2}}, {"alpha", 2.0f}, {"beta", 0.5f}});
  expect_near(out, {1 / std::sqrt(6.0), 0, 2 / std::sqrt(14.0), 0, 3 / std::sqrt(10.0),
                    1 / std::sqrt(2.0)});
}

TEST(LRN, RejectsRankBelow3AndBadSize) {
  Tensor x = f32({1, 2, 1}, {1, 2});
  EXPECT_EQ(error_of("LRN", {f32({1, 2}, {1, 2})}, {{"size", int64_t{1}}}),
            "LRN: X must have shape [N, C, D1, ...] (rank >= 3), got [1,2]");
  EXPECT_EQ(error_of("LRN", {x}), "LRN: attribute 'size' is required");
  EXPECT_EQ(error_of("LRN", {x}, {{"size", int64_t{0}}}), "LRN: size must be positive, got 0");
}

}  // namespace
}  // namespace orch
