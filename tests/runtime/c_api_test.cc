// The C interface (include/orch/orch.h): a C program runs a compiled module, `orch run` runs and
// times it, and every failure comes back as a status and a message, never an exception.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../common/orch_cli.h"
#include "../stitch/stitch_test_util.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/npy.h"
#include "orch/module.h"
#include "orch/orch.h"

namespace orch::stitch_test {
namespace {

using cli_test::run_shell;

class CApi : public MlpModuleSuite {};

void write_bytes(const std::string& path, const Tensor& t) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(t.bytes()), static_cast<std::streamsize>(t.nbytes()));
}

void expect_close(const Tensor& want, const float* got) {
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got[i], want.get(i), 1e-4 + 1e-3 * std::abs(want.get(i))) << i;
}

TEST_F(CApi, CProgramRunsTheModuleLikeTheInterpreter) {
  std::vector<Tensor> inputs = interp::random_inputs(model_->graph, 7);
  std::vector<Tensor> want = interp::interpret(model_->graph, inputs);
  std::string work = temp_dir("c_api_program");
  std::filesystem::create_directories(work);
  write_bytes(work + "/x.bin", inputs[0]);
  cli_test::Outcome r =
      run_shell(fmt::format("{} {} {}/out {}/x.bin", ORCH_C_EXAMPLE, *dir_, work, work));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("f32[4,32]"), std::string::npos) << r.output;
  std::ifstream in(work + "/out0.bin", std::ios::binary);
  std::vector<float> got(want[0].numel());
  in.read(reinterpret_cast<char*>(got.data()), static_cast<std::streamsize>(want[0].nbytes()));
  ASSERT_TRUE(in) << "short output file";
  expect_close(want[0], got.data());
}

TEST_F(CApi, CProgramReportsAShortInputFile) {
  std::string work = temp_dir("c_api_short");
  std::filesystem::create_directories(work);
  std::ofstream(work + "/x.bin") << "too short";
  cli_test::Outcome r =
      run_shell(fmt::format("{} {} {}/out {}/x.bin", ORCH_C_EXAMPLE, *dir_, work, work));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("not 256 bytes of input 'x'"), std::string::npos) << r.output;
}

TEST_F(CApi, DescribesInputsAndOutputs) {
  orch_module* m = orch_module_load(dir_->c_str());
  ASSERT_NE(m, nullptr) << orch_last_error();
  EXPECT_EQ(orch_module_num_inputs(m), 1);
  EXPECT_STREQ(orch_module_input_name(m, 0), "x");
  EXPECT_STREQ(orch_module_input_dtype(m, 0), "f32");
  EXPECT_EQ(orch_module_input_rank(m, 0), 2);
  EXPECT_EQ(orch_module_input_dim(m, 0, 1), 16);
  EXPECT_EQ(orch_module_input_bytes(m, 0), 4u * 16 * 4);
  EXPECT_EQ(orch_module_output_bytes(m, 0), 4u * 32 * 4);
  EXPECT_EQ(orch_module_input_name(m, 1), nullptr);
  EXPECT_EQ(orch_module_input_dim(m, 0, 2), -1);
  orch_module_destroy(m);
}

TEST_F(CApi, FailuresAreStatusesWithMessages) {
  EXPECT_EQ(orch_module_load("/nonexistent/module"), nullptr);
  EXPECT_NE(std::string(orch_last_error()).find("/nonexistent/module"), std::string::npos)
      << orch_last_error();
  orch_module* m = orch_module_load(dir_->c_str());
  ASSERT_NE(m, nullptr) << orch_last_error();
  orch_context* ctx = orch_context_create(m);
  ASSERT_NE(ctx, nullptr) << orch_last_error();
  std::vector<float> y(4 * 32);
  void* outputs[] = {y.data()};
  EXPECT_EQ(orch_run(m, ctx, nullptr, outputs), -1);
  EXPECT_STREQ(orch_last_error(), "orch_run: inputs is NULL");
  const void* no_input[] = {nullptr};
  EXPECT_EQ(orch_run(m, ctx, no_input, outputs), -1);
  EXPECT_STREQ(orch_last_error(), "orch_run: input 0 ('x') is NULL");
  std::vector<float> x(4 * 16, 0.5f);
  const void* inputs[] = {x.data()};
  EXPECT_EQ(orch_run(m, ctx, inputs, outputs), 0) << orch_last_error();
  EXPECT_STREQ(orch_last_error(), "");
  EXPECT_EQ(orch_run(m, nullptr, inputs, outputs), -1);
  orch_context_destroy(ctx);
  orch_module_destroy(m);
}

TEST_F(CApi, OrchRunTimesAModuleAndWritesItsOutputs) {
  std::string out = temp_dir("c_api_run_out");
  cli_test::Outcome r = cli_test::orch_cli(
      fmt::format("run {} --random-inputs --seed 3 --out {} --repeat 5 --threads 1", *dir_, out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string last = r.output.substr(r.output.rfind("latency_ms: "));
  EXPECT_TRUE(last.starts_with("latency_ms: median=")) << r.output;
  EXPECT_NE(last.find(" min="), std::string::npos);
  // The same seeded inputs as the interpreter's --random-inputs: outputs agree.
  Tensor got =
      read_npy_file(out + "/" + model_->graph.value(model_->graph.outputs()[0]).name + ".npy");
  std::vector<Tensor> want =
      interp::interpret(model_->graph, interp::random_inputs(model_->graph, 3));
  expect_close(want[0], got.data<float>());
  r = cli_test::orch_cli(fmt::format("run {} --random-inputs --out {} --shape x=1x2", *dir_, out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("a compiled module has fixed shapes"), std::string::npos) << r.output;
}

TEST_F(CApi, OrchRunProfilesEachKernel) {
  std::string out = temp_dir("c_api_profile_out");
  Module module = Module::load(*dir_);
  cli_test::Outcome r = cli_test::orch_cli(
      fmt::format("run {} --random-inputs --out {} --repeat 3 --profile --threads 1", *dir_, out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kernel profile: median of 3 runs"), std::string::npos) << r.output;
  for (const KernelSpec& k : module.kernels()) {
    // Every kernel has a row with its plan cost (the manifest records one for each).
    ASSERT_GT(k.planned_us, 0) << k.name;
    EXPECT_NE(r.output.find(fmt::format("| {} | {} |", k.name, k.backend)), std::string::npos)
        << r.output;
  }
  EXPECT_NE(r.output.find(fmt::format("| all | {} |", module.kernels().size())), std::string::npos)
      << r.output;
  // The timing line stays last (scripts read it with tail -n 1).
  EXPECT_TRUE(r.output.substr(r.output.rfind("latency_ms: ")).starts_with("latency_ms: median="));
  r = cli_test::orch_cli(fmt::format("run {} --random-inputs --out {} --profile", *dir_, out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--profile needs --repeat N"), std::string::npos) << r.output;
}

TEST_F(CApi, CudaGraphFlagNeedsACudaModule) {
  std::string out = temp_dir("c_api_graph_out");
  cli_test::Outcome r =
      cli_test::orch_cli(fmt::format("run {} --random-inputs --out {} --cuda-graph", *dir_, out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--cuda-graph applies to CUDA modules (orch optimize --target cuda)"),
            std::string::npos)
      << r.output;
  std::string model = std::string(ORCH_SOURCE_DIR) + "/examples/tiny_mlp.orch.txt";
  r = cli_test::orch_cli(fmt::format("run {} --random-inputs --out {} --cuda-graph", model, out));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--cuda-graph applies to CUDA modules"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace orch::stitch_test
