// Staged regions of GPU tile configs, derived by hand: their affine origins, sizes, and the
// kernels and configs that stage nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/text_format.h"
#include "schedule/gpu/gpu_machine.h"
#include "schedule/gpu/gpu_staging.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {
namespace {

std::vector<StagedRegion> regions_of(const char* text, const GpuTileConfig& config) {
  Graph g = parse_graph(text);
  return staged_regions(make_tile_graph(g), config);
}

TEST(GpuStaging, MatMulOperandsMoveWithTheirBlockDims) {
  // [64,32]x[32,64] in 16x16 blocks: A's rows 16*b0.. (16 rows, all 32 columns), B's columns
  // 16*b1.. (all 32 rows, 16 columns).
  std::vector<StagedRegion> r = regions_of(R"(graph g(%a: f32[64,32], %b: f32[32,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  return %m
})",
                                           {{16, 16}, {2, 2}, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].value, 0);
  EXPECT_EQ(r[0].offset, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r[0].step, (std::vector<std::vector<int64_t>>{{16, 0}, {0, 0}}));
  EXPECT_EQ(r[0].size, (std::vector<int64_t>{16, 32}));
  EXPECT_EQ(r[1].value, 1);
  EXPECT_EQ(r[1].step, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 16}}));
  EXPECT_EQ(r[1].size, (std::vector<int64_t>{32, 16}));
}

TEST(GpuStaging, ReduceStepsMoveTheWindowOfTheSteppedNode) {
  // Steps of 8 along K = 32: A's window is columns 8*s.. of its rows, B's rows 8*s.. of its
  // columns.
  Graph g = parse_graph(R"(graph g(%a: f32[64,32], %b: f32[32,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  return %m
})");
  std::vector<StagedRegion> r = staged_regions(make_tile_graph(g), {{16, 16}, {2, 2}, 8}, 0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].offset, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r[0].step, (std::vector<std::vector<int64_t>>{{16, 0}, {0, 0}}));
  EXPECT_EQ(r[0].reduce_step, (std::vector<std::vector<int64_t>>{{0}, {8}}));
  EXPECT_EQ(r[0].size, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(r[1].step, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 16}}));
  EXPECT_EQ(r[1].reduce_step, (std::vector<std::vector<int64_t>>{{8}, {0}}));
  EXPECT_EQ(r[1].size, (std::vector<int64_t>{8, 16}));
  EXPECT_TRUE(r[0].stepped());
}

TEST(GpuStaging, PaddedConvolutionHaloStartsBeforeTheBlock) {
  // 3x3, pad 1, 16x16 input in 4x4 output blocks: rows 4*b2 - 1 .. 4*b2 + 4 (6 rows), clamped
  // to 0 for the first block and to 15 for the last, both inside the affine box. The weights
  // are read whole by every block.
  std::vector<StagedRegion> r = regions_of(R"(graph g(%x: f32[1,2,16,16], %w: f32[4,2,3,3]) {
  %y: f32[1,4,16,16] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  return %y
})",
                                           {{1, 4, 4, 4}, {1, 1, 1, 1}, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].offset, (std::vector<int64_t>{0, 0, -1, -1}));
  EXPECT_EQ(r[0].step[2], (std::vector<int64_t>{0, 0, 4, 0}));
  EXPECT_EQ(r[0].step[3], (std::vector<int64_t>{0, 0, 0, 4}));
  EXPECT_EQ(r[0].size, (std::vector<int64_t>{1, 2, 6, 6}));
  EXPECT_EQ(r[1].offset, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(r[1].size, (std::vector<int64_t>{4, 2, 3, 3}));
}

TEST(GpuStaging, StepwiseConfigsAndWhatAConcatReadsStageNothing) {
  const char* matmul = R"(graph g(%a: f32[64,32], %b: f32[32,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  return %m
})";
  EXPECT_TRUE(regions_of(matmul, {{16, 16}, {2, 2}, 8}).empty());
  // A Concat's inputs are read by some blocks and not others: no affine origin, nor for what
  // they are computed from.
  EXPECT_TRUE(regions_of(R"(graph g(%a: f32[64,32], %b: f32[32,64], %c: f32[64,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  %y: f32[128,64] = prim.Concat(%m, %c) {axis = 0}
  return %y
})",
                         {{16, 16}, {2, 2}, 0})
                  .empty());
}

// A Concat or a Reshape that splits dims places its own inputs irregularly, not its output:
// the MatMul's operands still move with the block (the concatenated rows 8*b0.., the reshaped
// batch b0), while the Concat's and the Reshape's inputs are read from memory.
TEST(GpuStaging, OperandsMadeByAnIrregularPrimitiveAreStillStaged) {
  std::vector<StagedRegion> concat =
      regions_of(R"(graph g(%a: f32[8,32], %b: f32[8,32], %w: f32[32,16]) {
  %c: f32[16,32] = prim.Concat(%a, %b) {axis = 0}
  %m: f32[16,16] = prim.MatMul(%c, %w)
  return %m
})",
                 {{8, 8}, {2, 2}, 0});
  ASSERT_EQ(concat.size(), 2u);
  EXPECT_EQ(concat[0].value, 2);  // %w: all 32 rows, the block's 8 columns
  EXPECT_EQ(concat[0].step, (std::vector<std::vector<int64_t>>{{0, 0}, {0, 8}}));
  EXPECT_EQ(concat[0].size, (std::vector<int64_t>{32, 8}));
  EXPECT_EQ(concat[1].value, 3);  // %c: the block's 8 rows, all 32 columns
  EXPECT_EQ(concat[1].step, (std::vector<std::vector<int64_t>>{{8, 0}, {0, 0}}));
  EXPECT_EQ(concat[1].size, (std::vector<int64_t>{8, 32}));

  Graph split = parse_graph(R"(graph g(%x: f32[4,64], %w: f32[4,16,8]) {
  %r: f32[4,4,16] = prim.Reshape(%x) {shape = [4, 4, 16]}
  %m: f32[4,4,8] = prim.MatMul(%r, %w)
  return %m
})");
  TileGraph tg = make_tile_graph(split);
  EXPECT_EQ(affinely_placed(tg), (std::vector<bool>{false, true, true, true}));
  std::vector<StagedRegion> r = staged_regions(tg, {{1, 4, 8}, {1, 1, 1}, 0});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].value, 1);  // %w: batch b0, all of it
  EXPECT_EQ(r[0].step, (std::vector<std::vector<int64_t>>{{1, 0, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(r[1].value, 2);  // %r: batch b0, all of it
  EXPECT_EQ(r[1].step, (std::vector<std::vector<int64_t>>{{1, 0, 0}, {0, 0, 0}, {0, 0, 0}}));
  EXPECT_EQ(r[1].size, (std::vector<int64_t>{1, 4, 16}));
}

// The analytic model stages what the code stages: nothing that a Concat reads.
TEST(GpuStaging, TheModelStagesNothingWhereTheCodeCannot) {
  GpuMachine h200 = load_gpu(std::string(ORCH_SOURCE_DIR) + "/machines/h200.json");
  Graph plain = parse_graph(R"(graph g(%a: f32[64,32], %b: f32[32,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  return %m
})");
  Graph concat = parse_graph(R"(graph g(%a: f32[64,32], %b: f32[32,64], %c: f32[64,64]) {
  %m: f32[64,64] = prim.MatMul(%a, %b)
  %y: f32[128,64] = prim.Concat(%m, %c) {axis = 0}
  return %y
})");
  // 16 rows of A and 16 columns of B, all 32 of K, rows at an odd pitch as the code lays them
  // out: (16 * 33 + 32 * 17) * 4 bytes.
  EXPECT_EQ(analyze(make_tile_graph(plain), h200, {{16, 16}, {2, 2}, 0}).shared_bytes, 4288);
  GpuTileCost c = analyze(make_tile_graph(concat), h200, {{16, 16}, {2, 2}, 0});
  EXPECT_EQ(c.shared_bytes, 0);
  EXPECT_EQ(std::count(c.staged.begin(), c.staged.end(), true), 0);
}

// An elementwise kernel reads each element once: nothing is worth staging.
TEST(GpuStaging, ValuesReadOncePerElementAreNotStaged) {
  EXPECT_TRUE(regions_of(R"(graph g(%x: f32[64,64]) {
  %y: f32[64,64] = prim.Elementwise(%x) {fn = "relu"}
  return %y
})",
                         {{16, 16}, {1, 1}, 0})
                  .empty());
}

}  // namespace
}  // namespace orch::schedule
