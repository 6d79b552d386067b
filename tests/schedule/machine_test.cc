// The machine model: the description file round-trips, bad descriptions name the problem, and
// detection reads a sane hierarchy from this host.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "ir/error.h"
#include "schedule/machine.h"
#include "schedule_util.h"

namespace orch::schedule {
namespace {

std::string error_of(const std::string& json) {
  try {
    machine_from_json(json);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Machine, DescriptionRoundTrips) {
  Machine m = test::test_machine();
  EXPECT_EQ(m.cores, 4);
  ASSERT_EQ(m.levels.size(), 4u);
  EXPECT_EQ(m.levels[1].name, "L1");
  EXPECT_EQ(m.levels[1].capacity, 32768);
  EXPECT_EQ(m.levels[3].capacity, 0);
  EXPECT_EQ(machine_from_json(machine_to_json(m)), m);
}

TEST(Machine, SharedLevelIsSplitBetweenCores) {
  Machine m = test::test_machine();
  m.levels[2].shared = true;
  EXPECT_EQ(m.tile_capacity(2), 1048576 / 4);
  EXPECT_EQ(m.tile_capacity(1), 32768);
}

TEST(Machine, BadDescriptionsNameTheProblem) {
  EXPECT_NE(error_of("{").find("machine description:"), std::string::npos);
  EXPECT_EQ(error_of(R"({"levels": []})"), "machine description: the machine needs 'cores'");
  EXPECT_EQ(error_of(R"({"cores": 2, "levels": [{"name": "L1", "capacity": 1,
      "bandwidth_gbs": 1}]})"),
            "machine description: needs at least 2 levels, got 1");
  EXPECT_EQ(error_of(R"({"cores": 2, "levels": [{"name": "L1", "capacity": 1, "bandwidth_gbs": 1},
      {"name": "M", "capacity": 5, "bandwidth_gbs": 1}]})"),
            "machine description: the last level 'M' is main memory and must have capacity 0");
  EXPECT_EQ(error_of(R"({"cores": 2, "levels": [{"name": "L1", "bandwidth_gbs": 1}]})"),
            "machine description: a level needs 'capacity'");
}

TEST(Machine, GpuUsesTheSameDescription) {
  Machine gpu = machine_from_json(R"({"name": "sm90", "kind": "gpu", "cores": 132,
    "simd_bytes": 128, "levels": [
      {"name": "reg", "capacity": 262144, "line": 4, "bandwidth_gbs": 100000},
      {"name": "smem", "capacity": 233472, "line": 128, "bandwidth_gbs": 30000},
      {"name": "global", "capacity": 0, "line": 32, "bandwidth_gbs": 4000}]})");
  EXPECT_EQ(gpu.kind, "gpu");
  EXPECT_EQ(gpu.levels[2].line, 32);
}

TEST(Machine, DetectsThisHost) {
  Machine m = detect_machine();
  ASSERT_GE(m.levels.size(), 3u);
  EXPECT_EQ(m.levels.front().name, "reg");
  EXPECT_EQ(m.levels.back().capacity, 0);
  EXPECT_GE(m.cores, 1);
  EXPECT_TRUE(m.simd_bytes == 16 || m.simd_bytes == 32 || m.simd_bytes == 64);
  for (size_t l = 1; l + 2 < m.levels.size(); ++l)
    EXPECT_LT(m.levels[l].capacity, m.levels[l + 1].capacity) << m.levels[l].name;
}

TEST(Machine, ProbeAndCacheFile) {
  Machine m = detect_machine();
  probe_bandwidths(m, 0.002);
  for (const MemoryLevel& l : m.levels) EXPECT_GT(l.bandwidth_gbs, 0) << l.name;
  std::string dir = ::testing::TempDir() + "orch_machine_cache";
  setenv("XDG_CACHE_HOME", dir.c_str(), 1);
  EXPECT_EQ(machine_cache_path(), dir + "/orch/machine.json");
  save_machine(m, machine_cache_path());
  EXPECT_EQ(host_machine(), load_machine(machine_cache_path()));
  unsetenv("XDG_CACHE_HOME");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace orch::schedule
