// Small models optimized end to end without measuring (stitch_test_util.h): the module builds,
// loads, and matches the interpreter kernel by kernel.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "orch/module.h"
#include "stitch_test_util.h"

namespace orch::stitch_test {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_manifest(const std::string& dir) {
  std::ifstream in(fs::path(dir) / "manifest.json");
  return nlohmann::json::parse(in);
}

// Builds, validates (kernel by kernel) and returns the module directory.
std::string build(const PlannedModel& m, const std::string& name) {
  std::string dir = temp_dir(name);
  driver::OptimizeOptions options;
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, options);
  return dir;
}

TEST(Stitch, MlpModuleMatchesTheInterpreter) {
  PlannedModel m = plan_model(mlp_model());
  std::string dir = build(m, "mlp");
  for (const char* file :
       {"manifest.json", "weights.bin", "kernels.so", "report.md", "build/driver.cc"})
    EXPECT_TRUE(fs::exists(fs::path(dir) / file)) << file;
  nlohmann::json manifest = read_manifest(dir);
  EXPECT_EQ(manifest["kernels"].size(), m.plan.kernels.size());
  EXPECT_EQ(manifest["inputs"][0]["name"], "x");
  EXPECT_LE(manifest["arena_bytes"].get<int64_t>(), manifest["intermediate_bytes"].get<int64_t>());
  // The 16x32 weight is read from weights.bin, not compiled in.
  EXPECT_GE(manifest["weights_bytes"].get<int64_t>(), 16 * 32 * 4);

  Module module = Module::load(dir);
  std::vector<Tensor> inputs = interp::random_inputs(m.graph, 11);
  std::vector<Tensor> want = interp::interpret(m.graph, inputs);
  std::vector<Tensor> got = module.run(inputs);
  ASSERT_EQ(got.size(), 1u);
  for (int64_t i = 0; i < want[0].numel(); ++i)
    ASSERT_NEAR(got[0].get(i), want[0].get(i), 1e-4 + 1e-3 * std::abs(want[0].get(i))) << i;
}

TEST(Stitch, ConvReluModuleMatchesTheInterpreter) {
  Graph g;
  g.name = "conv_relu";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 3, 8, 8}});
  std::vector<double> wv(4 * 3 * 3 * 3);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.1 * static_cast<double>(i % 7) - 0.3;
  ValueId w = b.constant(Tensor::from_doubles(DType::f32, {4, 3, 3, 3}, wv), "w");
  ValueId conv = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.output(b.op("Relu", {conv}));
  PlannedModel m = plan_model(g);
  std::string dir = build(m, "conv_relu");
  nlohmann::json manifest = read_manifest(dir);
  bool dnnl = false;
  for (const auto& k : manifest["kernels"]) dnnl |= k["backend"] == "dnnl";
  EXPECT_TRUE(dnnl) << "the convolution should run on oneDNN";
}

// A oneDNN kernel measured fastest in the plain layout keeps that configuration in the module:
// the manifest names it and the runtime builds the kernel with it, at load and when
// set_threads rebuilds it.
TEST(Stitch, PlainLayoutConvolutionRunsInTheModule) {
  Graph g;
  g.name = "pointwise";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 16, 6, 6}});
  ValueId w = b.constant(interp::random_tensor({DType::f32, {8, 16, 1, 1}}, 3), "w");
  b.output(b.op("Relu", {b.op("Conv", {x, w})}));
  PlannedModel m = plan_model(g);
  for (codegen::KernelChoice& c : m.choices)
    if (c.backend == "dnnl") c.config = "layout=plain";
  std::string dir = build(m, "pointwise");
  nlohmann::json manifest = read_manifest(dir);
  int plain = 0;
  for (const auto& k : manifest["kernels"]) plain += k["config"] == "layout=plain";
  EXPECT_EQ(plain, 1);
  Module module = Module::load(dir);
  std::vector<Tensor> inputs = interp::random_inputs(m.graph, 5);
  std::vector<Tensor> want = interp::interpret(m.graph, inputs);
  for (int threads : {0, 1}) {
    module.set_threads(threads);
    std::vector<Tensor> got = module.run(inputs);
    ASSERT_EQ(got.size(), 1u);
    for (int64_t i = 0; i < want[0].numel(); ++i)
      ASSERT_NEAR(got[0].get(i), want[0].get(i), 1e-4 + 1e-4 * std::abs(want[0].get(i))) << i;
  }
}

TEST(Stitch, TopKRunsByReferenceInsideTheModule) {
  Graph g;
  g.name = "topk";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {3, 10}});
  ValueId k = b.constant(Tensor::from_ints(DType::i64, {1}, std::vector<int64_t>{4}), "k");
  ValueId scaled = b.op("Mul", {x, b.constant(Tensor::scalar(DType::f32, 2.0), "two")});
  std::vector<ValueId> top = b.op_multi("TopK", {scaled, k}, {{"axis", int64_t{1}}}, 2);
  b.output(b.op("Relu", {top[0]}));
  b.output(top[1]);
  PlannedModel m = plan_model(g);
  std::string dir = build(m, "topk");
  nlohmann::json manifest = read_manifest(dir);
  bool reference = false;
  for (const auto& kernel : manifest["kernels"])
    reference |= kernel["backend"] == "reference" && kernel["optimized"] == false;
  EXPECT_TRUE(reference);
  std::ifstream report(fs::path(dir) / "report.md");
  std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("not optimized"), std::string::npos);
}

}  // namespace
}  // namespace orch::stitch_test

namespace orch::stitch_test {
namespace {

TEST(Stitch, ValidationNamesTheFirstKernelThatDiffers) {
  PlannedModel m = plan_model(mlp_model());
  std::string dir = temp_dir("mlp_mismatch");
  driver::OptimizeOptions options;
  options.validate = false;
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, options);
  // Against a graph whose bias differs, the first kernel adding the bias is the culprit.
  Graph other = m.graph;
  ValueId bias = other.find_value("bias");
  ASSERT_NE(bias, kNoValue);
  other.value(bias).constant = other.value(bias).constant.clone();
  other.value(bias).constant.set(0, 100.0);
  int first = -1;
  for (size_t k = 0; k < m.plan.kernels.size() && first < 0; ++k)
    for (int p : m.problem.candidates[m.plan.kernels[k].candidate].primitives)
      for (ValueId in : m.graph.node(p).inputs)
        if (in == bias) first = static_cast<int>(k);
  ASSERT_GE(first, 0);
  try {
    driver::validate_module(dir, other, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind(fmt::format("kernel k{} (", first), 0), 0u) << message;
    EXPECT_NE(message.find("differs from the interpreter: element 0: interpreter"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace orch::stitch_test

namespace orch::stitch_test {
namespace {

TEST(Stitch, OutputsNoKernelWritesAreCopied) {
  // Returns an input as is and one value twice: neither has a kernel of its own to write it.
  Graph g;
  g.name = "passthrough";
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {2, 3}});
  ValueId y = b.op("Relu", {x});
  b.output(y);
  b.output(x);
  b.output(y);
  PlannedModel m = plan_model(g);
  std::string dir = temp_dir("passthrough");
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, driver::OptimizeOptions{});
  nlohmann::json manifest = read_manifest(dir);
  EXPECT_FALSE(manifest["outputs"][0].contains("copy_from"));
  EXPECT_EQ(manifest["outputs"][1]["copy_from"]["region"], "input");
  EXPECT_EQ(manifest["outputs"][2]["copy_from"]["region"], "output");
  Module module = Module::load(dir);
  std::vector<Tensor> inputs = {
      Tensor::from_doubles(DType::f32, {2, 3}, std::vector<double>{-1, 2, -3, 4, -5, 6})};
  std::vector<Tensor> got = module.run(inputs);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].to_doubles(), (std::vector<double>{0, 2, 0, 4, 0, 6}));
  EXPECT_EQ(got[1].to_doubles(), (std::vector<double>{-1, 2, -3, 4, -5, 6}));
  EXPECT_EQ(got[2].to_doubles(), (std::vector<double>{0, 2, 0, 4, 0, 6}));
}

}  // namespace
}  // namespace orch::stitch_test

namespace orch::stitch_test {
namespace {

TEST(Stitch, AFailedBuildLeavesNothingBehind) {
  PlannedModel m = plan_model(mlp_model());
  for (codegen::KernelChoice& c : m.choices) c.backend = "bogus";
  std::string dir = temp_dir("mlp_failed");
  try {
    driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, driver::OptimizeOptions{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'bogus'"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir));
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".orch_mlp_failed.tmp"), std::string::npos);
}

// A run killed by a signal leaves its scratch directory; the next build beside the same output
// removes it, and keeps a live process's and anything not named like orch's scratch.
TEST(Stitch, ScratchOfAKilledRunIsRemovedByTheNext) {
  PlannedModel m = plan_model(mlp_model());
  std::string dir = temp_dir("mlp_scratch");
  fs::path parent = fs::path(dir).parent_path();
  std::string name = fs::path(dir).filename().string();
  pid_t gone = ::fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  fs::path stale = parent / fmt::format(".{}.tmp-{}", name, gone);
  fs::path stale_round = parent / fmt::format(".{}.round2-{}", name, gone);
  fs::path live = parent / fmt::format(".{}.tmp-{}", name, ::getppid());
  fs::path other = parent / fmt::format(".{}.notes-{}", name, gone);
  for (const fs::path& p : {stale, stale_round, live, other}) fs::create_directories(p);
  driver::OptimizeOptions options;
  options.validate = false;
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, options);
  EXPECT_TRUE(fs::exists(fs::path(dir) / "manifest.json"));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_round));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
  fs::remove_all(live);
  fs::remove_all(other);
}

TEST(Stitch, DoesNotReplaceADirectoryThatIsNotAModule) {
  PlannedModel m = plan_model(mlp_model());
  std::string dir = temp_dir("not_a_module");
  fs::create_directories(dir);
  std::ofstream(fs::path(dir) / "precious.txt") << "keep me";
  try {
    driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, driver::OptimizeOptions{});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("{}: exists and is not a module directory; not replacing it", dir));
  }
  EXPECT_TRUE(fs::exists(fs::path(dir) / "precious.txt"));
}

}  // namespace
}  // namespace orch::stitch_test
