// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv: zero points, per-row / per-column /
// per-channel parameters, round-half-to-even and saturation, by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::error_of;
using op_test::run;
using op_test::run_all;

using Ints = std::vector<int64_t>;

Tensor u8(Shape shape, Ints values) {
  return Tensor::from_ints(DType::u8, std::move(shape), values);
}
Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}

TEST(MatMulInteger, ZeroPointsPerTensorRowAndColumn) {
  // B - [0, 1] per column = [[1, -1], [0, 0]].
  Tensor a = u8({2, 2}, {1, 2, 3, 4}), b = u8({2, 2}, {1, 0, 0, 1}), bz = u8({2}, {0, 1});
  // A - 1 = [[0, 1], [2, 3]].
  Tensor y = run("MatMulInteger", {a, b, u8({}, {1}), bz});
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_ints(), (Ints{0, 0, 2, -2}));
  // A - [1, 2] per row = [[0, 1], [1, 2]].
  EXPECT_EQ(run("MatMulInteger", {a, b, u8({2}, {1, 2}), bz}).to_ints(), (Ints{0, 0, 1, -1}));
}

TEST(ConvInteger, SubtractsZeroPoints) {
  Tensor y = run("ConvInteger",
                 {u8({1, 1, 2, 2}, {1, 2, 3, 4}), u8({1, 1, 1, 1}, {3}), u8({}, {1}), u8({}, {1})});
  EXPECT_EQ(y.dtype(), DType::i32);
  EXPECT_EQ(y.to_ints(), (Ints{0, 2, 4, 6}));
}

TEST(QLinearMatMul, ScalesRoundsAndSaturates) {
  // (a - 10) = [0, 10], (b - 1) = [2, 4]: the product is 40, scaled by 0.5 * 2 / y_scale.
  auto q = [](double y_scale) {
    return run("QLinearMatMul",
               {u8({1, 2}, {10, 20}), f32({}, {0.5}), u8({}, {10}), u8({2, 1}, {3, 5}),
                f32({}, {2}), u8({}, {1}), f32({}, {y_scale}), u8({}, {100})})
        .get_int(0);
  };
  EXPECT_EQ(q(4), 110);
  EXPECT_EQ(q(16), 102);   // 2.5 rounds to even
  EXPECT_EQ(q(0.1), 255);  // 500 saturates
}

TEST(QLinearConv, PerChannelWeightsBiasAndInt8Output) {
  // x - 5 = [0, 2]; w - [0, 2] = [4, 4]; per channel: (x w + bias) * w_scale + 10.
  Tensor y = run("QLinearConv", {u8({1, 1, 1, 2}, {5, 7}), f32({}, {1}), u8({}, {5}),
                                 u8({2, 1, 1, 1}, {4, 6}), f32({2}, {0.5, 0.25}), u8({2}, {0, 2}),
                                 f32({}, {1}), Tensor::from_ints(DType::i8, {}, Ints{10}),
                                 Tensor::from_ints(DType::i32, {2}, Ints{1, 2})});
  EXPECT_EQ(y.dtype(), DType::i8);
  // Channel 0: [1, 9] * 0.5 = [0.5, 4.5]; channel 1: [2, 10] * 0.25 = [0.5, 2.5]; halves to even.
  EXPECT_EQ(y.to_ints(), (Ints{10, 14, 10, 12}));
}

}  // namespace
}  // namespace orch
