// Gather, GatherElements, GatherND, ScatterElements, ScatterND: shape rules and kernels, with
// expected values worked out by hand from the ONNX definitions.
#include <gtest/gtest.h>

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

TEST(Gather, NegativeIndexAlongAxis1) {
  // data[:, -1] is the last column, data[:, 0] the first.
  Tensor out = run("Gather", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints(DType::i64, {2}, {-1, 0})},
                   {{"axis", int64_t{1}}});
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{3, 1, 6, 4}));
}

TEST(Gather, IndicesOfRank2InsertTheirShape) {
  // out[i, j, k] = data[i, indices[j, k]] with i32 indices: shape [2] + [2,1] -> [2,2,1].
  Tensor out = run("Gather", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints(DType::i32, {2, 1}, {0, 2})},
                   {{"axis", int64_t{1}}});
  EXPECT_EQ(out.shape(), (Shape{2, 2, 1}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 3, 4, 6}));
}

TEST(Gather, CopiesInt64ExactlyAlongAxis0) {
  int64_t big = (int64_t{1} << 62) + 1;  // not representable as a double
  Tensor out =
      run("Gather", {ints(DType::i64, {3}, {7, big, -big}), ints(DType::i64, {2}, {1, 2})});
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{big, -big}));
}

TEST(Gather, OutOfRangeIndexIsNamed) {
  EXPECT_EQ(error_of("Gather", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints(DType::i64, {2}, {0, 3})},
                     {{"axis", int64_t{1}}}),
            "Gather #0: index 3 at indices[1] is out of range for axis 1 of data, of size 3");
}

TEST(Gather, FloatIndicesAreRejected) {
  EXPECT_EQ(error_of("Gather", {f32({2}, {1, 2}), f32({1}, {0})}),
            "Gather: indices (input 1) has unsupported type f32");
}

TEST(GatherElements, NegativeIndicesAlongAxis0) {
  // out[i][j] = data[indices[i][j]][j].
  Tensor out =
      run("GatherElements", {f32({2, 2}, {1, 2, 3, 4}), ints(DType::i32, {2, 2}, {-1, 0, 0, 1})});
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{3, 2, 1, 4}));
}

TEST(GatherElements, IndicesMayBeSmallerThanData) {
  // out[i][j] = data[i][indices[i][j]] along axis 1, one row of indices.
  Tensor out =
      run("GatherElements", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), ints(DType::i64, {1, 2}, {2, 2})},
          {{"axis", int64_t{1}}});
  EXPECT_EQ(out.shape(), (Shape{1, 2}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{3, 3}));
}

TEST(GatherND, BatchDims1) {
  // data[b] is a 2x2 matrix; each batch entry picks one row of its own matrix.
  Tensor data = f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor rows =
      run("GatherND", {data, ints(DType::i64, {2, 1}, {1, 0})}, {{"batch_dims", int64_t{1}}});
  EXPECT_EQ(rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(rows.to_doubles(), (std::vector<double>{2, 3, 4, 5}));
  // Full (row, col) tuples: batch 0 takes [0][1] = 1, batch 1 takes [1][0] = 6.
  Tensor elems = run("GatherND", {data, ints(DType::i32, {2, 1, 2}, {0, 1, 1, 0})},
                     {{"batch_dims", int64_t{1}}});
  EXPECT_EQ(elems.shape(), (Shape{2, 1}));
  EXPECT_EQ(elems.to_doubles(), (std::vector<double>{1, 6}));
}

TEST(GatherND, TuplesWithoutBatchDims) {
  Tensor out =
      run("GatherND", {f32({2, 2}, {0, 1, 2, 3}), ints(DType::i64, {2, 2}, {0, 0, -1, -1})});
  EXPECT_EQ(out.shape(), (Shape{2}));
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{0, 3}));
}

TEST(GatherND, BatchDimsMustMatch) {
  EXPECT_EQ(error_of("GatherND", {f32({2, 2}, {0, 1, 2, 3}), ints(DType::i64, {3, 1}, {0, 0, 0})},
                     {{"batch_dims", int64_t{1}}}),
            "GatherND: batch dim 0 differs: indices [3,1], data [2,2]");
}

TEST(ScatterElements, AddAccumulatesDuplicates) {
  // Both updates land on data[0][1]: 2 + 10 + 20.
  Tensor out =
      run("ScatterElements",
          {f32({1, 5}, {1, 2, 3, 4, 5}), ints(DType::i64, {1, 2}, {1, 1}), f32({1, 2}, {10, 20})},
          {{"axis", int64_t{1}}, {"reduction", std::string("add")}});
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 32, 3, 4, 5}));
}

TEST(ScatterElements, NoneWithNegativeIndexAlongAxis0) {
  // out[indices[i][j]][j] = updates[i][j]: row -1 is row 1.
  Tensor out = run("ScatterElements", {f32({2, 2}, {0, 0, 0, 0}), ints(DType::i32, {1, 2}, {-1, 0}),
                                       f32({1, 2}, {5, 6})});
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{0, 6, 5, 0}));
}

TEST(ScatterElements, MulMaxMinOnIntegers) {
  Tensor data = ints(DType::i64, {3}, {2, 5, 7});
  Tensor idx = ints(DType::i64, {3}, {0, 1, 1});
  Tensor upd = ints(DType::i64, {3}, {3, 9, 1});
  EXPECT_EQ(run("ScatterElements", {data, idx, upd}, {{"reduction", std::string("mul")}}).to_ints(),
            (std::vector<int64_t>{6, 45, 7}));
  EXPECT_EQ(run("ScatterElements", {data, idx, upd}, {{"reduction", std::string("max")}}).to_ints(),
            (std::vector<int64_t>{3, 9, 7}));
  EXPECT_EQ(run("ScatterElements", {data, idx, upd}, {{"reduction", std::string("min")}}).to_ints(),
            (std::vector<int64_t>{2, 1, 7}));
}

TEST(ScatterElements, UnknownReductionIsRejected) {
  EXPECT_EQ(error_of("ScatterElements", {f32({1}, {0}), ints(DType::i64, {1}, {0}), f32({1}, {1})},
                     {{"reduction", std::string("mean")}}),
            "ScatterElements: reduction 'mean' is not one of none, add, mul, max, min");
}

TEST(ScatterElements, OutOfRangeIndexIsNamed) {
  EXPECT_EQ(error_of("ScatterElements", {f32({2, 2}, {0, 0, 0, 0}),
                                         ints(DType::i64, {1, 2}, {0, -3}), f32({1, 2}, {1, 1})}),
            "ScatterElements #0: index -3 at indices[0,1] is out of range for axis 0 of data, of "
            "size 2");
}

TEST(ScatterND, WritesElements) {
  Tensor out =
      run("ScatterND", {f32({8}, {1, 2, 3, 4, 5, 6, 7, 8}), ints(DType::i64, {4, 1}, {4, 3, 1, 7}),
                        f32({4}, {9, 10, 11, 12})});
  EXPECT_EQ(out.to_doubles(), (std::vector<double>{1, 11, 3, 10, 9, 6, 7, 12}));
}

TEST(ScatterND, AddAndMulOnSlices) {
  // Index tuples of length 1 address whole rows; row 1 is updated twice.
  Tensor data = f32({2, 2}, {1, 2, 3, 4});
  Tensor idx = ints(DType::i32, {2, 1}, {1, 1});
  Tensor upd = f32({2, 2}, {10, 20, 2, 3});
  EXPECT_EQ(run("ScatterND", {data, idx, upd}, {{"reduction", std::string("add")}}).to_doubles(),
            (std::vector<double>{1, 2, 15, 27}));
  EXPECT_EQ(run("ScatterND", {data, idx, upd}, {{"reduction", std::string("mul")}}).to_doubles(),
            (std::vector<double>{1, 2, 60, 240}));
}

TEST(ScatterND, UpdatesShapeIsChecked) {
  EXPECT_EQ(error_of("ScatterND", {f32({2, 2}, {1, 2, 3, 4}), ints(DType::i64, {1, 1}, {0}),
                                   f32({1, 3}, {1, 2, 3})}),
            "ScatterND: updates [1,3] must have shape [1,2]");
}

}  // namespace
}  // namespace orch
