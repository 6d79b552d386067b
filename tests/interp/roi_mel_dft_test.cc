// RoiAlign, MelWeightMatrix and DFT on small inputs checked by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

// X[y][x] = 4y + x is linear, so every bilinear sample is exact: 4y + x at its coordinates.
Tensor ramp_4x4() {
  Doubles v(16);
  for (int i = 0; i < 16; ++i) v[i] = i;
  return f32({1, 1, 4, 4}, v);
}

TEST(RoiAlign, AveragesBilinearSamplesPerBin) {
  Tensor rois = f32({1, 4}, {0, 0, 4, 4});
  Tensor batch = ints(DType::i64, {1}, {0});
  Attributes attrs = {
      {"output_height", int64_t{2}}, {"output_width", int64_t{2}}, {"sampling_ratio", int64_t{1}}};
  // half_pixel: the region is [-0.5, 3.5) on both axes, bins 2 wide, sampled at their centres
  // 0.5 and 2.5.
  Tensor y = run("RoiAlign", {ramp_4x4(), rois, batch}, attrs);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_near(y, {2.5, 4.5, 10.5, 12.5});
  // output_half_pixel: samples at 1 and 3; the last row and column read pixel 3 alone.
  attrs["coordinate_transformation_mode"] = std::string("output_half_pixel");
  expect_near(run("RoiAlign", {ramp_4x4(), rois, batch}, attrs), {5, 7, 13, 15});
  // Adaptive sampling: one 4 x 4 bin gets a 4 x 4 grid, sampled at 0, 1, 2 and 3 on each axis,
  // whose coordinates average 1.5.
  expect_near(run("RoiAlign", {ramp_4x4(), rois, batch}), {4 * 1.5 + 1.5});
}

TEST(RoiAlign, MaxTakesTheLargestWeightedTerm) {
  // One sample at (0.5, 0.5) of an all-ones plane: each neighbour weighs 0.25, and max mode keeps
  // 0.25 (the reference's largest weighted term), not the interpolated 1.
  Tensor y =
      run("RoiAlign",
          {f32({1, 1, 2, 2}, {1, 1, 1, 1}), f32({1, 4}, {0, 0, 2, 2}), ints(DType::i64, {1}, {0})},
          {{"mode", std::string("max")}, {"sampling_ratio", int64_t{1}}});
  expect_near(y, {0.25});
}

TEST(RoiAlign, RejectsBadRoisAndBatchIndices) {
  EXPECT_NE(error_of("RoiAlign", {ramp_4x4(), f32({1, 3}, {0, 0, 1}), ints(DType::i64, {1}, {0})})
                .find("RoiAlign rois must be [num_rois, 4], got [1,3]"),
            std::string::npos);
  EXPECT_NE(
      error_of("RoiAlign", {ramp_4x4(), f32({1, 4}, {0, 0, 1, 1}), ints(DType::i64, {1}, {1})})
          .find("RoiAlign batch_indices[0] = 1 is outside [0, 1)"),
      std::string::npos);
}

std::vector<Tensor> mel_inputs(double upper_hz) {
  return {ints(DType::i64, {}, {2}), ints(DType::i64, {}, {16}), ints(DType::i64, {}, {16}),
          f32({}, {0}), f32({}, {upper_hz})};
}

TEST(MelWeightMatrix, TrianglesBetweenMelSpacedEdges) {
  // 2 mel bins from 0 to 8 Hz at 16 Hz, dft_length 16: the 4 edges fall in spectrogram bins
  // 0, 2, 4 and 6 (17 (700 (10^(k mel(8) / 4 / 2595) - 1)) / 16 is 0, 2.1, 4.2 and 6.4).
  Tensor y = run("MelWeightMatrix", mel_inputs(8));
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{9, 2}));
  expect_near(y, {0, 0, 0.5, 0, 1, 0, 0.5, 0.5, 0, 1, 0, 0.5, 0, 0, 0, 0, 0, 0});
}

TEST(MelWeightMatrix, RejectsReversedEdgesAndBinsPastNyquist) {
  EXPECT_NE(error_of("MelWeightMatrix", {ints(DType::i64, {}, {2}), ints(DType::i64, {}, {16}),
                                         ints(DType::i64, {}, {16}), f32({}, {8}), f32({}, {4})})
                .find("0 <= lower_edge_hertz <= upper_edge_hertz, got 8 and 4"),
            std::string::npos);
  EXPECT_NE(error_of("MelWeightMatrix", mel_inputs(40)).find("past the last, 8"),
            std::string::npos);
}

TEST(DFT, FourPointTransformAndItsInverse) {
  // [1, 2, 3, 4] -> [10, -2 + 2i, -2, -2 - 2i].
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor y = run("DFT", {x});
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2}));
  expect_near(y, {10, 0, -2, 2, -2, 0, -2, -2});
  expect_near(run("DFT", {x}, {{"onesided", int64_t{1}}}), {10, 0, -2, 2, -2, 0});
  // dft_length 2 keeps [1, 2]: [3, -1].
  expect_near(run("DFT", {x, ints(DType::i64, {}, {2})}), {3, 0, -1, 0});
  expect_near(run("DFT", {y}, {{"inverse", int64_t{1}}}), {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST(DFT, RejectsALastDimOtherThanOneOrTwo) {
  EXPECT_NE(error_of("DFT", {f32({1, 2, 3}, {1, 2, 3, 4, 5, 6})})
                .find("DFT input must be [batch, signal..., 1 or 2], got [1,2,3]"),
            std::string::npos);
}

}  // namespace
}  // namespace orch::op_test
