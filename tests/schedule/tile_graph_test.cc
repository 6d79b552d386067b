// Hand-checked tile graphs on the test machine (schedule_util.h: 64-byte lines, 4 cores,
// bandwidth weights L1 1/4, L2 1/2, DRAM 1). The primitive graphs are what fission emits.
#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "schedule/search.h"
#include "schedule/tile_graph.h"
#include "schedule_util.h"

namespace orch::schedule {
namespace {

constexpr size_t kL1 = 1, kL2 = 2, kDram = 3;

Box box(std::initializer_list<Interval> dims) {
  return Box(dims);
}

const Box& region(const Graph& g, const Regions& r, const char* name) {
  ValueId v = g.find_value(name);
  EXPECT_NE(v, kNoValue) << name;
  EXPECT_TRUE(r.at(v).has_value()) << name;
  return *r.at(v);
}

TEST(TileGraph, SoftmaxRows) {
  Graph g = parse_graph(test::kSoftmaxRows);
  TileGraph tg = make_tile_graph(g);
  Machine m = test::test_machine();
  // Row 2: the reductions need the whole row, so everything above them does too.
  Regions r = propagate(tg, box({{2, 2}, {10, 20}}));
  EXPECT_EQ(region(g, r, "bsum"), box({{2, 2}, {10, 20}}));
  EXPECT_EQ(region(g, r, "sum"), box({{2, 2}, {0, 0}}));
  EXPECT_EQ(region(g, r, "exp"), box({{2, 2}, {0, 63}}));  // hull of y's and sum's needs
  EXPECT_EQ(region(g, r, "x"), box({{2, 2}, {0, 63}}));

  // Tile (1,1) of row 1 computes 1 (y) + 1 (bsum) + 64 (sum: 1 x 64 reduce) + 64*4 (exp, sub,
  // bmax, max: 1 x 64 reduce) = 322; tile (1,2): 2 + 2 + 64*5 = 324 < 322 * 5/4, so the row is
  // whole; then tile (2,64) computes 2 * 448 = 896 >= 448 * 5/4: one row.
  EXPECT_EQ(tile_work(tg, {1, 1}, {1, 1}), 322);
  EXPECT_EQ(tile_work(tg, {1, 2}, {1, 1}), 324);
  EXPECT_EQ(tile_work(tg, {1, 64}, {1, 0}), 448);
  EXPECT_EQ(base_tile(tg), (std::vector<int64_t>{1, 64}));

  ScoredConfig one_row = configure(tg, m, {1, 64}, kL2);
  // bmax, sub and bsum are inlined (one consumer reading each element once); max, exp (two
  // consumers) and sum (a reduction) are kept in L1.
  auto level = [&](const char* name) { return one_row.config.level[g.find_value(name)]; };
  EXPECT_EQ(level("bmax"), 0);
  EXPECT_EQ(level("sub"), 0);
  EXPECT_EQ(level("bsum"), 0);
  EXPECT_EQ(level("max"), 1);
  EXPECT_EQ(level("exp"), 1);
  EXPECT_EQ(level("sum"), 1);
  EXPECT_EQ(level("x"), -1);
  // Reduce steps grow from one line (16 floats) to the whole row: x's row is held anyway.
  EXPECT_EQ(one_row.config.reduce_steps[0], (std::vector<int64_t>{64}));
  EXPECT_EQ(one_row.config.vector_width, 8);  // 32-byte SIMD / 4-byte floats
  EXPECT_EQ(one_row.config.parallel_dim, 0);
  // Best-fit replay, sizes rounded to 64-byte lines: node 0 loads x (256 @0) and writes max
  // (64 @256, top 320); max dies at node 1, x at node 2: free [0,320). exp (256) takes @0,
  // sum (64) @256; sum dies at node 5; y (256) finds no 256-byte hole and extends the free block
  // at the top: @256, peak 512.
  EXPECT_EQ(one_row.cost.footprint[kL1], 512);
  EXPECT_EQ(one_row.cost.footprint[kL2], 512);
  // Per tile at L1: x 256 + y 256 + exp 2*256 (written, read back) + max 2*64 + sum 2*64 (one
  // float each, a whole line) = 1280; 8 tiles: 10240. At L2 and DRAM only x and y: 512 * 8.
  EXPECT_EQ(one_row.cost.traffic[kL1], 10240);
  EXPECT_EQ(one_row.cost.traffic[kL2], 4096);
  EXPECT_EQ(one_row.cost.traffic[kDram], 4096);
  // Cost: (10240/4 + 4096/2 + 4096) / 8 tiles = 1088 DRAM bytes per tile; 2 waves on 4 cores.
  EXPECT_EQ(one_row.cost.tiles, 8);
  EXPECT_EQ(one_row.cost.waves, 2);
  EXPECT_DOUBLE_EQ(one_row.cost.score, (1088 + 1) * 2);

  // Two rows: L1 per tile 512 + 512 + 2*512 + 2*64 + 2*64 = 2304 (the two floats of max share a
  // line), 4 tiles: 9216; L2 = DRAM = 4096. (9216/4 + 2048 + 4096) / 4 = 2112, one wave. Four
  // rows: (8704/4 + 6144) / 2 = 4160; all rows: 8448/4 + 6144 = 8256. Two rows win.
  SearchResult result = search_tiles(tg, m, {.top_k = 3});
  ASSERT_EQ(result.configs.size(), 3u);
  EXPECT_EQ(result.configs[0].config.tile, (std::vector<int64_t>{2, 64}));
  EXPECT_DOUBLE_EQ(result.configs[0].cost.score, 2113);
  EXPECT_EQ(result.configs[1].config.tile, (std::vector<int64_t>{1, 64}));
  EXPECT_EQ(result.configs[2].config.tile, (std::vector<int64_t>{4, 64}));
  EXPECT_DOUBLE_EQ(result.configs[2].cost.score, 4161);
}

TEST(TileGraph, LayerNormRows) {
  Graph g = parse_graph(R"(graph main(%x: f32[4,32], %g: f32[32], %b: f32[32]) {
  const %c1 = f32[]{0.03125}
  const %c9 = f32[]{1e-05}
  %s0: f32[4,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  %mean: f32[4,1] = prim.Elementwise(%s0, %c1) {fn = "mul"}
  %bmean: f32[4,32] = prim.Broadcast(%mean) {shape = [4, 32]}
  %d: f32[4,32] = prim.Elementwise(%x, %bmean) {fn = "sub"}
  %d2: f32[4,32] = prim.Elementwise(%d, %d) {fn = "mul"}
  %s1: f32[4,1] = prim.Reduce(%d2) {axes = [1], kind = "sum"}
  %var: f32[4,1] = prim.Elementwise(%s1, %c1) {fn = "mul"}
  %ve: f32[4,1] = prim.Elementwise(%var, %c9) {fn = "add"}
  %sd: f32[4,1] = prim.Elementwise(%ve) {fn = "sqrt"}
  %inv: f32[4,1] = prim.Elementwise(%sd) {fn = "reciprocal"}
  %binv: f32[4,32] = prim.Broadcast(%inv) {shape = [4, 32]}
  %n: f32[4,32] = prim.Elementwise(%d, %binv) {fn = "mul"}
  %g2: f32[1,32] = prim.Reshape(%g) {shape = [1, 32]}
  %bg: f32[4,32] = prim.Broadcast(%g2) {shape = [4, 32]}
  %ng: f32[4,32] = prim.Elementwise(%n, %bg) {fn = "mul"}
  %b2: f32[1,32] = prim.Reshape(%b) {shape = [1, 32]}
  %bb: f32[4,32] = prim.Broadcast(%b2) {shape = [4, 32]}
  %y: f32[4,32] = prim.Elementwise(%ng, %bb) {fn = "add"}
  return %y
})");
  TileGraph tg = make_tile_graph(g);
  // Doubling a one-element tile along the row: 173 -> 186 elements computed (the statistics
  // already read the whole row), < 173 * 5/4.
  EXPECT_EQ(tile_work(tg, {1, 1}, {1, 1}), 173);
  EXPECT_EQ(base_tile(tg), (std::vector<int64_t>{1, 32}));
  // Columns 8..15 of row 3: the statistics need the whole row; gamma and beta only columns
  // 8..15 (Broadcast pins dim 0 of [1,32] to 0; Reshape [32] -> [1,32] is the identity on d1).
  Regions r = propagate(tg, box({{3, 3}, {8, 15}}));
  EXPECT_EQ(region(g, r, "x"), box({{3, 3}, {0, 31}}));
  EXPECT_EQ(region(g, r, "d"), box({{3, 3}, {0, 31}}));
  EXPECT_EQ(region(g, r, "inv"), box({{3, 3}, {0, 0}}));
  EXPECT_EQ(region(g, r, "g2"), box({{0, 0}, {8, 15}}));
  EXPECT_EQ(region(g, r, "g"), box({{8, 15}}));
  EXPECT_EQ(region(g, r, "b"), box({{8, 15}}));
  // One row per tile, 4 tiles: DRAM moves x 128 + gamma 128 + beta 128 + y 128 per tile (two
  // lines each; the scalar constants are immediates): 512 * 4 = 2048.
  ScoredConfig c = configure(tg, test::test_machine(), {1, 32}, kL2);
  EXPECT_EQ(c.cost.traffic[kDram], 2048);
  // d = x - mean, read by d2 (twice, one load) and by n: recomputed (its subtract and the
  // mean's multiply, 2 operations per element, within the budget) rather than kept.
  EXPECT_EQ(c.config.level[g.find_value("d")], 0);
  EXPECT_EQ(c.config.level[g.find_value("bg")], 0);
}

TEST(TileGraph, CheapValuesWithSeveralConsumersAreRecomputed) {
  Graph g = parse_graph(R"(graph main(%x: f32[64,256], %y: f32[64,256]) {
  const %half = f32[]{0.5}
  %a: f32[64,256] = prim.Elementwise(%x, %y) {fn = "add"}
  %h: f32[64,256] = prim.Elementwise(%a, %half) {fn = "mul"}
  %e: f32[64,256] = prim.Elementwise(%a) {fn = "exp"}
  %p: f32[64,256] = prim.Elementwise(%h, %e) {fn = "mul"}
  %q: f32[64,256] = prim.Elementwise(%e, %h) {fn = "sub"}
  %z: f32[64,256] = prim.Elementwise(%p, %q) {fn = "add"}
  return %z
})");
  ScoredConfig c = configure(make_tile_graph(g), test::test_machine(), {1, 256}, kL2);
  auto level = [&](const char* name) { return c.config.level[g.find_value(name)]; };
  // a (one add, read by h and e) and h (a multiply over a: 2 operations, read by p and q) are
  // recomputed; e (an exp, read by p and q) is kept.
  EXPECT_EQ(level("a"), 0);
  EXPECT_EQ(level("h"), 0);
  EXPECT_EQ(level("e"), 1);
  // 64 row tiles > 8 tasks per core x 4 cores: grouped into 32 tasks.
  EXPECT_EQ(c.config.parallel_dim, 0);
  EXPECT_EQ(c.config.parallel_tasks, 32);
  // 16 tiles of 4 rows: one task each.
  EXPECT_EQ(
      configure(make_tile_graph(g), test::test_machine(), {4, 256}, kL2).config.parallel_tasks, 0);
}

TEST(TileGraph, MaterializedValueRereadsItsInputs) {
  Graph g = parse_graph(R"(graph main(%x: f32[8,64]) {
  %s: f32[8,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  %sb: f32[8,64] = prim.Broadcast(%s) {shape = [8, 64]}
  %y: f32[8,64] = prim.Elementwise(%x, %sb) {fn = "sub"}
  return %y
})");
  TileGraph tg = make_tile_graph(g);
  TileConfig c;
  c.tile = {1, 64};
  c.root = g.find_value("y");
  c.memory_level = static_cast<int>(kDram);
  c.reduce_steps = {{64}, {}, {}};
  c.level.assign(g.num_values(), -1);
  c.level[g.find_value("sb")] = 0;
  c.level[g.find_value("s")] = static_cast<int>(kL1);
  // Per row tile at DRAM: x 256 + y 256 = 512; 8 tiles 4096.
  EXPECT_EQ(evaluate(tg, test::test_machine(), c, kL2).traffic[kDram], 4096);
  // s materialized: written and read back (a line each way, 128), and its pass reads x again
  // (256): 896 per tile, 7168.
  c.level[g.find_value("s")] = static_cast<int>(kDram);
  EXPECT_EQ(evaluate(tg, test::test_machine(), c, kL2).traffic[kDram], 7168);
}

TEST(TileGraph, MatMulBiasGelu) {
  Graph g = parse_graph(R"(graph main(%a: f32[64,32], %w: f32[32,48], %bias: f32[48]) {
  const %c4 = f32[]{0.70710677}
  const %c7 = f32[]{0.5}
  const %c9 = f32[]{1}
  %m: f32[64,48] = prim.MatMul(%a, %w)
  %r1: f32[1,48] = prim.Reshape(%bias) {shape = [1, 48]}
  %b2: f32[64,48] = prim.Broadcast(%r1) {shape = [64, 48]}
  %s: f32[64,48] = prim.Elementwise(%m, %b2) {fn = "add"}
  %e5: f32[64,48] = prim.Elementwise(%s, %c4) {fn = "mul"}
  %e6: f32[64,48] = prim.Elementwise(%e5) {fn = "erf"}
  %e8: f32[64,48] = prim.Elementwise(%s, %c7) {fn = "mul"}
  %e10: f32[64,48] = prim.Elementwise(%c9, %e6) {fn = "add"}
  %y: f32[64,48] = prim.Elementwise(%e8, %e10) {fn = "mul"}
  return %y
})");
  TileGraph tg = make_tile_graph(g);
  Machine m = test::test_machine();
  // A MatMul tile never lowers work per output by growing to full rows or columns.
  EXPECT_EQ(base_tile(tg), (std::vector<int64_t>{1, 1}));
  Regions r = propagate(tg, box({{16, 31}, {16, 31}}));
  EXPECT_EQ(region(g, r, "a"), box({{16, 31}, {0, 31}}));  // k whole
  EXPECT_EQ(region(g, r, "w"), box({{0, 31}, {16, 31}}));
  EXPECT_EQ(region(g, r, "bias"), box({{16, 31}}));
  EXPECT_EQ(region(g, r, "s"), box({{16, 31}, {16, 31}}));

  ScoredConfig c = configure(tg, m, {16, 16}, kL2);
  // m (a reduction) is kept; s = m + bias (two consumers) is recomputed in both (its add and
  // the bias Reshape: 2 operations per element), like the rest.
  EXPECT_EQ(c.config.level[g.find_value("m")], 1);
  for (const char* inl : {"r1", "b2", "s", "e5", "e6", "e8", "e10"})
    EXPECT_EQ(c.config.level[g.find_value(inl)], 0) << inl;
  // k steps: 16 (one line of floats), grown to 32 (= K) while the tile fits L1.
  EXPECT_EQ(c.config.reduce_steps[0], (std::vector<int64_t>{32}));
  // Footprint, step 32: node 0 loads a 16x32 (2048 @0) and w 32x16 (2048 @2048), writes m
  // (1024 @4096, top 5120); a, w die: free [0,4096). bias (64) @0 at node 1, freed. m dies at
  // node 3 (s, inlined): free [0,5120). y (1024) at node 8 @0. Peak 5120.
  EXPECT_EQ(c.cost.footprint[kL1], 5120);
  // DRAM per 16x16 tile: a 16 full rows = 2048 contiguous bytes; w 32 runs of 64 bytes = 2048;
  // bias 64; y 16 runs of 64 = 1024. 5184 * 12 tiles = 62208.
  EXPECT_EQ(c.cost.tiles, 12);
  EXPECT_EQ(c.cost.traffic[kDram], 62208);
}

TEST(TileGraph, ConvReluMaxPoolHalo) {
  Graph g = parse_graph(R"(graph main(%x: f32[1,4,16,16], %w: f32[8,4,3,3]) {
  %c: f32[1,8,16,16] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  %r: f32[1,8,16,16] = prim.Elementwise(%c) {fn = "relu"}
  %s2: f32[1,8,8,8] = prim.Slice(%r) {ends = [1, 8, 16, 16], starts = [0, 0, 0, 0], steps = [1, 1, 2, 2]}
  %s3: f32[1,8,8,8] = prim.Slice(%r) {ends = [1, 8, 16, 17], starts = [0, 0, 0, 1], steps = [1, 1, 2, 2]}
  %s4: f32[1,8,8,8] = prim.Slice(%r) {ends = [1, 8, 17, 16], starts = [0, 0, 1, 0], steps = [1, 1, 2, 2]}
  %s5: f32[1,8,8,8] = prim.Slice(%r) {ends = [1, 8, 17, 17], starts = [0, 0, 1, 1], steps = [1, 1, 2, 2]}
  %cat: f32[4,8,8,8] = prim.Concat(%s2, %s3, %s4, %s5) {axis = 0}
  %r7: f32[4,1,8,8,8] = prim.Reshape(%cat) {shape = [4, 1, 8, 8, 8]}
  %red: f32[1,1,8,8,8] = prim.Reduce(%r7) {axes = [0], kind = "max"}
  %p: f32[1,8,8,8] = prim.Reshape(%red) {shape = [1, 8, 8, 8]}
  return %p
})");
  TileGraph tg = make_tile_graph(g);
  // Pool outputs rows/cols 2..3 of all channels: the Reshapes keep rows and columns apart
  // (evaluated per outer point), the window views cover relu rows 4..7 (2*2+0 .. 2*3+1), and
  // the 3x3 convolution reads a halo of one: x rows 3..8 (6 = 4 + 2).
  Regions r = propagate(tg, box({{0, 0}, {0, 7}, {2, 3}, {2, 3}}));
  EXPECT_EQ(region(g, r, "red"), box({{0, 0}, {0, 0}, {0, 7}, {2, 3}, {2, 3}}));
  EXPECT_EQ(region(g, r, "cat"), box({{0, 3}, {0, 7}, {2, 3}, {2, 3}}));
  EXPECT_EQ(region(g, r, "s2"), box({{0, 0}, {0, 7}, {2, 3}, {2, 3}}));
  EXPECT_EQ(region(g, r, "r"), box({{0, 0}, {0, 7}, {4, 7}, {4, 7}}));
  EXPECT_EQ(region(g, r, "c"), box({{0, 0}, {0, 7}, {4, 7}, {4, 7}}));
  EXPECT_EQ(region(g, r, "x"), box({{0, 0}, {0, 3}, {3, 8}, {3, 8}}));
  EXPECT_EQ(region(g, r, "w"), box({{0, 7}, {0, 3}, {0, 2}, {0, 2}}));
  // A border tile clamps its halo: x rows 0..4.
  Regions border = propagate(tg, box({{0, 0}, {0, 7}, {0, 1}, {0, 1}}));
  EXPECT_EQ(region(g, border, "x"), box({{0, 0}, {0, 3}, {0, 4}, {0, 4}}));

  // Tile [1,8,2,2]: 4 x 4 = 16 tiles. DRAM per tile: x is 4 channels x rows runs of at most 6
  // floats (one line each): rows per tile along h are 5, 6, 6, 5 (22), each w-tile likewise,
  // so sum over tiles = 4 channels * 64 B * (22 * 4) = 22528; w is whole and contiguous,
  // 288 floats = 1152 B, * 16 = 18432; p: 8 channels * 2 rows runs of 8 B = 16 lines = 1024,
  // * 16 = 16384. Total 57344.
  ScoredConfig c = configure(tg, test::test_machine(), {1, 8, 2, 2}, kL2);
  EXPECT_EQ(c.cost.tiles, 16);
  EXPECT_EQ(c.cost.traffic[kDram], 57344);
  // The relu output feeds four window views: kept, and so is the convolution.
  EXPECT_EQ(c.config.level[g.find_value("r")], 1);
  EXPECT_EQ(c.config.level[g.find_value("c")], 1);
  EXPECT_EQ(c.config.level[g.find_value("s2")], 0);
}

TEST(TileGraph, OnlyCheapValuesAreRecomputedWhereTheirConsumerReusesThem) {
  Graph g = parse_graph(R"(graph main(%x: f32[1,8,16,16], %s: f32[1,8,1,1]) {
  %e: f32[1,8,16,16] = prim.Elementwise(%x) {fn = "exp"}
  %u: f32[1,8,32,32] = prim.Resize(%e) {mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]}
  %a: f32[1,8,16,16] = prim.Elementwise(%x) {fn = "relu"}
  %v: f32[1,8,32,32] = prim.Resize(%a) {mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]}
  %r: f32[1,8,1,1] = prim.Elementwise(%s) {fn = "sqrt"}
  %b: f32[1,8,32,32] = prim.Broadcast(%r) {shape = [1, 8, 32, 32]}
  %w: f32[1,8,32,32] = prim.Elementwise(%u, %v) {fn = "add"}
  %y: f32[1,8,32,32] = prim.Elementwise(%w, %b) {fn = "mul"}
  return %y
})");
  ScoredConfig c = configure(make_tile_graph(g), test::test_machine(), {1, 1, 32, 32}, kL2);
  auto level = [&](const char* name) { return c.config.level[g.find_value(name)]; };
  // The upsamplings read each element four times, the broadcast each 1024 times: the exp and the
  // square root are kept, the ReLU (one cheap operation) recomputed per read. The broadcast and
  // the sum, read once per element, are inlined; the upsamplings are kept (a Resize's map has
  // an axis over its taps, like a reduction's).
  EXPECT_EQ(level("e"), 1);
  EXPECT_EQ(level("r"), 1);
  EXPECT_EQ(level("a"), 0);
  EXPECT_EQ(level("b"), 0);
  EXPECT_EQ(level("w"), 0);
  EXPECT_EQ(level("u"), 1);
  EXPECT_EQ(level("v"), 1);
}

TEST(TileGraph, TransposeReshape) {
  Graph g = parse_graph(R"(graph main(%x: f32[4,8,16]) {
  %t: f32[8,4,16] = prim.Transpose(%x) {perm = [1, 0, 2]}
  %y: f32[8,64] = prim.Reshape(%t) {shape = [8, 64]}
  return %y
})");
  TileGraph tg = make_tile_graph(g);
  // y row 2 = t[2, :, :] = x[:, 2, :]: 4 runs of 16 floats (64 B each) = 256 B.
  Regions r = propagate(tg, box({{2, 2}, {0, 63}}));
  EXPECT_EQ(region(g, r, "t"), box({{2, 2}, {0, 3}, {0, 15}}));
  EXPECT_EQ(region(g, r, "x"), box({{0, 3}, {2, 2}, {0, 15}}));
  // Half a row, columns 32..63: flat 160..191 = t[2, 2..3, :] = x[2..3, 2, :].
  r = propagate(tg, box({{2, 2}, {32, 63}}));
  EXPECT_EQ(region(g, r, "t"), box({{2, 2}, {2, 3}, {0, 15}}));
  EXPECT_EQ(region(g, r, "x"), box({{2, 3}, {2, 2}, {0, 15}}));
  EXPECT_EQ(line_bytes(box({{0, 3}, {2, 2}, {0, 15}}), {4, 8, 16}, 4, 64), 256);
  // Rows as tiles: 8 tiles * (x 256 + y 256) = 4096 at DRAM; t is inlined (one consumer).
  ScoredConfig c = configure(tg, test::test_machine(), {1, 64}, kL2);
  EXPECT_EQ(c.config.level[g.find_value("t")], 0);
  EXPECT_EQ(c.cost.traffic[kDram], 4096);
}

TEST(TileGraph, LineRounding) {
  // Inner dim partial: 3 runs of 5 floats, each one line.
  EXPECT_EQ(line_bytes(box({{0, 2}, {0, 4}}), {4, 32}, 4, 64), 3 * 64);
  // Inner dim full: the 3 rows are one run of 96 floats = 384 B = 6 lines.
  EXPECT_EQ(line_bytes(box({{0, 2}, {0, 31}}), {4, 32}, 4, 64), 384);
  // 17 floats = 68 B: two lines.
  EXPECT_EQ(line_bytes(box({{0, 16}}), {100}, 4, 64), 128);
  EXPECT_EQ(line_bytes(box({{3, 2}}), {100}, 4, 64), 0);
}

TEST(TileGraph, TileTooBigIsRejected) {
  Graph g = parse_graph(test::kSoftmaxRows);
  TileGraph tg = make_tile_graph(g);
  Machine m = test::test_machine();
  // Kept in L1 or L2 the row needs 512 B; materialized, x (256, dead after node 2) and y (256,
  // from node 6) share one 256-byte slot: still above 192.
  m.levels[kL1].capacity = 128;
  m.levels[kL2].capacity = 192;
  ScoredConfig c = configure(tg, m, {1, 64}, kL2);
  EXPECT_FALSE(c.cost.fits);
  EXPECT_EQ(c.cost.reason, "footprint 256 B exceeds L2 (192 B per tile)");
  SearchResult result = search_tiles(tg, m);
  EXPECT_TRUE(result.configs.empty());
  EXPECT_EQ(result.note, "the base tile does not fit: footprint 256 B exceeds L2 (192 B per tile)");
}

}  // namespace
}  // namespace orch::schedule
