// STFT on small inputs checked by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

Tensor scalar(int64_t v) {
  return ints(DType::i64, {}, {v});
}

TEST(STFT, TwoPointFramesOfAFourSampleSignal) {
  // Frames [1, 2] and [3, 4]; a 2-point DFT of [a, b] is [a + b, a - b], both bins kept when
  // onesided (2 / 2 + 1 = 2).
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  Tensor y = run("STFT", {x, scalar(2), Tensor(), scalar(2)});
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  expect_near(y, {3, 0, -1, 0, 7, 0, -1, 0});
  // A window [1, 0.5] makes the frames [1, 1] and [3, 2]; step 1 adds the frame [2, 1.5].
  Tensor window = f32({2}, {1, 0.5});
  Tensor windowed = run("STFT", {x, scalar(1), window});
  EXPECT_EQ(windowed.shape(), (Shape{1, 3, 2, 2}));
  expect_near(windowed, {2, 0, 0, 0, 3.5, 0, 0.5, 0, 5, 0, 1, 0});
  // Two-sided, one frame of the whole signal: the 4-point DFT [10, -2 + 2i, -2, -2 - 2i].
  expect_near(run("STFT", {x, scalar(4)}, {{"onesided", int64_t{0}}}),
              {10, 0, -2, 2, -2, 0, -2, -2});
}

TEST(STFT, RejectsFramesLongerThanTheSignalAndMismatchedWindows) {
  Tensor x = f32({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_NE(error_of("STFT", {x, scalar(1), Tensor(), scalar(5)})
                .find("STFT frame_length 5 must be in [1, 4] (the signal's length)"),
            std::string::npos);
  EXPECT_NE(error_of("STFT", {x, scalar(1), f32({3}, {1, 1, 1}), scalar(2)})
                .find("STFT window length 3 differs from frame_length 2"),
            std::string::npos);
  EXPECT_NE(error_of("STFT", {x, scalar(0), Tensor(), scalar(2)})
                .find("STFT frame_step must be positive, got 0"),
            std::string::npos);
}

}  // namespace
}  // namespace orch::op_test
