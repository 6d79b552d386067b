// The GPU machine model: the shipped descriptions match their published specifications, bad
// descriptions name the field, the tile search's view of a GPU, and detection without a GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/text_format.h"
#include "schedule/gpu/gpu_machine.h"
#include "schedule/search.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {
namespace {

std::string machine_file(const char* name) {
  return std::string(ORCH_SOURCE_DIR) + "/machines/" + name;
}

std::string error_of(const std::string& json) {
  try {
    gpu_from_json(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The H200 description with one field changed (or removed when `value` is null).
std::string h200_with(const std::string& key, const nlohmann::json& value) {
  std::ifstream in(machine_file("h200.json"));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
  if (value.is_null())
    j.erase(key);
  else
    j[key] = value;
  return j.dump();
}

const char* const kNumericFields[] = {"sm_count",
                                      "warp_size",
                                      "max_threads_per_block",
                                      "max_threads_per_sm",
                                      "max_blocks_per_sm",
                                      "registers_per_sm",
                                      "max_registers_per_thread",
                                      "shared_per_block",
                                      "shared_per_block_optin",
                                      "shared_per_sm",
                                      "l2_bytes",
                                      "hbm_bytes",
                                      "sector_bytes",
                                      "line_bytes",
                                      "hbm_gbs",
                                      "l2_gbs",
                                      "shared_gbs_per_sm",
                                      "peak_fp32_gflops"};

TEST(GpuMachine, H200MatchesItsSpecification) {
  GpuMachine g = load_gpu(machine_file("h200.json"));
  EXPECT_EQ(g.name, "H200-SXM");
  EXPECT_EQ(g.cc_major, 9);
  EXPECT_EQ(g.cc_minor, 0);
  EXPECT_EQ(g.sm_count, 132);  // GH100 as in H100 SXM5
  EXPECT_EQ(g.warp_size, 32);
  EXPECT_EQ(g.max_threads_per_block, 1024);
  EXPECT_EQ(g.max_threads_per_sm, 2048);  // 64 warps
  EXPECT_EQ(g.max_blocks_per_sm, 32);
  EXPECT_EQ(g.registers_per_sm, 64 * 1024);  // 256 KB register file
  EXPECT_EQ(g.max_registers_per_thread, 255);
  EXPECT_EQ(g.shared_per_block, 48 * 1024);
  EXPECT_EQ(g.shared_per_block_optin, 227 * 1024);
  EXPECT_EQ(g.shared_per_sm, 228 * 1024);
  EXPECT_EQ(g.l2_bytes, 50 * 1024 * 1024);
  EXPECT_EQ(g.hbm_bytes, int64_t{141} * 1000 * 1000 * 1000);
  EXPECT_EQ(g.sector_bytes, 32);
  EXPECT_EQ(g.line_bytes, 128);
  EXPECT_DOUBLE_EQ(g.hbm_gbs, 4800);            // 4.8 TB/s
  EXPECT_DOUBLE_EQ(g.peak_fp32_gflops, 67000);  // 67 TFLOPS
  // 5120 B/clk and 128 B/clk at the 1.98 GHz boost clock.
  EXPECT_DOUBLE_EQ(g.l2_gbs, 5120 * 1.98);
  EXPECT_DOUBLE_EQ(g.shared_gbs_per_sm, 128 * 1.98);
  for (const char* field : kNumericFields) EXPECT_EQ(g.sources.count(field), 1u) << field;
}

TEST(GpuMachine, A100MatchesItsSpecification) {
  GpuMachine g = load_gpu(machine_file("a100.json"));
  EXPECT_EQ(g.name, "A100-SXM4-80GB");
  EXPECT_EQ(g.cc_major, 8);
  EXPECT_EQ(g.cc_minor, 0);
  EXPECT_EQ(g.sm_count, 108);
  EXPECT_EQ(g.max_threads_per_sm, 2048);
  EXPECT_EQ(g.max_blocks_per_sm, 32);
  EXPECT_EQ(g.registers_per_sm, 64 * 1024);
  EXPECT_EQ(g.shared_per_block, 48 * 1024);
  EXPECT_EQ(g.shared_per_block_optin, 163 * 1024);
  EXPECT_EQ(g.shared_per_sm, 164 * 1024);
  EXPECT_EQ(g.l2_bytes, 40 * 1024 * 1024);
  EXPECT_EQ(g.hbm_bytes, int64_t{80} * 1000 * 1000 * 1000);
  EXPECT_DOUBLE_EQ(g.hbm_gbs, 2039);
  EXPECT_DOUBLE_EQ(g.peak_fp32_gflops, 19500);
  EXPECT_DOUBLE_EQ(g.l2_gbs, 5120 * 1.41);
  EXPECT_DOUBLE_EQ(g.shared_gbs_per_sm, 128 * 1.41);
  for (const char* field : kNumericFields) EXPECT_EQ(g.sources.count(field), 1u) << field;
}

TEST(GpuMachine, DescriptionRoundTrips) {
  GpuMachine g = load_gpu(machine_file("a100.json"));
  EXPECT_EQ(gpu_from_json(gpu_to_json(g)), g);
  std::string path = ::testing::TempDir() + "/orch_gpu_test/a100.json";
  save_gpu(g, path);
  EXPECT_EQ(load_gpu(path), g);
}

TEST(GpuMachine, BadDescriptionsNameTheField) {
  EXPECT_NE(error_of("{").find("gpu description:"), std::string::npos);
  EXPECT_EQ(error_of("[1]"), "gpu description: expected an object, got array");
  EXPECT_EQ(error_of(h200_with("sm_count", nullptr)), "gpu description: missing field 'sm_count'");
  EXPECT_EQ(error_of(h200_with("sm_count", -1)), "gpu description: 'sm_count' must be > 0, got -1");
  EXPECT_EQ(error_of(h200_with("hbm_gbs", 0)), "gpu description: 'hbm_gbs' must be > 0, got 0");
  EXPECT_EQ(error_of(h200_with("l2_bytes", 0)), "gpu description: 'l2_bytes' must be > 0, got 0");
  EXPECT_EQ(error_of(h200_with("warp_size", "32")),
            "gpu description: 'warp_size' must be an integer, got \"32\"");
  EXPECT_EQ(error_of(h200_with("warp_size", 32.5)),
            "gpu description: 'warp_size' must be an integer, got 32.5");
  EXPECT_EQ(error_of(h200_with("peak_fp32_gflops", "fast")),
            "gpu description: 'peak_fp32_gflops' must be a number, got \"fast\"");
  EXPECT_EQ(error_of(h200_with("sm_cout", 132)), "gpu description: unknown field 'sm_cout'");
  EXPECT_EQ(error_of(h200_with("compute_capability", "nine")),
            "gpu description: 'compute_capability' must look like \"9.0\", got \"nine\"");
  EXPECT_EQ(error_of(h200_with("shared_per_block_optin", 300000)),
            "gpu description: 'shared_per_block_optin' (300000) exceeds 'shared_per_sm' (233472)");
  EXPECT_EQ(
      error_of(h200_with("max_threads_per_block", 1000)),
      "gpu description: 'max_threads_per_block' (1000) is not a multiple of 'warp_size' (32)");
  EXPECT_EQ(error_of(h200_with("sources", 3)), "gpu description: 'sources' must be an object");
}

TEST(GpuMachine, LoadErrorsNameTheFile) {
  std::string missing = ::testing::TempDir() + "/no_such_gpu.json";
  try {
    load_gpu(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "gpu description " + missing + ": no such file");
  }
  std::string bad = ::testing::TempDir() + "/orch_gpu_bad.json";
  std::ofstream(bad) << h200_with("sm_count", nullptr);
  try {
    load_gpu(bad);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), bad + ": gpu description: missing field 'sm_count'");
  }
}

TEST(GpuMachine, TileSearchView) {
  GpuMachine g = load_gpu(machine_file("h200.json"));
  Machine m = to_machine(g);
  EXPECT_EQ(m.kind, "gpu");
  EXPECT_EQ(m.cores, 132);
  EXPECT_EQ(m.simd_bytes, 128);  // a warp of 4-byte lanes
  ASSERT_EQ(m.levels.size(), 4u);
  EXPECT_EQ(m.levels[0], (MemoryLevel{"reg", 256 * 1024, 4, 67000.0 / 2 / 132 * 12, false}));
  EXPECT_EQ(m.levels[1], (MemoryLevel{"smem", 227 * 1024, 128, g.shared_gbs_per_sm, false}));
  EXPECT_EQ(m.levels[2], (MemoryLevel{"L2", 50 * 1024 * 1024, 32, g.l2_gbs, true}));
  EXPECT_EQ(m.levels[3], (MemoryLevel{"HBM", 0, 32, 4800, true}));
  // L2 is split between the SMs; shared memory is the tile level the CPU search picks.
  EXPECT_EQ(m.tile_capacity(2), 50 * 1024 * 1024 / 132);
  EXPECT_EQ(resolve_tile_level(m, -1), 1u);
  // A valid description for the CPU machine parser too.
  EXPECT_EQ(machine_from_json(machine_to_json(m)), m);
}

TEST(GpuMachine, ExistingTileSearchRanksAgainstAGpu) {
  Graph g = parse_graph(R"(graph main(%a: f32[256,256], %b: f32[256,256]) {
  %m: f32[256,256] = prim.MatMul(%a, %b)
  return %m
})");
  TileGraph tg = make_tile_graph(g);
  SearchResult r = search_tiles(tg, to_machine(load_gpu(machine_file("h200.json"))));
  ASSERT_FALSE(r.configs.empty()) << r.note;
  EXPECT_EQ(r.tile_level, 1u);
  for (const ScoredConfig& c : r.configs) {
    EXPECT_TRUE(c.cost.fits);
    EXPECT_LE(c.cost.footprint[1], 227 * 1024);
  }
}

// The attributes an A100-SXM4-40GB reports (its deviceQuery output: 1410 MHz, 1215 MHz memory,
// 5120-bit bus, 40 MiB L2).
std::map<int, int64_t> a100_attributes() {
  return {{1, 1024},     {8, 49152},   {10, 32},       {13, 1410000}, {16, 108},
          {36, 1215000}, {37, 5120},   {38, 41943040}, {39, 2048},    {75, 8},
          {76, 0},       {81, 167936}, {82, 65536},    {97, 166912},  {106, 32}};
}

std::optional<GpuMachine> from(const std::map<int, int64_t>& attributes) {
  return gpu_from_attributes("A100-SXM4-40GB", int64_t{40} << 30, [&](int a) {
    auto it = attributes.find(a);
    return it == attributes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  });
}

TEST(GpuMachine, FromDriverAttributes) {
  std::optional<GpuMachine> g = from(a100_attributes());
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->cc_major, 8);
  EXPECT_EQ(g->cc_minor, 0);
  EXPECT_EQ(g->sm_count, 108);
  EXPECT_EQ(g->shared_per_block_optin, 166912);
  EXPECT_EQ(g->max_registers_per_thread, 255);
  EXPECT_EQ(g->hbm_bytes, int64_t{40} << 30);
  // The A100-40GB's published 1555 GB/s: 2 * 1215 MHz * 5120 bits / 8.
  EXPECT_NEAR(g->hbm_gbs, 1555.2, 1e-6);
  // 19.5 TFLOPS: 108 SMs * 64 lanes * 2 * 1.41 GHz.
  EXPECT_NEAR(g->peak_fp32_gflops, 19491.84, 1e-6);
  EXPECT_NEAR(g->l2_gbs, 7219.2, 1e-6);
  EXPECT_NEAR(g->shared_gbs_per_sm, 180.48, 1e-6);
  // Hopper has 128 fp32 lanes per SM: 132 SMs at 1.98 GHz give the H100 SXM's 67 TFLOPS.
  std::map<int, int64_t> h100 = a100_attributes();
  h100[75] = 9;
  h100[16] = 132;
  h100[13] = 1980000;
  EXPECT_NEAR(from(h100)->peak_fp32_gflops, 66908.16, 1e-6);
  // A missing or zero attribute gives no machine rather than a wrong one.
  std::map<int, int64_t> missing = a100_attributes();
  missing.erase(106);
  EXPECT_FALSE(from(missing).has_value());
  std::map<int, int64_t> zero = a100_attributes();
  zero[16] = 0;
  EXPECT_FALSE(from(zero).has_value());
}

TEST(GpuMachine, DetectWithoutAGpu) {
  // Out-of-range devices never exist; without the NVIDIA device files there is no GPU at all.
  EXPECT_FALSE(detect_gpu(-1).has_value());
  EXPECT_FALSE(detect_gpu(1 << 20).has_value());
  std::optional<GpuMachine> g = detect_gpu();
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    EXPECT_FALSE(g.has_value());
  } else if (g) {
    EXPECT_GT(g->sm_count, 0);
    EXPECT_EQ(gpu_from_json(gpu_to_json(*g)), *g);
  }
}

}  // namespace
}  // namespace orch::schedule
