// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: per tensor and per axis, rounding
// half to even, saturation, by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "op_test_util.h"

namespace orch::op_test {
namespace {

TEST(QuantizeLinear, RoundsHalfToEvenAddsTheZeroPointAndSaturates) {
  // x / 0.5 = [-2, 0.5, 1.5, 2.5, 600] rounds to [-2, 0, 2, 2, 600].
  Tensor y = run("QuantizeLinear", {f32({5}, {-1, 0.25, 0.75, 1.25, 300}), f32({}, {0.5}),
                                    ints(DType::u8, {}, {128})});
  EXPECT_EQ(y.dtype(), DType::u8);
  EXPECT_EQ(y.to_ints(), (Ints{126, 128, 130, 130, 255}));
  y = run("QuantizeLinear", {f32({2}, {-100, 0.25}), f32({}, {0.5}), ints(DType::i8, {}, {-1})});
  EXPECT_EQ(y.dtype(), DType::i8);
  EXPECT_EQ(y.to_ints(), (Ints{-128, -1}));
  // Without a zero point: u8, zero point 0.
  y = run("QuantizeLinear", {f32({2}, {-1, 1}), f32({}, {1})});
  EXPECT_EQ(y.dtype(), DType::u8);
  EXPECT_EQ(y.to_ints(), (Ints{0, 1}));
}

TEST(QuantizeLinear, PerAxis) {
  Tensor x = f32({2, 2}, {1, 1, 1, 1}), scale = f32({2}, {0.5, 0.25});
  Tensor zero = ints(DType::i8, {2}, {0, 10});
  EXPECT_EQ(run("QuantizeLinear", {x, scale, zero}).to_ints(), (Ints{2, 14, 2, 14}));
  EXPECT_EQ(run("QuantizeLinear", {x, scale, zero}, {{"axis", int64_t{0}}}).to_ints(),
            (Ints{2, 2, 14, 14}));
  EXPECT_NE(error_of("QuantizeLinear", {x, f32({3}, {1, 1, 1}), ints(DType::i8, {3}, {0, 0, 0})})
                .find("a per-axis scale must have one value per element of axis 1"),
            std::string::npos);
  EXPECT_NE(error_of("QuantizeLinear", {x, scale, ints(DType::i8, {}, {0})})
                .find("the zero point [] and the scale [2] differ in size"),
            std::string::npos);
}

TEST(DequantizeLinear, SubtractsTheZeroPointAndScales) {
  Tensor y = run("DequantizeLinear",
                 {ints(DType::u8, {3}, {0, 128, 255}), f32({}, {0.5}), ints(DType::u8, {}, {128})});
  EXPECT_EQ(y.dtype(), DType::f32);
  EXPECT_EQ(y.to_doubles(), (Doubles{-64, 0, 63.5}));
  // Per axis 1: (x - [0, 2]) * [1, 0.5].
  y = run("DequantizeLinear", {ints(DType::i8, {2, 2}, {1, 2, 3, 4}), f32({2}, {1, 0.5}),
                               ints(DType::i8, {2}, {0, 2})});
  EXPECT_EQ(y.to_doubles(), (Doubles{1, 0, 3, 1}));
  EXPECT_NE(error_of("DequantizeLinear",
                     {ints(DType::u8, {2}, {1, 2}), f32({}, {1}), ints(DType::i8, {}, {0})})
                .find("the zero point must be u8, got i8"),
            std::string::npos);
}

// The example of the ONNX operator documentation, and an all-zero input, whose scale is 0.
TEST(DynamicQuantizeLinear, ScaleAndZeroPointFromTheRange) {
  std::vector<Tensor> out =
      run_all("DynamicQuantizeLinear", {f32({6}, {0, 2, -3, -2.5, 1.34, 0.5})}, {}, 3);
  EXPECT_FLOAT_EQ(static_cast<float>(out[1].get(0)), 5.0f / 255);
  EXPECT_EQ(out[2].to_ints(), (Ints{153}));
  EXPECT_EQ(out[0].to_ints(), (Ints{153, 255, 0, 26, 221, 179}));
  out = run_all("DynamicQuantizeLinear", {f32({2}, {0, 0})}, {}, 3);
  EXPECT_EQ(out[1].get(0), 0);
  EXPECT_EQ(out[2].to_ints(), (Ints{0}));
  EXPECT_EQ(out[0].to_ints(), (Ints{0, 0}));
}

}  // namespace
}  // namespace orch::op_test
