// prim.Conv and prim.ConvTranspose lowered to Halide: groups, depthwise, dilation, strides,
// asymmetric pads, 1-D to 3-D, constant and variable weights, fused epilogues.
#include <gtest/gtest.h>

#include <random>

#include "../common/conv_cases.h"
#include "halide_util.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"

namespace orch::codegen {
namespace {

using conv_cases::conv_graph;
using conv_cases::ConvCase;
using conv_cases::Ints;
using conv_cases::random_case;

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

// Fewer than 4 output channels: the register block spans several vectors of each output row
// (with a tail row of 37 that no whole block covers); unpadded dims read without bounds checks.
TEST(HalideConv, FewOutputChannelsUnpaddedAndPadded) {
  for (int64_t m : {1, 2, 3}) {
    for (bool padded : {false, true}) {
      for (int64_t width : {37, 232}) {
        ConvCase cc{.c = 5,
                    .m = m,
                    .spatial = {9, width},
                    .kernel = {3, 5},
                    .pads = padded ? Ints{1, 2, 1, 2} : Ints{0, 0, 0, 0}};
        Graph g = conv_graph(cc, false, m, true);
        EXPECT_EQ(halide_matches(g, m), "") << m << " channels, padded " << padded << ", " << width;
      }
    }
  }
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
