// `orch conformance --compiled` (for the CPU, and for the CUDA target) on a fixed handful of ONNX
// node tests (elementwise, reduce, softmax, layout, gather, matmul, gemm and conv through oneDNN,
// casts, and two tests the interpreter skips): each test's model optimized, stitched, loaded and
// run. The whole node suite is a manual run (minutes); this keeps the path working.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "../common/orch_cli.h"

namespace orch {
namespace {
namespace fs = std::filesystem;

using cli_test::orch_cli;
using cli_test::Outcome;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

constexpr const char* kTests[] = {
    "test_add_bcast",
    "test_softmax_axis_1",
    "test_reduce_mean_keepdims_random",
    "test_transpose_default",
    "test_concat_2d_axis_1",
    "test_gather_1",  // indices valid only for this data: validation uses the test's inputs
    "test_matmul_3d",
    "test_gemm_default_scalar_bias",  // a oneDNN post-op reading a scalar
    "test_conv_with_strides_padding",
    "test_cast_FLOAT_to_FLOAT16",  // f16 buffers of a Halide kernel
    "test_cast_FLOAT_to_DOUBLE",
    "test_where_long_example",
    "test_cast_FLOAT_to_BFLOAT16",          // skipped: a known difference
    "test_unique_not_sorted_without_axis",  // skipped: an unsupported op
};

// The result lines of `output` with status `status` ("SKIP"), as "SKIP name: reason", without
// the progress counter and the time that parallel runs add.
std::set<std::string> results_with(const std::string& output, const std::string& status) {
  static const std::regex line_re(R"(^(?:\[\d+/\d+\] )?(\w+) (\S+?)(?: \([0-9.]+ s\))?(:.*)?$)");
  std::set<std::string> lines;
  std::istringstream in(output);
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, line_re) && m[1] == status)
      lines.insert(fmt::format("{} {}{}", m[1].str(), m[2].str(), m[3].str()));
  return lines;
}

class ConformanceCompiled : public cli_test::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (!fs::exists(kNodeTests)) GTEST_SKIP() << kNodeTests << " is not installed";
    for (const char* test : kTests) fs::create_directory_symlink(kNodeTests / test, dir_ / test);
  }
};

TEST_F(ConformanceCompiled, SubsetPassesWithTheInterpretersSkips) {
  Outcome compiled = orch_cli("conformance " + dir_.string() + " --compiled --jobs 2");
  EXPECT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("conformance: 12 passed, 0 failed, 2 skipped"), std::string::npos)
      << compiled.output;
  EXPECT_NE(compiled.output.find("/14] PASS test_matmul_3d"), std::string::npos) << compiled.output;

  Outcome interpreted = orch_cli("conformance " + dir_.string());
  EXPECT_EQ(interpreted.exit_code, 0) << interpreted.output;
  std::set<std::string> skips = results_with(interpreted.output, "SKIP");
  EXPECT_EQ(skips.size(), 2u) << interpreted.output;
  EXPECT_EQ(results_with(compiled.output, "SKIP"), skips) << "the same tests, the same reasons";
}

// For the CUDA target each module's code runs on the host; what the generator lacks (TopK, which
// fission keeps whole and a CPU module runs through its reference kernel) runs on the host in a
// CUDA module too, and passes.
TEST_F(ConformanceCompiled, CudaTargetRunsWhatTheGeneratorLacksOnTheHost) {
  fs::create_directory_symlink(kNodeTests / "test_top_k", dir_ / "test_top_k");
  Outcome r = orch_cli("conformance " + dir_.string() + " --compiled --target cuda --jobs 2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("conformance: 13 passed, 0 failed, 2 skipped"), std::string::npos)
      << r.output;
  EXPECT_EQ(results_with(r.output, "PASS").count("PASS test_top_k"), 1u) << r.output;
  Outcome interpreted = orch_cli("conformance " + dir_.string() + " --target cuda");
  EXPECT_NE(interpreted.exit_code, 0);
  EXPECT_NE(interpreted.output.find("--target applies to --compiled"), std::string::npos)
      << interpreted.output;
  Outcome cpu_on_gpu = orch_cli("conformance " + dir_.string() + " --compiled --on-gpu");
  EXPECT_NE(cpu_on_gpu.exit_code, 0);
  EXPECT_NE(cpu_on_gpu.output.find("--on-gpu applies to --target cuda"), std::string::npos)
      << cpu_on_gpu.output;
}

// On a GPU each module runs there; without one (these machines) that is an error before any
// test, naming what is missing.
TEST_F(ConformanceCompiled, OnGpuNeedsAGpu) {
  Outcome r =
      orch_cli("conformance " + dir_.string() + " --compiled --target cuda --on-gpu --jobs 2");
  if (r.exit_code == 0) {
    EXPECT_NE(r.output.find("conformance: 12 passed, 0 failed, 2 skipped"), std::string::npos)
        << r.output;
  } else {
    EXPECT_NE(r.output.find("orch: error: --on-gpu: "), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("PASS"), std::string::npos) << r.output;
  }
}

TEST_F(ConformanceCompiled, JobsMustBePositive) {
  Outcome r = orch_cli("conformance " + dir_.string() + " --compiled --jobs 0");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--jobs"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace orch
