// TopK: values and indices by hand, ties broken by the lower index, exact integers.
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

// TopK of `x` with constant K; returns {values, indices}.
std::vector<Tensor> top_k(Tensor x, int64_t k, Attributes attrs = {}) {
  Graph g;
  Builder b(g);
  ValueId kv = b.constant(Tensor::from_ints(DType::i64, {1}, Ints{k}));
  for (ValueId v : b.op_multi("TopK", {b.constant(std::move(x)), kv}, std::move(attrs), 2))
    b.output(v);
  return interp::interpret(g, {});
}

TEST(TopK, LargestAndSmallestAlongLastAxis) {
  Tensor x = f32({2, 3}, {1, 3, 2, 6, 5, 4});
  auto largest = top_k(x, 2);
  EXPECT_EQ(largest[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(largest[0].to_doubles(), (Doubles{3, 2, 6, 5}));
  EXPECT_EQ(largest[1].to_ints(), (Ints{1, 2, 0, 1}));
  auto smallest = top_k(x, 2, {{"largest", int64_t{0}}});
  EXPECT_EQ(smallest[0].to_doubles(), (Doubles{1, 2, 4, 5}));
  EXPECT_EQ(smallest[1].to_ints(), (Ints{0, 2, 2, 1}));
}

TEST(TopK, TiesKeepTheLowerIndexFirst) {
  Tensor x = f32({4}, {2, 1, 2, 1});
  auto largest = top_k(x, 3);
  EXPECT_EQ(largest[0].to_doubles(), (Doubles{2, 2, 1}));
  EXPECT_EQ(largest[1].to_ints(), (Ints{0, 2, 1}));
  auto smallest = top_k(x, 3, {{"largest", int64_t{0}}});
  EXPECT_EQ(smallest[0].to_doubles(), (Doubles{1, 1, 2}));
  EXPECT_EQ(smallest[1].to_ints(), (Ints{1, 3, 0}));
}

TEST(TopK, AlongAxisZero) {
  auto out = top_k(f32({3, 2}, {1, 6, 3, 2, 2, 5}), 1, {{"axis", int64_t{0}}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2}));
  EXPECT_EQ(out[0].to_doubles(), (Doubles{3, 6}));
  EXPECT_EQ(out[1].to_ints(), (Ints{1, 0}));
}

TEST(TopK, Int64ValuesAreExact) {
  int64_t big = (int64_t{1} << 62) + 1;
  auto out = top_k(Tensor::from_ints(DType::i64, {3}, Ints{big - 1, big, 5}), 2);
  EXPECT_EQ(out[0].to_ints(), (Ints{big, big - 1}));
  EXPECT_EQ(out[1].to_ints(), (Ints{1, 0}));
}

TEST(TopK, KLargerThanTheAxisIsAnError) {
  try {
    top_k(f32({3}, {1, 2, 3}), 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "TopK: TopK K = 4 is outside [0, 3] for axis 0 of [3]");
  }
}

}  // namespace
}  // namespace orch
