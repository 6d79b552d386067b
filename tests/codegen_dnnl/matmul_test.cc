// prim.MatMul on oneDNN: batched, broadcast batch dims, transposed and reshaped operands.
#include "dnnl_test_util.h"
#include "ir/error.h"

namespace orch::codegen::dnnl_test {
namespace {

using Ints = std::vector<int64_t>;

// Operands [batch..., m, k] and [batch..., k, n] with up to two batch dims of at most
// `max_batch`, m in [1, 30] and k, n in [min_kn, 40].
std::pair<Shape, Shape> random_operands(std::mt19937& rng, int64_t max_batch, int64_t min_kn) {
  Shape a, b;
  for (int64_t d = 0, r = pick(rng, 0, 2); d < r; ++d) a.push_back(pick(rng, 1, max_batch));
  b = a;
  int64_t m = pick(rng, 1, 30), k = pick(rng, min_kn, 40), n = pick(rng, min_kn, 40);
  a.insert(a.end(), {m, k});
  b.insert(b.end(), {k, n});
  return {a, b};
}

TEST(DnnlMatMul, RandomBatchedShapes) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 12; ++trial) {
    Net n;
    auto [a, b] = random_operands(rng, 4, 1);
    ValueId w = trial % 2 == 0 ? n.input(b) : n.weights(b, trial);
    n.b.output(n.op("prim.MatMul", {n.input(a), w}));
    expect_matches_interpreter(n.g, trial);
  }
}

// Constant weights may also be stored column-major; the result is the same MatMul.
TEST(DnnlMatMul, TransposedWeightsMatchTheInterpreter) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 8; ++trial) {
    Net n;
    auto [a, b] = random_operands(rng, 3, 2);
    n.b.output(n.op("prim.MatMul", {n.input(a), n.weights(b, trial)}));
    EXPECT_EQ(dnnl_configs(n.g), std::vector<std::string>{"weights=transposed"})
        << format_shape(a) << " x " << format_shape(b);
    expect_matches_interpreter(n.g, trial, "weights=transposed");
  }
}

// Weights computed at run time are read where they are: there is no layout to choose.
TEST(DnnlMatMul, RuntimeWeightsHaveNoConfigurations) {
  Net n;
  n.b.output(n.op("prim.MatMul", {n.input({8, 16}), n.input({16, 4})}));
  EXPECT_TRUE(dnnl_configs(n.g).empty());
  EXPECT_THROW(dnnl_compile(n.g, "weights=transposed"), Error);
}

TEST(DnnlMatMul, ConvolutionConfigurationIsRefused) {
  Net n;
  n.b.output(n.op("prim.MatMul", {n.input({8, 16}), n.weights({16, 4}, 1)}));
  EXPECT_THROW(dnnl_compile(n.g, "layout=plain"), Error);
}

// fission broadcasts batch dims with prim.Broadcast before the MatMul: absorbed as size-1 dims.
TEST(DnnlMatMul, BroadcastBatchDims) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 6; ++trial) {
    Net n;
    int64_t b0 = pick(rng, 2, 4), b1 = pick(rng, 2, 3), m = pick(rng, 1, 20), k = pick(rng, 1, 30),
            nn = pick(rng, 1, 20);
    bool left = trial % 2 == 0;
    ValueId a = n.input({left ? 1 : b0, b1, m, k});
    ValueId b = n.input({left ? b0 : 1, trial % 3 == 0 ? 1 : b1, k, nn});
    a = n.op("prim.Broadcast", {a}, {{"shape", Ints{b0, b1, m, k}}});
    b = n.op("prim.Broadcast", {b}, {{"shape", Ints{b0, b1, k, nn}}});
    n.b.output(n.op("prim.MatMul", {a, b}));
    expect_matches_interpreter(n.g, trial);
  }
}

TEST(DnnlMatMul, TransposedOperands) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 8; ++trial) {
    Net n;
    int64_t b = pick(rng, 1, 3), m = pick(rng, 1, 30), k = pick(rng, 1, 40), nn = pick(rng, 1, 30);
    bool ta = trial & 1, tb = trial & 2;
    bool rank3 = trial & 4;
    auto shape = [&](int64_t r, int64_t c) { return rank3 ? Shape{b, r, c} : Shape{r, c}; };
    Ints swap = rank3 ? Ints{0, 2, 1} : Ints{1, 0};
    ValueId a = ta ? n.op("prim.Transpose", {n.input(shape(k, m))}, {{"perm", swap}})
                   : n.input(shape(m, k));
    ValueId w = tb ? n.op("prim.Transpose", {n.weights(shape(nn, k), trial)}, {{"perm", swap}})
                   : n.input(shape(k, nn));
    n.b.output(n.op("prim.MatMul", {a, w}));
    expect_matches_interpreter(n.g, trial);
  }
}

// Reshapes that merge or split dims keep the strides affine: [B*M, K] -> [B, M, K].
TEST(DnnlMatMul, ReshapedOperands) {
  Net n;
  ValueId a = n.op("prim.Reshape", {n.input({12, 16})}, {{"shape", Ints{3, 4, 16}}});
  ValueId w = n.op("prim.Reshape", {n.input({3, 2, 8, 5})}, {{"shape", Ints{3, 16, 5}}});
  n.b.output(n.op("prim.MatMul", {a, w}));
  expect_matches_interpreter(n.g, 7);
}

// A Transpose then a Reshape splitting the (strided) last dim: [2, 6, 5] -> [2, 5, 6] ->
// [2, 5, 2, 3] is still a strided view.
TEST(DnnlMatMul, TransposeThenSplitDim) {
  Net n;
  ValueId a = n.op("prim.Transpose", {n.input({2, 6, 5})}, {{"perm", Ints{0, 2, 1}}});
  a = n.op("prim.Reshape", {a}, {{"shape", Ints{2, 5, 2, 3}}});
  n.b.output(n.op("prim.MatMul", {a, n.input({2, 5, 3, 4})}));
  expect_matches_interpreter(n.g, 8);
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
