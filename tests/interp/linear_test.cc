// MatMul, Gemm, Einsum, Conv and ConvTranspose: shape rules and kernels, checked against values
// worked out by hand and against identities between the ops (a 1x1 Conv is a MatMul over
// channels, Einsum "ij,jk->ik" is a MatMul, a grouped Conv is per-group Convs).
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::error_of;
using op_test::run;
using op_test::run_all;

using Ints = std::vector<int64_t>;

Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}
Tensor random_f32(Shape shape, uint64_t seed) {
  return interp::random_tensor({DType::f32, std::move(shape)}, seed);
}

void expect_near(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.get(i), want.get(i), tol) << i;
}

// Entries [begin, end) along `dim` of a tensor whose dims before `dim` are all 1.
Tensor block(const Tensor& t, size_t dim, int64_t begin, int64_t end) {
  Shape shape = t.shape();
  int64_t inner = t.numel() / shape[dim];
  shape[dim] = end - begin;
  std::vector<double> v = t.to_doubles();
  return f32(shape, {v.begin() + begin * inner, v.begin() + end * inner});
}

TEST(MatMul, TwoByThreeTimesThreeByTwo) {
  Tensor y = run("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{4, 5, 10, 11}));
}

TEST(MatMul, VectorOperandsDropTheirDim) {
  Tensor b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor row = run("MatMul", {f32({3}, {1, 2, 3}), b});
  EXPECT_EQ(row.shape(), (Shape{2}));
  EXPECT_EQ(row.to_doubles(), (std::vector<double>{4, 5}));
  Tensor col = run("MatMul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 1, 1})});
  EXPECT_EQ(col.shape(), (Shape{2}));
  EXPECT_EQ(col.to_doubles(), (std::vector<double>{6, 15}));
  Tensor dot = run("MatMul", {f32({3}, {1, 2, 3}), f32({3}, {1, 2, 3})});
  EXPECT_EQ(dot.shape(), (Shape{}));
  EXPECT_EQ(dot.get(0), 14);
}

TEST(MatMul, BatchDimsBroadcast) {
  Tensor a = random_f32({2, 1, 2, 3}, 1), b = random_f32({3, 3, 2}, 2);
  Tensor y = run("MatMul", {a, b});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 2, 2}));
  // y[i, j] = a[i, 0] @ b[j], computed here with plain loops.
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t c = 0; c < 2; ++c) {
          double want = 0;
          for (int64_t k = 0; k < 3; ++k)
            want += a.get(i * 6 + r * 3 + k) * b.get(j * 6 + k * 2 + c);
          EXPECT_NEAR(y.get(((i * 3 + j) * 2 + r) * 2 + c), want, 1e-6);
        }
}

TEST(MatMul, Int64IsExact) {
  int64_t big = (int64_t{1} << 40) + 1;
  Tensor y = run("MatMul", {Tensor::from_ints(DType::i64, {1, 2}, Ints{big, 3}),
                            Tensor::from_ints(DType::i64, {2, 1}, Ints{1 << 20, 5})});
  EXPECT_EQ(y.get_int(0), (int64_t{1} << 60) + (1 << 20) + 15);
}

TEST(MatMul, InnerDimMismatchIsAnError) {
  EXPECT_EQ(error_of("MatMul", {f32({2, 3}, std::vector<double>(6)), f32({2, 2}, {1, 2, 3, 4})}),
            "MatMul: MatMul inner dims differ: [2,3] and [2,2]");
}

TEST(Gemm, TransposesScalesAndBroadcastsC) {
  Tensor a = random_f32({3, 2}, 3), b = random_f32({4, 3}, 4), c = random_f32({4}, 5);
  Tensor y = run("Gemm", {a, b, c},
                 {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.5f}, {"beta", 2.0f}});
  ASSERT_EQ(y.shape(), (Shape{2, 4}));
  // y[i, j] = 0.5 * sum_k a[k, i] b[j, k] + 2 c[j].
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      double want = 2 * c.get(j);
      for (int64_t k = 0; k < 3; ++k) want += 0.5 * a.get(k * 2 + i) * b.get(j * 3 + k);
      EXPECT_NEAR(y.get(i * 4 + j), want, 1e-6);
    }
}

TEST(Gemm, ScalarCAndNoC) {
  Tensor a = f32({1, 2}, {1, 2}), b = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run("Gemm", {a, b, f32({}, {10})}).to_doubles(), (std::vector<double>{17, 20}));
  EXPECT_EQ(run("Gemm", {a, b}).to_doubles(), (std::vector<double>{7, 10}));
}

TEST(Gemm, CThatDoesNotBroadcastIsAnError) {
  Tensor a = f32({1, 2}, {1, 2}), b = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(error_of("Gemm", {a, b, f32({3}, {1, 2, 3})}),
            "Gemm: shapes [3] and [1,2] do not broadcast");
}

TEST(Einsum, MatrixProductEqualsMatMul) {
  Tensor a = random_f32({3, 4}, 6), b = random_f32({4, 5}, 7);
  expect_near(run("Einsum", {a, b}, {{"equation", std::string("ij,jk->ik")}}),
              run("MatMul", {a, b}));
  expect_near(run("Einsum", {a, b}, {{"equation", std::string("ij,jk")}}), run("MatMul", {a, b}));
}

TEST(Einsum, BatchMatMulEqualsMatMul) {
  Tensor a = random_f32({2, 3, 4}, 8), b = random_f32({2, 4, 5}, 9);
  expect_near(run("Einsum", {a, b}, {{"equation", std::string("bij,bjk->bik")}}),
              run("MatMul", {a, b}));
}

TEST(Einsum, EllipsisBroadcastsLikeMatMul) {
  Tensor a = random_f32({2, 1, 2, 3}, 10), b = random_f32({3, 3, 2}, 11);
  expect_near(run("Einsum", {a, b}, {{"equation", std::string("...ij,...jk->...ik")}}),
              run("MatMul", {a, b}));
}

TEST(Einsum, DiagonalTraceAndSum) {
  Tensor m = f32({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor diag = run("Einsum", {m}, {{"equation", std::string("ii->i")}});
  EXPECT_EQ(diag.shape(), (Shape{3}));
  EXPECT_EQ(diag.to_doubles(), (std::vector<double>{0, 4, 8}));
  Tensor trace = run("Einsum", {m}, {{"equation", std::string("ii")}});
  EXPECT_EQ(trace.shape(), (Shape{}));
  EXPECT_EQ(trace.get(0), 12);
  Tensor sum =
      run("Einsum", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"equation", std::string("ij->")}});
  EXPECT_EQ(sum.get(0), 21);
}

TEST(Einsum, BatchDiagonal) {
  Tensor x = f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = run("Einsum", {x}, {{"equation", std::string("bii->bi")}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1, 4, 5, 8}));
}

TEST(Einsum, ImplicitOutputSortsLetters) {
  // "ji" names dim 0 j and dim 1 i; the implicit output "ij" is the transpose.
  Tensor y = run("Einsum", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {{"equation", std::string("ji")}});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(Einsum, InnerProductAndEllipsisTranspose) {
  Tensor dot =
      run("Einsum", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}, {{"equation", std::string("i,i")}});
  EXPECT_EQ(dot.get(0), 32);
  Tensor t =
      run("Einsum", {f32({2, 1, 2}, {1, 2, 3, 4})}, {{"equation", std::string("...ij->...ji")}});
  EXPECT_EQ(t.shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Einsum, MismatchedExtentsAreAnError) {
  EXPECT_EQ(error_of("Einsum", {random_f32({2, 3}, 1), random_f32({4, 2}, 2)},
                     {{"equation", std::string("ij,jk->ik")}}),
            "Einsum: einsum subscript 'j' has extents 3 and 4");
}

TEST(Conv, OneByOneIsAMatMulOverChannels) {
  Tensor x = random_f32({1, 3, 2, 2}, 12), w = random_f32({4, 3, 1, 1}, 13);
  Tensor bias = f32({4}, {1, 2, 3, 4});
  Tensor y = run("Conv", {x, w, bias});
  // y[0, m, p] = bias[m] + sum_c w[m, c] x[0, c, p]: W [4,3] @ X [3,4] plus the bias column.
  Tensor mm = run("MatMul", {w.reshaped({4, 3}), x.reshaped({3, 4})});
  Tensor want = run("Add", {mm, bias.reshaped({4, 1})});
  expect_near(y, want.reshaped({1, 4, 2, 2}));
}

TEST(Conv, TwoByTwoOnesByHand) {
  Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  EXPECT_EQ(run("Conv", {x, w}).to_doubles(), (std::vector<double>{8, 12, 20, 24}));
  // Pads 1 and stride 2: windows start at -1 and 1 along each dim.
  Tensor padded = run("Conv", {x, w}, {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(padded.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(padded.to_doubles(), (std::vector<double>{0, 3, 9, 24}));
}

TEST(Conv, SameUpperPadsTheEndSameLowerTheBeginning) {
  Tensor x = f32({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor upper = run("Conv", {x, w}, {{"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_EQ(upper.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(upper.get(0), 8);
  EXPECT_EQ(upper.get(8), 8);
  Tensor lower = run("Conv", {x, w}, {{"auto_pad", std::string("SAME_LOWER")}});
  EXPECT_EQ(lower.get(0), 0);
  EXPECT_EQ(lower.get(8), 24);
}

TEST(Conv, OneDimStrideAndDilation) {
  // Taps x[2o] and x[2o+2] (dilation 2) weighted 1 and 10, at o = 0, 1, 2.
  Tensor y = run("Conv", {f32({1, 1, 7}, {1, 2, 3, 4, 5, 6, 7}), f32({1, 1, 2}, {1, 10})},
                 {{"strides", Ints{2}}, {"dilations", Ints{2}}});
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{31, 53, 75}));
}

TEST(Conv, ThreeDimSumsTheCube) {
  Tensor y = run("Conv", {f32({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}),
                          f32({1, 1, 2, 2, 2}, std::vector<double>(8, 1))});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1, 1}));
  EXPECT_EQ(y.get(0), 28);
}

TEST(Conv, GroupedEqualsPerGroupConvs) {
  Tensor x = random_f32({1, 4, 5, 5}, 14), w = random_f32({6, 2, 3, 3}, 15);
  Attributes attrs = {{"pads", Ints{1, 0, 1, 2}}, {"strides", Ints{1, 2}}};
  Attributes grouped = attrs;
  grouped["group"] = int64_t{2};
  Tensor y = run("Conv", {x, w}, grouped);
  for (int64_t g = 0; g < 2; ++g)
    expect_near(block(y, 1, 3 * g, 3 * g + 3),
                run("Conv", {block(x, 1, 2 * g, 2 * g + 2), block(w, 0, 3 * g, 3 * g + 3)}, attrs));
}

TEST(Conv, ChannelMismatchIsAnError) {
  EXPECT_EQ(error_of("Conv", {random_f32({1, 3, 4, 4}, 1), random_f32({2, 2, 3, 3}, 2)}),
            "Conv: X has 3 channels, W expects 2 x group 1");
}

TEST(Conv, WindowLargerThanInputIsAnError) {
  EXPECT_EQ(error_of("Conv", {random_f32({1, 1, 2}, 1), random_f32({1, 1, 3}, 2)}),
            "Conv: spatial dim 0 (2 padded by 0+0) is smaller than the window (3)");
}

TEST(ConvTranspose, StrideTwoOneDimByHand) {
  // Each x[i] adds x[i] * w to y[2i .. 2i+2].
  Tensor x = f32({1, 1, 3}, {1, 2, 3}), w = f32({1, 1, 3}, {1, 1, 1});
  Attributes stride = {{"strides", Ints{2}}};
  EXPECT_EQ(run("ConvTranspose", {x, w}, stride).to_doubles(),
            (std::vector<double>{1, 1, 3, 2, 5, 3, 3}));
  Attributes pads = {{"strides", Ints{2}}, {"pads", Ints{1, 1}}};
  EXPECT_EQ(run("ConvTranspose", {x, w}, pads).to_doubles(), (std::vector<double>{1, 3, 2, 5, 3}));
  Attributes out_pad = {{"strides", Ints{2}}, {"output_padding", Ints{1}}};
  EXPECT_EQ(run("ConvTranspose", {x, w}, out_pad).to_doubles(),
            (std::vector<double>{1, 1, 3, 2, 5, 3, 3, 0}));
  // output_shape 8 is one more than the full output: the extra element goes at the end.
  Attributes out_shape = {{"strides", Ints{2}}, {"output_shape", Ints{8}}};
  EXPECT_EQ(run("ConvTranspose", {x, w}, out_shape).to_doubles(),
            (std::vector<double>{1, 1, 3, 2, 5, 3, 3, 0}));
}

TEST(ConvTranspose, GroupsAndBias) {
  // Two groups of one channel each: y[c] = w[c] * x[c] + b[c].
  Tensor y = run("ConvTranspose",
                 {f32({1, 2, 2}, {1, 2, 3, 4}), f32({2, 1, 1}, {2, 3}), f32({2}, {10, 20})},
                 {{"group", int64_t{2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{12, 14, 29, 32}));
}

TEST(ConvTranspose, TwoDimDilation) {
  // A 1x1 input spreads the dilated kernel: w[a, b] lands at y[2a, 2b].
  Tensor y = run("ConvTranspose", {f32({1, 1, 1, 1}, {2}), f32({1, 1, 2, 2}, {1, 2, 3, 4})},
                 {{"dilations", Ints{2, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{2, 0, 4, 0, 0, 0, 6, 0, 8}));
}

}  // namespace
}  // namespace orch
