// `orch schedule` as a user meets it, on the test machine description. Skipped when the orch
// binary has not been built yet.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../common/orch_cli.h"
#include "schedule_util.h"

namespace orch::schedule {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class ScheduleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(ORCH_BINARY)) GTEST_SKIP() << "orch not built";
    dir_ = ::testing::TempDir() + "orch_schedule_cli_" + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ + "/machine.json") << test::kMachineJson;
    std::ofstream(dir_ + "/softmax.orch.txt") << R"(graph main(%x: f32[8,64]) {
  %y: f32[8,64] = Softmax(%x) {axis = 1}
  return %y
})";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  cli_test::Outcome run(const std::string& args) {
    return cli_test::orch_cli("schedule " + dir_ + "/softmax.orch.txt --machine " + dir_ +
                              "/machine.json " + args);
  }
  std::string dir_;
};

// Candidate 0 is the row max alone. Tile [1,1]: x's row 256 B + one float of output (a line)
// = 320 B per tile, 8 tiles = 2560 B at every level; weighted 2560 * (1/4 + 1/2 + 1) / 8 = 560,
// 2 waves: 1122. Tile [2,1]: (512 + 64) * 4 = 2304 B; 2304 * 1.75 / 4 = 1008, 1 wave: 1009.
TEST_F(ScheduleCli, ShowsOneCandidate) {
  cli_test::Outcome r = run("--kernel 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "7 primitives, 28 candidate kernels")) << r.output;
  EXPECT_TRUE(contains(r.output, "tile graph for the first tile [2,1]")) << r.output;
  EXPECT_TRUE(contains(r.output, "input  %x                        [0:2, 0:64]")) << r.output;
  EXPECT_TRUE(contains(r.output, "#0 tile [2,1]  score 1009  tiles 4  waves 1")) << r.output;
  EXPECT_TRUE(contains(r.output, "#1 tile [1,1]  score 1122  tiles 8  waves 2")) << r.output;
  EXPECT_TRUE(contains(r.output, "traffic: L1 2304 B, L2 2304 B, DRAM 2304 B")) << r.output;
  EXPECT_TRUE(contains(r.output, "search time per candidate (28 candidates)")) << r.output;
  EXPECT_TRUE(contains(r.output, "candidates without a fitting configuration: 0")) << r.output;
}

TEST_F(ScheduleCli, ErrorsNameTheProblem) {
  cli_test::Outcome r = run("--kernel 99");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "--kernel 99: the model has 28 candidates")) << r.output;
  r = cli_test::orch_cli("schedule " + dir_ + "/softmax.orch.txt --machine " + dir_ +
                         "/missing.json");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.output, "missing.json: no such file")) << r.output;
}

}  // namespace
}  // namespace orch::schedule
