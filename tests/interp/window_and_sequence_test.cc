// HannWindow, ReverseSequence and Det against values worked out by hand, and their errors.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

// Element by element within f32 rounding: the kernels compute in double and round once.

// 0.5 - 0.5 cos(2 pi n / N): N = 4 when periodic, 3 when symmetric (cos(2 pi / 3) = -0.5).
TEST(HannWindow, PeriodicAndSymmetric) {
  Tensor y = run("HannWindow", {ints(DType::i64, {}, {4})});
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.shape(), (Shape{4}));
  expect_near(y, {0, 0.5, 1, 0.5});
  y = run("HannWindow", {ints(DType::i32, {}, {4})},
          {{"periodic", int64_t{0}}, {"output_datatype", int64_t{11}}});
  EXPECT_EQ(y.dtype(), DType::f64);
  expect_near(y, {0, 0.75, 0.75, 0});
  EXPECT_NE(error_of("HannWindow", {ints(DType::i64, {}, {-1})})
                .find("the window size must not be negative, got -1"),
            std::string::npos);
}

TEST(ReverseSequence, ReversesThePrefixOfEachSequence) {
  // Time along axis 0: column 0 reverses all 4 steps, column 1 only its first 2.
  Tensor x = f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor y = run("ReverseSequence", {x, ints(DType::i64, {2}, {4, 2})});
  EXPECT_EQ(y.to_doubles(), (Doubles{6, 3, 4, 1, 2, 5, 0, 7}));
  // Batch along axis 0: row 0 keeps its only step, row 1 reverses all 3.
  y = run("ReverseSequence", {f32({2, 3}, {0, 1, 2, 3, 4, 5}), ints(DType::i64, {2}, {1, 3})},
          {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}});
  EXPECT_EQ(y.to_doubles(), (Doubles{0, 1, 2, 5, 4, 3}));
  EXPECT_NE(error_of("ReverseSequence", {x, ints(DType::i64, {2}, {4, 2})},
                     {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{0}}})
                .find("batch_axis and time_axis must be 0 and 1 in some order, got 0 and 0"),
            std::string::npos);
}

TEST(Det, TwoByTwoAndThreeByThree) {
  // [[1, 2], [3, 4]]: 4 - 6; [[2, 0], [0, 3]]: 6.
  Tensor y = run("Det", {f32({2, 2, 2}, {1, 2, 3, 4, 2, 0, 0, 3})});
  EXPECT_EQ(y.shape(), (Shape{2}));
  expect_near(y, {-2, 6});
  // A zero first pivot needs a row swap: 0 (3 - 2) - 2 (1 - 8) + 1 (1 - 12) = 3.
  y = run("Det", {f32({3, 3}, {0, 2, 1, 1, 3, 2, 4, 1, 1})});
  EXPECT_EQ(y.shape(), (Shape{}));
  expect_near(y, {3});
  EXPECT_NE(error_of("Det", {f32({2, 3}, {1, 2, 3, 4, 5, 6})})
                .find("Det input must be square matrices [*, M, M], got [2,3]"),
            std::string::npos);
}

}  // namespace
}  // namespace orch::op_test
