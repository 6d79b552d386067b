// GridSample (opset 16): bilinear, nearest and padding on tiny planes, with expected values
// worked out by hand from the ONNX definitions (denormalize, pad, then read the taps).
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

// X = [[1, 2], [3, 4]] as [1, 1, 2, 2].
Tensor square() {
  return f32({1, 1, 2, 2}, {1, 2, 3, 4});
}

// A [1, 1, points, 2] grid of (x, y) points.
Tensor grid(Doubles xy) {
  return f32({1, 1, static_cast<int64_t>(xy.size() / 2), 2}, xy);
}

TEST(GridSample, BilinearWithoutAlignCornersZerosAndBorder) {
  // Without align_corners x = ((v + 1) * 2 - 1) / 2: -1 -> -0.5, -0.5 -> 0, 0 -> 0.5, 1 -> 1.5,
  // -2 -> -1.5. (-0.5, -0.5) half covers pixel (0, 0) and half the zeros outside: 0.25 * 1;
  // (0.5, 0.5) averages all four; (0, 0) is pixel 1 itself; (1.5, 1.5) is 0.25 * 4; (-1.5, 0.5)
  // has both its columns outside.
  Tensor g = grid({-1, -1, 0, 0, -0.5, -0.5, 1, 1, -2, 0});
  Tensor y = run("GridSample", {square(), g});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 5}));
  expect_near(y, {0.25, 2.5, 1, 1, 0});
  // Border: the taps of (-0.5, -0.5) all clamp to pixel (0, 0), those of (1.5, 1.5) to (1, 1);
  // (-1.5, 0.5) lies outside and clamps to (0, 0.5), halfway between 1 and 3.
  y = run("GridSample", {square(), g}, {{"padding_mode", std::string("border")}});
  expect_near(y, {1, 2.5, 1, 4, 2});
}

TEST(GridSample, BilinearWithAlignCorners) {
  // With align_corners x = (v + 1) / 2: -1 -> 0, 0 -> 0.5, 0.5 -> 0.75, 1 -> 1. (0.75, 0.5) mixes
  // the rows 1 * 0.25 + 2 * 0.75 = 1.75 and 3 * 0.25 + 4 * 0.75 = 3.75 half and half.
  Tensor y = run("GridSample", {square(), grid({-1, -1, 0, 0, 1, 1, 1, -1, 0.5, 0})},
                 {{"align_corners", int64_t{1}}});
  expect_near(y, {1, 2.5, 4, 2, 2.75});
}

TEST(GridSample, NearestRoundsHalfToEvenAndReflectionFolds) {
  // X = [10, 20, 30, 40] as [1, 1, 1, 4]; without align_corners x = ((v + 1) * 4 - 1) / 2 and
  // y = 0. v = -0.5, 0, 0.5 give x = 0.5, 1.5, 2.5, which round to 0, 2, 2.
  Tensor x = f32({1, 1, 1, 4}, {10, 20, 30, 40});
  Tensor y =
      run("GridSample", {x, grid({-0.5, 0, 0, 0, 0.5, 0})}, {{"mode", std::string("nearest")}});
  expect_near(y, {10, 30, 30});
  // v = -1.5 gives x = -1.5, reflected about -0.5 to 0.5: halfway between 10 and 20; v = 1.5
  // gives x = 4.5, reflected about 3.5 to 2.5: halfway between 30 and 40.
  y = run("GridSample", {x, grid({-1.5, 0, 1.5, 0})},
          {{"padding_mode", std::string("reflection")}});
  expect_near(y, {15, 35});
}

TEST(GridSample, RejectsBadShapesAndAttributes) {
  EXPECT_NE(error_of("GridSample", {square(), f32({2, 1, 1, 2}, {0, 0, 0, 0})})
                .find("grid [2,1,1,2] and X [1,1,2,2] differ in N"),
            std::string::npos);
  EXPECT_NE(error_of("GridSample", {f32({1, 2, 2}, {1, 2, 3, 4}), grid({0, 0})})
                .find("X [1,2,2] must be 4-D [N, C, H_in, W_in]"),
            std::string::npos);
  EXPECT_NE(error_of("GridSample", {square(), grid({0, 0})}, {{"mode", std::string("linear")}})
                .find("mode 'linear' is not one of bilinear, nearest, bicubic"),
            std::string::npos);
}

}  // namespace
}  // namespace orch::op_test
