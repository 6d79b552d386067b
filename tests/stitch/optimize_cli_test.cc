// `orch optimize` on the bundled example: the whole pipeline (tune with a fresh database,
// stitch, validate) through the command line.
#include <fmt/format.h>

#include <filesystem>

#include "../common/orch_cli.h"

namespace orch::cli_test {
namespace {

namespace fs = std::filesystem;

class OptimizeCli : public CliTest {};

// Disabled by default: tuning measures every kernel (80 s on a loaded 2-core machine, over this
// binary's budget); run with --gtest_also_run_disabled_tests.
TEST_F(OptimizeCli, DISABLED_OptimizesTheExampleIntoAModule) {
  std::string model = std::string(ORCH_SOURCE_DIR) + "/examples/tiny_mlp.orch.txt";
  std::string out = path("mlp_module");
  Outcome r = orch_cli(fmt::format("optimize {} -o {} --db {} -q", model, out, path("t.db")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("module: " + out + " ("), std::string::npos) << r.output;
  for (const char* file : {"manifest.json", "weights.bin", "kernels.so", "report.md"})
    EXPECT_TRUE(fs::exists(fs::path(out) / file)) << file;
}

TEST_F(OptimizeCli, MissingModelIsAnError) {
  Outcome r = orch_cli(fmt::format("optimize {} -o {}", path("nope.onnx"), path("out")));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("orch: error: "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("out")));
}

}  // namespace
}  // namespace orch::cli_test
