// Reduce*, ArgMax, ArgMin and CumSum: shape rules and kernels, with expected values worked out by
// hand from the ONNX definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::error_of;
using op_test::f32;
using op_test::ints;
using op_test::run;
using op_test::run_all;

Tensor axes(std::vector<int64_t> values) {
  Shape shape = {static_cast<int64_t>(values.size())};
  return ints(DType::i64, shape, values);
}
Attributes keepdims(int64_t k) {
  return {{"keepdims", k}};
}

// [[1, 2, 3], [4, 5, 6]]
Tensor x23() {
  return f32({2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(ReduceSum, AxesInputKeepsDims) {
  Tensor out = run("ReduceSum", {x23(), axes({1})});
  EXPECT_EQ(out.shape(), (Shape{2, 1}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{6, 15}));
}

TEST(ReduceSum, NegativeAxisWithoutKeepdims) {
  Tensor out = run("ReduceSum", {x23(), axes({-2})}, keepdims(0));
  EXPECT_EQ(out.shape(), (Shape{3}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{5, 7, 9}));
}

TEST(ReduceSum, AbsentOrEmptyAxesReduceEverything) {
  Tensor all = run("ReduceSum", {x23()});
  EXPECT_EQ(all.shape(), (Shape{1, 1}));
  EXPECT_EQ(all.to_doubles(), (std::vector<double>{21}));
  Tensor scalar = run("ReduceSum", {x23(), axes({})}, keepdims(0));
  EXPECT_EQ(scalar.shape(), (Shape{}));
  EXPECT_EQ(scalar.to_doubles(), (std::vector<double>{21}));
}

TEST(ReduceSum, EmptyAxesWithNoopCopiesTheInput) {
  Tensor out = run("ReduceSum", {x23(), axes({})}, {{"noop_with_empty_axes", int64_t{1}}});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ReduceSum, Int64SumIsExact) {
  // 2^53 + 1 is not a double: summing through doubles would give 2^53.
  int64_t big = (int64_t{1} << 53) + 1;
  Tensor out = run("ReduceSum", {ints(DType::i64, {2}, {big, 1})}, keepdims(0));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{big + 1}));
}

TEST(ReduceSum, AxesAttributeIsRejected) {
  EXPECT_EQ(error_of("ReduceSum", {x23()}, {{"axes", std::vector<int64_t>{0}}}),
            "ReduceSum: axes must be input 1 (opset 13 form), not an attribute");
}

TEST(ReduceSum, RepeatedAxisIsRejected) {
  EXPECT_EQ(error_of("ReduceSum", {x23(), axes({1, -1})}), "ReduceSum: axis -1 is repeated");
}

TEST(ReduceMean, AlongAxis0) {
  Tensor out = run("ReduceMean", {x23()}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", 0}});
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{2.5, 3.5, 4.5}));
}

TEST(ReduceMean, IntegerMeanTruncatesTowardZero) {
  Tensor out = run("ReduceMean", {ints(DType::i32, {2, 2}, {1, 2, -1, -2})},
                   {{"axes", std::vector<int64_t>{1}}, {"keepdims", 0}});
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{1, -1}));
}

TEST(ReduceMean, EmptySetIsRejected) {
  EXPECT_EQ(error_of("ReduceMean", {f32({0, 2}, {})}, {{"axes", std::vector<int64_t>{0}}}),
            "ReduceMean: reducing [0,2] over an empty set: the result is undefined");
}

TEST(Reduce, NormsAndProductOfOneRow) {
  Tensor x = f32({1, 3}, {1, -2, 2});
  Attributes a = {{"axes", std::vector<int64_t>{-1}}, {"keepdims", 0}};
  EXPECT_EQ(run("ReduceL1", {x}, a).to_doubles(), (std::vector<double>{5}));
  EXPECT_EQ(run("ReduceL2", {x}, a).to_doubles(), (std::vector<double>{3}));
  EXPECT_EQ(run("ReduceSumSquare", {x}, a).to_doubles(), (std::vector<double>{9}));
  EXPECT_EQ(run("ReduceProd", {x}, a).to_doubles(), (std::vector<double>{-4}));
  EXPECT_EQ(run("ReduceMax", {x}, a).to_doubles(), (std::vector<double>{2}));
  EXPECT_EQ(run("ReduceMin", {x}, a).to_doubles(), (std::vector<double>{-2}));
}

TEST(Reduce, LogSumAndLogSumExp) {
  // log(1 + 2) = ln 3; log(e^0 + e^ln3) = ln 4.
  EXPECT_NEAR(run("ReduceLogSum", {f32({2}, {1, 2})}).get(0), std::log(3.0), 1e-6);
  EXPECT_NEAR(run("ReduceLogSumExp", {f32({2}, {0, std::log(3.0)})}).get(0), std::log(4.0), 1e-6);
  // exp(1000) overflows a double: the kernel must shift by the maximum.
  EXPECT_NEAR(run("ReduceLogSumExp", {f32({2}, {1000, 1000})}).get(0), 1000 + std::log(2.0), 1e-3);
}

TEST(Reduce, EmptySetsGiveTheIdentityOfTheReduction) {
  Attributes a = {{"axes", std::vector<int64_t>{0}}, {"keepdims", 0}};
  Tensor empty = f32({0, 2}, {});
  EXPECT_EQ(run("ReduceSum", {empty, axes({0})}, keepdims(0)).to_doubles(),
            (std::vector<double>{0, 0}));
  EXPECT_EQ(run("ReduceProd", {empty}, a).to_doubles(), (std::vector<double>{1, 1}));
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(run("ReduceMax", {empty}, a).to_doubles(), (std::vector<double>{-inf, -inf}));
  EXPECT_EQ(run("ReduceLogSumExp", {empty}, a).to_doubles(), (std::vector<double>{-inf, -inf}));
  Tensor min = run("ReduceMin", {ints(DType::i32, {0}, {})}, keepdims(0));
  EXPECT_EQ(min.to_ints(), (std::vector<int64_t>{std::numeric_limits<int32_t>::max()}));
}

TEST(Reduce, MaxPropagatesNaN) {
  Tensor out = run("ReduceMax", {f32({3}, {1, NAN, 2})});
  EXPECT_TRUE(std::isnan(out.get(0)));
}

TEST(Reduce, KeepdimsMustBeAFlag) {
  EXPECT_EQ(error_of("ReduceMax", {x23()}, keepdims(2)),
            "ReduceMax: attribute 'keepdims' must be 0 or 1, got 2");
}

// [[1, 3, 3], [5, 2, 5]]: ties in both rows.
Tensor ties() {
  return f32({2, 3}, {1, 3, 3, 5, 2, 5});
}

TEST(ArgMax, FirstIndexOfTheMaximum) {
  Tensor out = run("ArgMax", {ties()}, {{"axis", int64_t{1}}});
  EXPECT_EQ(out.dtype(), DType::i64);
  EXPECT_EQ(out.shape(), (Shape{2, 1}));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{1, 0}));
}

TEST(ArgMax, SelectLastIndexWithNegativeAxis) {
  Tensor out =
      run("ArgMax", {ties()}, {{"axis", int64_t{-1}}, {"keepdims", 0}, {"select_last_index", 1}});
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{2, 2}));
}

TEST(ArgMin, DefaultAxis0WithoutKeepdims) {
  Tensor out = run("ArgMin", {ties()}, keepdims(0));
  EXPECT_EQ(out.shape(), (Shape{3}));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(ArgMin, AxisOutOfRangeIsRejected) {
  EXPECT_EQ(error_of("ArgMin", {ties()}, {{"axis", int64_t{2}}}),
            "ArgMin: axis 2 is out of range for rank 2");
}

std::vector<double> cumsum(std::vector<double> x, int64_t exclusive, int64_t reverse) {
  Shape shape = {static_cast<int64_t>(x.size())};
  Tensor out = run("CumSum", {f32(shape, x), ints(DType::i32, {}, {0})},
                   {{"exclusive", exclusive}, {"reverse", reverse}});
  return out.to_doubles();
}

TEST(CumSum, ExclusiveAndReverse) {
  EXPECT_EQ(cumsum({1, 2, 3}, 0, 0), (std::vector<double>{1, 3, 6}));
  EXPECT_EQ(cumsum({1, 2, 3}, 1, 0), (std::vector<double>{0, 1, 3}));
  EXPECT_EQ(cumsum({1, 2, 3}, 0, 1), (std::vector<double>{6, 5, 3}));
  EXPECT_EQ(cumsum({1, 2, 3}, 1, 1), (std::vector<double>{5, 3, 0}));
}

TEST(CumSum, AlongNegativeAxisOfAnIntegerMatrix) {
  Tensor out = run("CumSum", {ints(DType::i64, {2, 3}, {1, 2, 3, 4, 5, 6}), axes({-1})});
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{1, 3, 6, 4, 9, 15}));
  Tensor down = run("CumSum", {x23(), axes({0})});
  EXPECT_EQ(down.to_doubles(), (std::vector<double>{1, 2, 3, 5, 7, 9}));
}

TEST(CumSum, AxisMustHoldOneValue) {
  EXPECT_EQ(error_of("CumSum", {x23(), axes({0, 1})}),
            "CumSum: axis must hold one value, got shape [2]");
}

}  // namespace
}  // namespace orch
