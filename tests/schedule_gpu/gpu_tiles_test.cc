// Welder's GPU tile configurations on the shipped H200 and A100 descriptions, every number
// derived by hand in the comments: shared memory staging, registers, occupancy by each
// resource, waves, coalescing, illegal configurations and the ranking.
#include <gtest/gtest.h>

#include <algorithm>

#include "../schedule/schedule_util.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "schedule/gpu/gpu_coalescing.h"
#include "schedule/gpu/gpu_machine.h"
#include "schedule/gpu/gpu_tiles.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {
namespace {

GpuMachine h200() {
  return load_gpu(std::string(ORCH_SOURCE_DIR) + "/machines/h200.json");
}

GpuMachine a100() {
  return load_gpu(std::string(ORCH_SOURCE_DIR) + "/machines/a100.json");
}

constexpr const char* kMatMul = R"(graph main(%a: f32[256,256], %b: f32[256,256]) {
  %m: f32[256,256] = prim.MatMul(%a, %b)
  return %m
})";

constexpr const char* kRelu = R"(graph main(%x: f32[256,1024]) {
  %y: f32[256,1024] = prim.Elementwise(%x) {fn = "relu"}
  return %y
})";

constexpr const char* kTranspose = R"(graph main(%x: f32[256,256]) {
  %y: f32[256,256] = prim.Transpose(%x) {perm = [1, 0]}
  return %y
})";

// A graph kept alive with its tile graph.
struct Kernel {
  explicit Kernel(const char* text) : graph(parse_graph(text)), tg(make_tile_graph(graph)) {}
  Graph graph;
  TileGraph tg;
  ValueId id(const char* name) const { return graph.find_value(name); }
};

const GlobalAccess& access(const GpuTileCost& cost, ValueId v) {
  auto it = std::find_if(cost.accesses.begin(), cost.accesses.end(),
                         [&](const GlobalAccess& a) { return a.value == v; });
  EXPECT_NE(it, cost.accesses.end());
  return *it;
}

TEST(GpuTiles, MatMulStagesBothOperands) {
  Kernel k(kMatMul);
  GpuTileCost c = analyze(k.tg, h200(), {{64, 64}, {4, 4}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.threads, 256);  // (64/4) * (64/4)
  EXPECT_EQ(c.blocks, 16);
  // Every element of a's rows and b's columns is read by 64 outputs: both staged, the whole
  // reduce at once: a [64,256] + b [256,64] floats, each row padded to an odd pitch (bank
  // conflicts) as the generated code lays it out.
  EXPECT_TRUE(c.staged[k.id("a")]);
  EXPECT_TRUE(c.staged[k.id("b")]);
  EXPECT_FALSE(c.staged[k.id("m")]);
  EXPECT_EQ(c.shared_bytes, (64 * 257 + 256 * 65) * 4);  // 132352
  EXPECT_TRUE(c.needs_optin);                            // > 48 KiB, <= 227 KiB
  // 16 base + 4x4 outputs (the output is its own accumulator).
  EXPECT_EQ(c.registers, 16 + 16);
  // Shared memory: 233472 / (131072 + 1024 reserved) = 1 block per SM.
  EXPECT_EQ(c.blocks_per_sm, 1);
  EXPECT_EQ(c.occupancy_limit, "shared memory");
  EXPECT_EQ(c.waves, 1);
  // a: 64 whole rows, one contiguous run of 65536 bytes per block; b: 256 runs of 256 bytes
  // = 65536; m: 64 runs of 256 bytes = 16384, written by float4 stores (16 threads cover a
  // 256-byte row: 16 sectors for two rows, all bytes used). 16 blocks each.
  const GlobalAccess& a = access(c, k.id("a"));
  EXPECT_TRUE(a.staged);
  EXPECT_EQ(a.bytes, 65536);
  EXPECT_EQ(a.moved, 16 * 65536);
  EXPECT_EQ(a.warp_sectors, 4);  // the copy's first warp: 32 consecutive floats
  EXPECT_EQ(access(c, k.id("b")).moved, 16 * 65536);
  const GlobalAccess& m = access(c, k.id("m"));
  EXPECT_TRUE(m.write);
  EXPECT_EQ(m.warp_sectors, 16);
  EXPECT_EQ(m.min_sectors, 16);
  EXPECT_EQ(m.moved, 16 * 16384);
  EXPECT_EQ(c.global_bytes, 2 * 16 * 65536 + 16 * 16384);
  // A warp is two rows of 16 threads: outputs [8,64], reading a [8,256] and b [256,64] from
  // shared memory; 8 warps per block, 16 blocks.
  EXPECT_EQ(c.shared_traffic, int64_t{16} * 8 * (8 * 256 + 256 * 64) * 4);
  EXPECT_EQ(c.flops, int64_t{2} * 256 * 256 * 256);
  // Compute bound (33.5 MFLOP at 67 TFLOPS vs 2.36 MB at 4.8 TB/s); 16 blocks fill 16 of the
  // 132 slots of the one wave: the wave costs 132/16 times the share of its blocks.
  EXPECT_NEAR(c.time_us, 2.0 * 256 * 256 * 256 / 67e12 * 132 / 16 * 1e6, 1e-9);
}

TEST(GpuTiles, ReduceStepShrinksStaging) {
  Kernel k(kMatMul);
  GpuTileCost c = analyze(k.tg, h200(), {{64, 64}, {4, 4}, 32});
  ASSERT_TRUE(c.legal) << c.reason;
  // a [64,32] + b [32,64] per step, at odd pitches.
  EXPECT_EQ(c.shared_bytes, (64 * 33 + 32 * 65) * 4);  // 16768
  EXPECT_FALSE(c.needs_optin);
  // Shared memory allows 233472 / 17408 = 13 blocks; threads only 2048 / 256 = 8.
  EXPECT_EQ(c.blocks_per_sm, 8);
  EXPECT_EQ(c.occupancy_limit, "threads");
  // Over all steps each block still reads its whole rows and columns.
  EXPECT_EQ(access(c, k.id("a")).moved, 16 * 65536);
}

TEST(GpuTiles, LargerThreadTilesReadLessSharedMemory) {
  Kernel k(kMatMul);
  // Thread tile 2x2: 1024 threads, a warp is one row of 32 threads: outputs [2,64], reading
  // a [2,256] and b [256,64]; 32 warps per block. Nearly four times the 4x4 tile's traffic.
  GpuTileCost small = analyze(k.tg, h200(), {{64, 64}, {2, 2}, 0});
  GpuTileCost large = analyze(k.tg, h200(), {{64, 64}, {4, 4}, 0});
  ASSERT_TRUE(small.legal) << small.reason;
  EXPECT_EQ(small.shared_traffic, int64_t{16} * 32 * (2 * 256 + 256 * 64) * 4);
  EXPECT_LT(large.shared_traffic, small.shared_traffic);
  EXPECT_EQ(small.global_bytes, large.global_bytes);
}

TEST(GpuTiles, OccupancyLimitedByRegisters) {
  Kernel k(kMatMul);
  GpuTileCost c = analyze(k.tg, h200(), {{128, 128}, {8, 8}, 32});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.threads, 256);
  EXPECT_EQ(c.registers, 16 + 64);
  // Threads: 8 blocks; shared ((128*33 + 32*129)*4 = 33408 + 1024): 6; registers: 80 * 32 =
  // 2560 per warp, 8 warps: 65536 / 20480 = 3.
  EXPECT_EQ(c.shared_bytes, 33408);
  EXPECT_EQ(c.blocks_per_sm, 3);
  EXPECT_EQ(c.occupancy_limit, "registers");
}

TEST(GpuTiles, OccupancyLimitedByThreadsAndBlocks) {
  Kernel k(kRelu);
  // 512 threads: 2048 / 512 = 4 blocks; registers 16 + 1 = 17, 544 rounded to 768 per warp:
  // 65536 / (16 * 768) = 5.
  GpuTileCost wide = analyze(k.tg, h200(), {{1, 512}, {1, 1}, 0});
  ASSERT_TRUE(wide.legal) << wide.reason;
  EXPECT_EQ(wide.registers, 17);
  EXPECT_EQ(wide.shared_bytes, 0);  // nothing is reused: no staging
  EXPECT_EQ(wide.blocks_per_sm, 4);
  EXPECT_EQ(wide.occupancy_limit, "threads");
  // One warp per block: threads allow 64, registers 85, the block limit 32.
  GpuTileCost narrow = analyze(k.tg, h200(), {{1, 32}, {1, 1}, 0});
  ASSERT_TRUE(narrow.legal) << narrow.reason;
  EXPECT_EQ(narrow.blocks_per_sm, 32);
  EXPECT_EQ(narrow.occupancy_limit, "blocks");
}

TEST(GpuTiles, Waves) {
  Kernel k(R"(graph main(%x: f32[1000,1024]) {
  %y: f32[1000,1024] = prim.Elementwise(%x) {fn = "neg"}
  return %y
})");
  // 1000 blocks of 1024 threads, 2 per SM: 132 * 2 = 264 per wave -> 4 waves (3.79); on the
  // A100's 108 SMs, 216 per wave -> 5 waves (4.63).
  GpuTileConfig config{{1, 1024}, {1, 1}, 0};
  GpuTileCost h = analyze(k.tg, h200(), config);
  ASSERT_TRUE(h.legal) << h.reason;
  EXPECT_EQ(h.blocks, 1000);
  EXPECT_EQ(h.blocks_per_sm, 2);
  EXPECT_EQ(h.waves, 4);
  EXPECT_EQ(analyze(k.tg, a100(), config).waves, 5);
}

TEST(GpuTiles, WarpSectors) {
  std::vector<int64_t> consecutive, column, vectors, strided_vectors, misaligned;
  for (int64_t t = 0; t < 32; ++t) {
    consecutive.push_back(4 * t);       // 32 consecutive floats
    column.push_back(4096 * t);         // a column of f32 [N, 1024]: one row apart
    vectors.push_back(16 * t);          // float4 per thread, contiguous
    strided_vectors.push_back(32 * t);  // float4 per thread, every other 16 bytes
    misaligned.push_back(16 + 4 * t);   // 32 consecutive floats from byte 16
  }
  EXPECT_EQ(warp_sectors(consecutive, 4, 32).touched, 4);
  EXPECT_EQ(warp_sectors(consecutive, 4, 32).minimum, 4);
  EXPECT_EQ(warp_sectors(column, 4, 32).touched, 32);
  EXPECT_EQ(warp_sectors(column, 4, 32).minimum, 4);
  EXPECT_EQ(warp_sectors(column, 4, 32).bytes, 128);
  EXPECT_EQ(warp_sectors(vectors, 16, 32).touched, 16);
  EXPECT_EQ(warp_sectors(strided_vectors, 16, 32).touched, 32);
  EXPECT_EQ(warp_sectors(strided_vectors, 16, 32).minimum, 16);
  EXPECT_EQ(warp_sectors(misaligned, 4, 32).touched, 5);
}

TEST(GpuTiles, TransposedReadPaysEightTimes) {
  Kernel k(kTranspose);
  GpuTileCost c = analyze(k.tg, h200(), {{32, 32}, {1, 1}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.blocks, 64);
  // A warp writes y[32][32..63] (4 sectors) and reads x[32..63][32], one row apart (32 sectors
  // for 128 bytes used).
  const GlobalAccess& x = access(c, k.id("x"));
  const GlobalAccess& y = access(c, k.id("y"));
  EXPECT_FALSE(x.staged);  // each element read once: nothing to share
  EXPECT_EQ(x.warp_sectors, 32);
  EXPECT_EQ(x.min_sectors, 4);
  EXPECT_EQ(y.warp_sectors, 4);
  EXPECT_EQ(y.min_sectors, 4);
  // Per block 32x32 floats = 4096 bytes; x moves 8 times that.
  EXPECT_EQ(y.moved, 64 * 4096);
  EXPECT_EQ(x.moved, 64 * 4096 * 8);
}

// y = relu(x) is the root; z, x flattened, does not follow y's tiles (a whole output): the code
// computes it in a phase of its own, each element once, not once per block of the root.
constexpr const char* kWholeOutput = R"(graph main(%x: f32[64,64]) {
  %y: f32[64,64] = prim.Elementwise(%x) {fn = "relu"}
  %z: f32[4096] = prim.Reshape(%x) {shape = [4096]}
  return %y, %z
})";

TEST(GpuTiles, AWholeOutputAndWhatItReadsCountOnce) {
  Kernel k(kWholeOutput);
  ASSERT_EQ(k.tg.root, k.id("y"));
  ASSERT_TRUE(k.tg.whole_output[k.id("z")]);
  GpuTileCost c = analyze(k.tg, h200(), {{16, 64}, {1, 1}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.blocks, 4);
  // Each block's region of x is all of x (z's whole box merged in), but its threads read only
  // their 16x64 floats for y: 4 blocks x 4096 bytes, and z's phase reads x once, 16384 bytes.
  EXPECT_EQ(access(c, k.id("x")).moved, 4 * 4096 + 16384);
  EXPECT_EQ(access(c, k.id("y")).moved, 4 * 4096);
  EXPECT_EQ(access(c, k.id("z")).moved, 16384);  // once, not 4 times
  EXPECT_EQ(c.global_bytes, 4 * 4096 + 16384 + 4 * 4096 + 16384);
  // One operation per element (the model counts layout primitives too): y's 4096 in the blocks,
  // z's 4096 once.
  EXPECT_EQ(c.flops, 4096 + 4096);
}

// The whole output z now reads the root y: the root's phase writes y's tiles, and z's phase
// reads y back from memory, not x.
constexpr const char* kWholeOutputOfTheRoot = R"(graph main(%x: f32[64,64]) {
  %y: f32[64,64] = prim.Elementwise(%x) {fn = "relu"}
  %z: f32[4096] = prim.Reshape(%y) {shape = [4096]}
  return %y, %z
})";

TEST(GpuTiles, AWholeOutputReadsTheRootBackOnce) {
  Kernel k(kWholeOutputOfTheRoot);
  GpuTileCost c = analyze(k.tg, h200(), {{16, 64}, {1, 1}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  // y's region in a block is all of y (z's whole box), but the block writes its 16x64 tile.
  EXPECT_EQ(access(c, k.id("x")).moved, 4 * 4096);
  EXPECT_EQ(access(c, k.id("y")).moved, 4 * 4096 + 16384);  // written by tiles, read once
  EXPECT_EQ(access(c, k.id("z")).moved, 16384);
  EXPECT_EQ(c.flops, 4096 + 4096);
}

TEST(GpuTiles, VectorLoadsAlongTheInnermostDim) {
  Kernel k(kRelu);
  // Thread tile 1x4: each thread loads one float4, a warp 512 contiguous bytes in 16 sectors.
  GpuTileCost four = analyze(k.tg, h200(), {{1, 128}, {1, 4}, 0});
  ASSERT_TRUE(four.legal) << four.reason;
  EXPECT_EQ(access(four, k.id("x")).warp_sectors, 16);
  EXPECT_EQ(access(four, k.id("x")).moved, 256 * 1024 * 4);
  // Thread tile 1x8: the first float4 of each thread is 32 bytes from the next thread's: 32
  // sectors for 512 bytes used, twice the traffic.
  GpuTileCost eight = analyze(k.tg, h200(), {{1, 256}, {1, 8}, 0});
  ASSERT_TRUE(eight.legal) << eight.reason;
  EXPECT_EQ(access(eight, k.id("x")).warp_sectors, 32);
  EXPECT_EQ(access(eight, k.id("x")).moved, 2 * 256 * 1024 * 4);
}

TEST(GpuTiles, SoftmaxStagesOnlyCrossThreadValues) {
  Kernel k(test::kSoftmaxRows);
  GpuTileCost c = analyze(k.tg, h200(), {{1, 64}, {1, 2}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.threads, 32);
  // The row max and sum are broadcast to the threads of the row: shared memory, one float each
  // in an array of 16 bytes (arrays start aligned).
  // x, exp and the rest are read or computed by the thread that uses them.
  for (const char* staged : {"max", "sum"}) EXPECT_TRUE(c.staged[k.id(staged)]) << staged;
  for (const char* kept : {"x", "bmax", "sub", "exp", "bsum"})
    EXPECT_FALSE(c.staged[k.id(kept)]) << kept;
  EXPECT_EQ(c.shared_bytes, 2 * 16);
  EXPECT_EQ(c.registers, 16 + 2);
}

TEST(GpuTiles, EpilogueAccumulatorStaysInRegisters) {
  Kernel k(R"(graph main(%a: f32[64,32], %w: f32[32,48], %bias: f32[48]) {
  const %c4 = f32[]{0.70710677}
  %m: f32[64,48] = prim.MatMul(%a, %w)
  %r1: f32[1,48] = prim.Reshape(%bias) {shape = [1, 48]}
  %b2: f32[64,48] = prim.Broadcast(%r1) {shape = [64, 48]}
  %s: f32[64,48] = prim.Elementwise(%m, %b2) {fn = "add"}
  %y: f32[64,48] = prim.Elementwise(%s, %c4) {fn = "mul"}
  return %y
})");
  GpuTileCost c = analyze(k.tg, h200(), {{16, 16}, {2, 2}, 0});
  ASSERT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.threads, 64);
  EXPECT_TRUE(c.staged[k.id("a")]);
  EXPECT_TRUE(c.staged[k.id("w")]);
  EXPECT_FALSE(c.staged[k.id("m")]);  // each thread adds the bias to its own sums
  EXPECT_TRUE(c.staged[k.id("r1")]);  // one bias row shared by the 16 rows of the block
  // a [16,32] + w [32,16] at odd pitches + r1 [1,16] floats (one row: no padding).
  EXPECT_EQ(c.shared_bytes, (16 * 33 + 32 * 17 + 16) * 4);
  // 2x2 outputs and 2x2 MatMul accumulators.
  EXPECT_EQ(c.registers, 16 + 4 * 2);
  // The scalar constant is an immediate: no access.
  for (const GlobalAccess& a : c.accesses) EXPECT_NE(a.value, k.id("c4"));
}

std::string reason(const char* text, const GpuTileConfig& config) {
  Kernel k(text);
  GpuTileCost c = analyze(k.tg, h200(), config);
  EXPECT_FALSE(c.legal);
  return c.reason;
}

TEST(GpuTiles, IllegalConfigsSayWhy) {
  EXPECT_EQ(reason(kMatMul, {{64, 64}, {3, 4}, 0}),
            "thread tile 3 does not divide block tile 64 in dim 0");
  EXPECT_EQ(reason(kMatMul, {{512, 64}, {1, 1}, 0}), "block tile 512 in dim 0 is outside [1, 256]");
  EXPECT_EQ(reason(kMatMul, {{64}, {1}, 0}), "block and thread tiles need 2 dims");
  EXPECT_EQ(reason(kMatMul, {{64, 64}, {1, 1}, 0}),
            "4096 threads per block exceed the limit of 1024");
  EXPECT_EQ(reason(kRelu, {{1, 48}, {1, 1}, 0}),
            "48 threads per block are not a whole number of warps of 32");
  // 16 + 16*16 outputs.
  EXPECT_EQ(reason(kMatMul, {{128, 128}, {16, 16}, 32}),
            "an estimated 272 registers per thread exceed the limit of 255");
  // 1024 threads of 16 + 64 registers.
  EXPECT_EQ(reason(kMatMul, {{256, 256}, {8, 8}, 32}),
            "81920 registers per block exceed the 65536 of an SM");
  Kernel k(kMatMul);
  EXPECT_THROW(analyze(k.tg, h200(), {{64, 64}, {4, 4}, -1}), Error);
}

// a [128,256] + b [256,128] floats at odd pitches = 263680 bytes, over the 232448 an H200 block
// may opt in to: a is staged, b is read from memory.
TEST(GpuTiles, WhatDoesNotFitTheOptInStaysInMemory) {
  Kernel k(kMatMul);
  GpuTileCost c = analyze(k.tg, h200(), {{128, 128}, {8, 8}, 0});
  EXPECT_TRUE(c.legal) << c.reason;
  EXPECT_TRUE(c.staged[k.id("a")]);
  EXPECT_FALSE(c.staged[k.id("b")]);
  EXPECT_EQ(c.shared_bytes, 128 * 257 * 4);
  EXPECT_FALSE(access(c, k.id("b")).staged);
}

constexpr const char* kScoresMax = R"(graph main(%q: f32[16,64], %k: f32[64,128]) {
  %s: f32[16,128] = prim.MatMul(%q, %k)
  %m: f32[16,1] = prim.Reduce(%s) {axes = [1], kind = "max"}
  %mb: f32[16,128] = prim.Broadcast(%m) {shape = [16, 128]}
  %d: f32[16,128] = prim.Elementwise(%s, %mb) {fn = "sub"}
  %y: f32[16,128] = prim.Elementwise(%d) {fn = "exp"}
  return %y
})";

// The form of the generated code: the scores a block computes into shared memory (read by the
// max and by the root) take their region there; only the stepped reduction's windows move.
TEST(GpuTiles, TheCodesFormPricesComputedValuesAndItsOneSteppedReduction) {
  Kernel k(kScoresMax);
  GpuTileConfig config{{8, 128}, {1, 4}, 0};
  // q [8,64] and k [64,128] staged for the MatMul (at odd pitches), m [8,1] for its broadcast.
  GpuTileCost plain = analyze(k.tg, h200(), config);
  EXPECT_EQ(default_form(k.tg).stepped, kNoNode);  // the root is an exp
  EXPECT_FALSE(plain.staged[k.id("s")]);
  EXPECT_EQ(plain.shared_bytes, (8 * 65 + 64 * 129 + 8) * 4);
  GpuKernelForm form;
  form.computed.assign(k.graph.num_values(), false);
  form.computed[k.id("s")] = form.computed[k.id("m")] = true;
  GpuTileCost computed = analyze(k.tg, h200(), config, form);
  EXPECT_TRUE(computed.staged[k.id("s")]);
  // s [8,128] besides, and each computed value's partials: 8 warps of 8 bytes.
  int64_t partials = 2 * 8 * 8;
  EXPECT_EQ(computed.shared_bytes, (8 * 65 + 64 * 129 + 8 * 129 + 8) * 4 + partials);
  // Without a stepped reduction a config's reduce step stages whole windows; with the MatMul
  // stepped, its operands' windows are 16 of K.
  EXPECT_EQ(analyze(k.tg, h200(), {{8, 128}, {1, 4}, 16}, form).shared_bytes,
            computed.shared_bytes);
  form.stepped = k.graph.value(k.id("s")).producer;
  EXPECT_EQ(analyze(k.tg, h200(), {{8, 128}, {1, 4}, 16}, form).shared_bytes,
            (8 * 17 + 16 * 129 + 8 * 129 + 8) * 4 + partials);
  for (const ScoredGpuConfig& s : gpu_configs(k.tg, h200(), 20, GpuKernelForm{}))
    EXPECT_EQ(s.config.reduce_step, 0) << "a reduce step without a stepped reduction";
}

TEST(GpuTiles, SingleSmallBlockIsLegal) {
  // A 4x4 output in one block of 16 threads: less than a warp, but the whole output.
  Kernel k(R"(graph main(%x: f32[4,4]) {
  %y: f32[4,4] = prim.Elementwise(%x) {fn = "relu"}
  return %y
})");
  GpuTileCost c = analyze(k.tg, h200(), {{4, 4}, {1, 1}, 0});
  EXPECT_TRUE(c.legal) << c.reason;
  EXPECT_EQ(c.blocks, 1);
  EXPECT_EQ(c.waves, 1);
}

TEST(GpuTiles, ConfigsRankCoalescedAboveTransposed) {
  Kernel k(kRelu);
  std::vector<ScoredGpuConfig> all = gpu_configs(k.tg, h200(), 1 << 20);
  ASSERT_FALSE(all.empty());
  auto rank = [&](const GpuTileConfig& c) {
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const ScoredGpuConfig& s) { return s.config == c; });
    EXPECT_NE(it, all.end());
    return it - all.begin();
  };
  // Threads along the rows read and write consecutive floats; along the columns, one sector
  // per thread: 8 times the traffic at the same occupancy.
  GpuTileConfig rows{{1, 32}, {1, 1}, 0}, columns{{32, 1}, {1, 1}, 0};
  EXPECT_LT(rank(rows), rank(columns));
  EXPECT_NEAR(all[rank(columns)].cost.time_us / all[rank(rows)].cost.time_us, 8, 1e-9);
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    EXPECT_TRUE(all[i].cost.legal);
    EXPECT_LE(all[i].cost.time_us, all[i + 1].cost.time_us);
  }
  // The best configuration moves every byte once.
  EXPECT_EQ(all[0].cost.global_bytes, 2 * 256 * 1024 * 4);
  EXPECT_EQ(gpu_configs(k.tg, h200(), 3).size(), 3u);
}

TEST(GpuTiles, ConfigsPickAReduceStepThatFitsTheDefaultLimit) {
  Kernel k(kMatMul);
  std::vector<ScoredGpuConfig> top = gpu_configs(k.tg, h200(), 5);
  ASSERT_EQ(top.size(), 5u);
  for (const ScoredGpuConfig& s : top) {
    EXPECT_TRUE(s.cost.legal);
    EXPECT_LE(s.cost.shared_bytes, 48 * 1024);
    EXPECT_EQ(s.cost.flops, int64_t{2} * 256 * 256 * 256);
  }
  // The same analysis reproduces the search's numbers.
  GpuTileCost again = analyze(k.tg, h200(), top[0].config);
  EXPECT_DOUBLE_EQ(again.time_us, top[0].cost.time_us);
}

}  // namespace
}  // namespace orch::schedule
