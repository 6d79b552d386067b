// MaxPool, AveragePool, LpPool and the global pools: shapes (ceil_mode, auto_pad) and values
// worked out by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"

namespace orch {
namespace {

using Ints = std::vector<int64_t>;
using Doubles = std::vector<double>;

Tensor f32(Shape shape, Doubles values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}
Tensor iota(Shape shape) {
  Doubles v(num_elements(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return f32(std::move(shape), v);
}

// Builds a one-node graph over a constant input and runs it.
std::vector<Tensor> run(const std::string& op, Tensor x, Attributes attrs, int num_outputs = 1) {
  Graph g;
  Builder b(g);
  for (ValueId v : b.op_multi(op, {b.constant(std::move(x))}, std::move(attrs), num_outputs))
    b.output(v);
  return interp::interpret(g, {});
}

TEST(MaxPool, TwoByTwoStrideTwoWithIndices) {
  auto out = run("MaxPool", iota({1, 1, 4, 4}),
                 {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, 2);
  EXPECT_EQ(out[0].to_doubles(), (Doubles{5, 7, 13, 15}));
  EXPECT_EQ(out[1].dtype(), DType::i64);
  EXPECT_EQ(out[1].to_ints(), (Ints{5, 7, 13, 15}));
}

TEST(MaxPool, ColumnMajorIndicesCountAcrossChannels) {
  // Channel 1 starts at element 16; (h, w) numbers h + 4w within a channel.
  auto out = run(
      "MaxPool", iota({1, 2, 4, 4}),
      {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}}, 2);
  EXPECT_EQ(out[1].to_ints(), (Ints{5, 13, 7, 15, 21, 29, 23, 31}));
}

TEST(MaxPool, CeilModeAddsAPartialWindow) {
  Attributes attrs = {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}};
  EXPECT_EQ(run("MaxPool", iota({1, 1, 4, 4}), attrs)[0].shape(), (Shape{1, 1, 1, 1}));
  attrs["ceil_mode"] = int64_t{1};
  Tensor y = run("MaxPool", iota({1, 1, 4, 4}), attrs)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_doubles(), (Doubles{10, 11, 14, 15}));
}

TEST(MaxPool, CeilModeDropsAWindowStartingInTheEndPadding) {
  // 5 + 1 + 1 padded, window 2, stride 2: ceil gives 4 windows, the 4th starts at 6 (padding).
  Tensor y = run("MaxPool", iota({1, 1, 5}),
                 {{"kernel_shape", Ints{2}},
                  {"strides", Ints{2}},
                  {"pads", Ints{1, 1}},
                  {"ceil_mode", int64_t{1}}})[0];
  EXPECT_EQ(y.to_doubles(), (Doubles{0, 2, 4}));
}

TEST(MaxPool, Dilations) {
  Tensor y = run("MaxPool", f32({1, 1, 5}, {1, 5, 2, 4, 3}),
                 {{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}})[0];
  EXPECT_EQ(y.to_doubles(), (Doubles{2, 5, 3}));
}

TEST(MaxPool, Uint8StaysUint8) {
  Tensor x = Tensor::from_ints(DType::u8, {1, 1, 4}, Ints{200, 3, 255, 7});
  Tensor y = run("MaxPool", x, {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}})[0];
  EXPECT_EQ(y.dtype(), DType::u8);
  EXPECT_EQ(y.to_ints(), (Ints{200, 255}));
}

TEST(MaxPool, SameLowerPadsTheBeginning) {
  Attributes attrs = {{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}};
  EXPECT_EQ(run("MaxPool", f32({1, 1, 3}, {3, 1, 2}), attrs)[0].to_doubles(), (Doubles{3, 3, 2}));
  attrs["auto_pad"] = std::string("SAME_UPPER");
  EXPECT_EQ(run("MaxPool", f32({1, 1, 3}, {3, 1, 2}), attrs)[0].to_doubles(), (Doubles{3, 2, 2}));
}

TEST(MaxPool, MissingKernelShapeIsAnError) {
  try {
    run("MaxPool", iota({1, 1, 4}), {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "MaxPool: 'kernel_shape' is required");
  }
}

TEST(AveragePool, PaddingCountedOrNot) {
  // Windows of 2x2 at rows/cols -1 and 1 over 0..8: sums 0, 3, 9, 24 over 1, 2, 2, 4 elements.
  Attributes attrs = {
      {"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
  EXPECT_EQ(run("AveragePool", iota({1, 1, 3, 3}), attrs)[0].to_doubles(),
            (Doubles{0, 1.5, 4.5, 6}));
  attrs["count_include_pad"] = int64_t{1};
  EXPECT_EQ(run("AveragePool", iota({1, 1, 3, 3}), attrs)[0].to_doubles(),
            (Doubles{0, 0.75, 2.25, 6}));
}

TEST(LpPool, TwoNorm) {
  Tensor y = run("LpPool", f32({1, 1, 4}, {3, -4, 0, 5}),
                 {{"kernel_shape", Ints{2}}, {"strides", Ints{2}}})[0];
  EXPECT_EQ(y.to_doubles(), (Doubles{5, 5}));
}

TEST(GlobalPools, ReduceEachChannel) {
  Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -5, -6, -7, -8});
  Tensor avg = run("GlobalAveragePool", x, {})[0];
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_EQ(avg.to_doubles(), (Doubles{2.5, -6.5}));
  EXPECT_EQ(run("GlobalMaxPool", x, {})[0].to_doubles(), (Doubles{4, -5}));
  EXPECT_EQ(run("GlobalLpPool", x, {{"p", int64_t{1}}})[0].to_doubles(), (Doubles{10, 26}));
}

TEST(MaxUnpool, ScattersToTheIndicesAndPadsToOutputShape) {
  Graph g;
  Builder b(g);
  ValueId x = b.constant(f32({1, 1, 2, 2}, {5, 6, 7, 8}));
  ValueId idx = b.constant(Tensor::from_ints(DType::i64, {1, 1, 2, 2}, Ints{5, 7, 13, 15}));
  ValueId shape = b.constant(Tensor::from_ints(DType::i64, {4}, Ints{1, 1, 5, 5}));
  Attributes attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  b.output(b.op("MaxUnpool", {x, idx}, attrs));
  b.output(b.op("MaxUnpool", {x, idx, shape}, attrs));
  auto out = interp::interpret(g, {});
  // Indices address the 4x4 unpooled plane; a 5x5 output keeps their (row, col).
  Doubles four(16), five(25);
  four[5] = 5, four[7] = 6, four[13] = 7, four[15] = 8;
  five[6] = 5, five[8] = 6, five[16] = 7, five[18] = 8;
  EXPECT_EQ(out[0].to_doubles(), four);
  EXPECT_EQ(out[1].shape(), (Shape{1, 1, 5, 5}));
  EXPECT_EQ(out[1].to_doubles(), five);
}

}  // namespace
}  // namespace orch
