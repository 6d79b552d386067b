// prim.Conv and prim.ConvTranspose lowered to Halide: groups, depthwise, dilation, strides,
// asymmetric pads, 1-D to 3-D, constant and variable weights, fused epilogues.
#include <gtest/gtest.h>

#include <random>

#include "halide_util.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"

namespace orch::codegen {
namespace {

using Ints = std::vector<int64_t>;

struct ConvCase {
  int64_t n = 1, c = 4, m = 4, group = 1;
  Ints spatial = {8, 8}, kernel = {3, 3}, strides = {1, 1}, dilations = {1, 1}, pads = {1, 1, 1, 1},
       output_padding = {};
  bool constant_weights = true;
};

int64_t pick(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// A graph computing one convolution of `cc` (plus `epilogue` on its result when set).
Graph conv_graph(const ConvCase& cc, bool transposed, uint64_t seed, bool epilogue = false) {
  Graph g;
  Builder b(g);
  Shape x = {cc.n, cc.c},
        w = transposed ? Shape{cc.c, cc.m / cc.group} : Shape{cc.m, cc.c / cc.group};
  x.insert(x.end(), cc.spatial.begin(), cc.spatial.end());
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  ValueId xv = b.input("x", {DType::f32, x});
  ValueId wv = cc.constant_weights ? b.constant(interp::random_tensor({DType::f32, w}, seed))
                                   : b.input("w", {DType::f32, w});
  Attributes a = {
      {"strides", cc.strides}, {"dilations", cc.dilations}, {"pads", cc.pads}, {"group", cc.group}};
  if (transposed)
    a["output_padding"] =
        cc.output_padding.empty() ? Ints(cc.spatial.size(), 0) : cc.output_padding;
  ValueId y = b.op(transposed ? "prim.ConvTranspose" : "prim.Conv", {xv, wv}, a);
  if (epilogue) {
    // Bias as fission adds it (reshape + broadcast), then ReLU.
    Shape ys = g.value(y).type.shape;
    Shape ones(ys.size(), 1);
    ones[1] = ys[1];
    ValueId bias = b.constant(interp::random_tensor({DType::f32, {ys[1]}}, seed + 1));
    bias = b.op("prim.Reshape", {bias}, {{"shape", ones}});
    bias = b.op("prim.Broadcast", {bias}, {{"shape", ys}});
    y = b.op("prim.Elementwise", {y, bias}, {{"fn", std::string("add")}});
    y = b.op("prim.Elementwise", {y}, {{"fn", std::string("relu")}});
  }
  b.output(y);
  return g;
}

// A random valid convolution of `rank` spatial dims (the output has at least one element).
ConvCase random_case(std::mt19937& rng, size_t rank, bool transposed) {
  ConvCase cc;
  int64_t per_group_c = pick(rng, 1, 6), per_group_m = pick(rng, 1, 6);
  cc.group = pick(rng, 0, 2) == 0 ? 1 : pick(rng, 2, 4);
  cc.n = pick(rng, 1, 2);
  cc.c = per_group_c * cc.group;
  cc.m = per_group_m * cc.group;
  cc.constant_weights = pick(rng, 0, 1) == 1;
  cc.spatial.clear(), cc.kernel.clear(), cc.strides.clear(), cc.dilations.clear();
  Ints begin, end;
  for (size_t s = 0; s < rank; ++s) {
    cc.kernel.push_back(pick(rng, 1, 3));
    cc.strides.push_back(pick(rng, 1, 2));
    cc.dilations.push_back(pick(rng, 1, 2));
    int64_t extent = (cc.kernel[s] - 1) * cc.dilations[s] + 1;
    cc.spatial.push_back(pick(rng, extent, extent + (rank == 3 ? 3 : 9)));
    begin.push_back(pick(rng, 0, extent - 1));
    end.push_back(pick(rng, 0, extent - 1));
    if (transposed) cc.output_padding.push_back(pick(rng, 0, cc.strides[s] - 1));
  }
  cc.pads = begin;
  cc.pads.insert(cc.pads.end(), end.begin(), end.end());
  return cc;
}

TEST(HalideConv, RandomConvolutions) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    Graph g = conv_graph(random_case(rng, 1 + trial % 3, false), false, trial);
    EXPECT_EQ(halide_reject(g), "");
    EXPECT_EQ(halide_matches(g, trial), "") << "trial " << trial;
  }
}

TEST(HalideConv, RandomTransposedConvolutions) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 6; ++trial) {
    Graph g = conv_graph(random_case(rng, 1 + trial % 2, true), true, trial);
    EXPECT_EQ(halide_matches(g, trial), "") << "trial " << trial;
  }
}

TEST(HalideConv, DepthwiseWithEpilogue) {
  Graph g = conv_graph({.c = 16, .m = 16, .group = 16, .spatial = {9, 7}}, false, 1, true);
  EXPECT_EQ(halide_matches(g, 1), "");
}

TEST(HalideConv, DilatedStride2AsymmetricPadsWithEpilogue) {
  ConvCase cc{.n = 2,
              .c = 6,
              .m = 10,
              .group = 2,
              .spatial = {13, 11},
              .strides = {2, 2},
              .dilations = {2, 1},
              .pads = {2, 0, 1, 2},
              .constant_weights = false};
  Graph g = conv_graph(cc, false, 2, true);
  EXPECT_EQ(halide_matches(g, 2), "");
}

TEST(HalideConv, UnderExplicitSchedules) {
  Graph g = conv_graph({.c = 8, .m = 12, .spatial = {10, 20}}, false, 3, true);
  ValueId out = g.outputs()[0];
  for (HalidePlacement p : {HalidePlacement::tile, HalidePlacement::root}) {
    HalideSchedule s;
    s.tiles[out] = {1, 4, 3, 8};
    s.vector_width = 8;
    s.parallel_dim = 1;
    for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
      if (g.value(v).producer != kNoNode && v != out) s.placement[v] = p;
    EXPECT_EQ(halide_matches(g, 3, &s), "") << static_cast<int>(p);
  }
}

}  // namespace
}  // namespace orch::codegen
