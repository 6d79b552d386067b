// The runtime on a module built once (the MLP of stitch_test_util.h): runs from several threads
// with their own contexts, and clear errors for wrong inputs and damaged module directories.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "../stitch/stitch_test_util.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "orch/module.h"

namespace orch::stitch_test {
namespace {

namespace fs = std::filesystem;

class Runtime : public MlpModuleSuite {
 protected:
  // A copy of the module directory to damage.
  static std::string copy_module(const std::string& name) {
    std::string dir = temp_dir(name);
    fs::copy(*dir_, dir, fs::copy_options::recursive);
    return dir;
  }

  // The message of the Error that loading `dir` throws.
  static std::string load_error(const std::string& dir) {
    try {
      Module::load(dir);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
};

std::string run_error(const Module& module, std::span<const Tensor> inputs) {
  try {
    module.run(inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void expect_close(const Tensor& want, const Tensor& got) {
  ASSERT_EQ(want.shape(), got.shape());
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(got.get(i), want.get(i), 1e-4 + 1e-3 * std::abs(want.get(i))) << i;
}

TEST_F(Runtime, ModuleDescribesItsInputsOutputsAndKernels) {
  Module module = Module::load(*dir_);
  ASSERT_EQ(module.inputs().size(), 1u);
  EXPECT_EQ(module.inputs()[0].name, "x");
  EXPECT_EQ(module.inputs()[0].type, (TensorType{DType::f32, {4, 16}}));
  ASSERT_EQ(module.outputs().size(), 1u);
  EXPECT_EQ(module.outputs()[0].type, (TensorType{DType::f32, {4, 32}}));
  EXPECT_EQ(module.kernels().size(), model_->plan.kernels.size());
}

// CPU seconds of the calling thread and of the whole process (getrusage: both exact).
std::pair<double, double> cpu_seconds() {
  auto seconds = [](const rusage& r) {
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
  };
  rusage self{}, process{};
  getrusage(RUSAGE_THREAD, &self);
  getrusage(RUSAGE_SELF, &process);
  return {seconds(self), seconds(process)};
}

// The CPU time of other threads (OpenMP's workers) over `runs` runs, as a fraction of the
// calling thread's. CPU time, not wall time: a loaded machine delays a worker but does not
// take its share of the work away (under the dynamic schedule of Halide's loops it can shrink
// it, hence the low bar for two threads).
double worker_cpu_share(const Module& module, const std::vector<Tensor>& inputs, int runs) {
  auto [self0, all0] = cpu_seconds();
  for (int i = 0; i < runs; ++i) module.run(inputs);
  auto [self1, all1] = cpu_seconds();
  return ((all1 - all0) - (self1 - self0)) / (self1 - self0);
}

// Builds `g` into a module of one `backend` kernel, then runs it after set_threads(1), where no
// other thread may work, and after set_threads(2), where one must (on a machine with 2 cores).
void expect_set_threads_governs(const Graph& g, const std::string& backend, int runs) {
  PlannedModel m = plan_model(g);
  std::string dir = temp_dir("threads_module_" + backend);
  driver::build_module(m.graph, m.problem, m.plan, m.choices, dir, driver::OptimizeOptions{});
  Module module = Module::load(dir);
  ASSERT_EQ(module.kernels().size(), 1u);
  ASSERT_EQ(module.kernels()[0].backend, backend);
  std::vector<Tensor> inputs = interp::random_inputs(g, 5);
  Tensor want = interp::interpret(g, inputs)[0];
  module.set_threads(1);
  expect_close(want, module.run(inputs)[0]);
  EXPECT_LT(worker_cpu_share(module, inputs, runs), 0.05);  // the calling thread worked alone
  if (std::thread::hardware_concurrency() >= 2) {
    module.set_threads(2);  // and the same measure sees a second thread's work
    expect_close(want, module.run(inputs)[0]);
    EXPECT_GT(worker_cpu_share(module, inputs, runs), 0.1);
  }
  fs::remove_all(dir);
}

// oneDNN fixes a kernel's OpenMP thread count when it builds it, so set_threads rebuilds the
// module's oneDNN kernels: before, `orch run --threads 1` ran convolutions on every core.
TEST(RuntimeThreads, SetThreadsRebuildsOneDnnKernelsForTheCount) {
  Graph g;
  Builder b(g);
  // A convolution: oneDNN's bakes its thread count in (its MatMul reads OpenMP's at each run).
  ValueId x = b.input("x", {DType::f32, {1, 64, 56, 56}});
  std::vector<double> wv(64 * 64 * 3 * 3);
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.01 * static_cast<double>(i % 13) - 0.06;
  ValueId w = b.constant(Tensor::from_doubles(DType::f32, {64, 64, 3, 3}, wv), "w");
  b.output(b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  expect_set_threads_governs(g, "dnnl", 300);
}

// Halide's parallel loops run on OpenMP (the module's driver installs the handler), so the same
// count governs them: a large elementwise kernel, which Halide's default schedule parallelizes.
TEST(RuntimeThreads, SetThreadsGovernsHalideKernels) {
  Graph g;
  Builder b(g);
  b.output(b.op("Tanh", {b.input("x", {DType::f32, {512, 4096}})}));
  expect_set_threads_governs(g, "halide", 100);
}

TEST_F(Runtime, TwoThreadsRunOneModuleWithTheirOwnContexts) {
  Module module = Module::load(*dir_);
  module.set_threads(2);
  auto worker = [&](uint64_t seed, std::string* problem) {
    Context context = module.new_context();
    for (int i = 0; i < 20; ++i) {
      std::vector<Tensor> inputs = interp::random_inputs(model_->graph, seed + i);
      Tensor want = interp::interpret(model_->graph, inputs)[0];
      Tensor got = module.run(context, inputs)[0];
      for (int64_t j = 0; j < want.numel(); ++j)
        if (std::abs(got.get(j) - want.get(j)) > 1e-4 + 1e-3 * std::abs(want.get(j))) {
          *problem =
              fmt::format("seed {} element {}: {} vs {}", seed + i, j, got.get(j), want.get(j));
          return;
        }
    }
  };
  std::string problem_a, problem_b;
  std::thread a(worker, 100, &problem_a), b(worker, 200, &problem_b);
  a.join();
  b.join();
  EXPECT_EQ(problem_a, "");
  EXPECT_EQ(problem_b, "");
}

TEST_F(Runtime, HookSeesEveryKernelsOutputs) {
  Module module = Module::load(*dir_);
  Context context = module.new_context();
  std::vector<Tensor> inputs = interp::random_inputs(model_->graph, 3);
  std::vector<int> seen;
  std::vector<Tensor> outputs = module.run(context, inputs, [&](int k, std::span<const Tensor> o) {
    seen.push_back(k);
    EXPECT_EQ(o.size(), module.kernels()[k].outputs.size());
  });
  EXPECT_EQ(seen.size(), module.kernels().size());
  expect_close(interp::interpret(model_->graph, inputs)[0], outputs[0]);
}

TEST_F(Runtime, OutputBuffersAreReusedOnlyOnceTheCallerDroppedThem) {
  Module module = Module::load(*dir_);
  Context context = module.new_context();
  std::vector<Tensor> first_inputs = interp::random_inputs(model_->graph, 5);
  std::vector<Tensor> second_inputs = interp::random_inputs(model_->graph, 6);
  const std::byte* dropped = module.run(context, first_inputs)[0].bytes();
  Tensor held = module.run(context, first_inputs)[0];
  EXPECT_EQ(held.bytes(), dropped);
  Tensor second = module.run(context, second_inputs)[0];
  EXPECT_NE(second.bytes(), held.bytes());
  expect_close(interp::interpret(model_->graph, first_inputs)[0], held);
  expect_close(interp::interpret(model_->graph, second_inputs)[0], second);
}

TEST_F(Runtime, WrongInputsAreClearErrors) {
  Module module = Module::load(*dir_);
  EXPECT_EQ(run_error(module, {}), fmt::format("module '{}' takes 1 inputs, got 0", *dir_));
  std::vector<Tensor> shape = {Tensor(DType::f32, {4, 15})};
  EXPECT_EQ(run_error(module, shape), "input 0 'x' is f32[4,15], the module takes f32[4,16]");
  std::vector<Tensor> dtype = {Tensor(DType::f64, {4, 16})};
  EXPECT_EQ(run_error(module, dtype), "input 0 'x' is f64[4,16], the module takes f32[4,16]");
}

TEST_F(Runtime, MissingDirectoryOrManifest) {
  EXPECT_EQ(load_error("/nonexistent/module"), "/nonexistent/module: not a module directory");
  std::string dir = temp_dir("runtime_empty");
  fs::create_directories(dir);
  EXPECT_EQ(load_error(dir), fmt::format("{}/manifest.json: cannot read the module manifest (is "
                                         "this a module directory?)",
                                         dir));
}

TEST_F(Runtime, CorruptedManifest) {
  std::string dir = copy_module("runtime_bad_json");
  std::ofstream(fs::path(dir) / "manifest.json") << "{\"format\": \"orch-module\", \"vers";
  std::string message = load_error(dir);
  EXPECT_EQ(message.rfind(fmt::format("{}/manifest.json: not valid JSON: ", dir), 0), 0u)
      << message;
}

TEST_F(Runtime, ManifestMissingAField) {
  std::string dir = copy_module("runtime_no_field");
  std::ifstream in(fs::path(dir) / "manifest.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("arena_bytes");
  std::ofstream(fs::path(dir) / "manifest.json") << j.dump();
  EXPECT_EQ(load_error(dir), fmt::format("{}/manifest.json: missing field 'arena_bytes'", dir));
}

TEST_F(Runtime, ManifestLocationOutsideItsRegion) {
  std::string dir = copy_module("runtime_bad_offset");
  std::ifstream in(fs::path(dir) / "manifest.json");
  nlohmann::json j = nlohmann::json::parse(in);
  nlohmann::json& out = j["kernels"][0]["outputs"][0];
  out["region"] = "arena";
  out["offset"] = int64_t{1} << 40;
  std::ofstream(fs::path(dir) / "manifest.json") << j.dump();
  EXPECT_EQ(load_error(dir),
            fmt::format("{}/manifest.json: kernel k0: value '{}' lies outside its region", dir,
                        out["value"].get<std::string>()));
}

TEST_F(Runtime, TruncatedWeights) {
  std::string dir = copy_module("runtime_truncated");
  fs::path weights = fs::path(dir) / "weights.bin";
  uintmax_t size = fs::file_size(weights);
  fs::resize_file(weights, size / 2);
  EXPECT_EQ(load_error(dir),
            fmt::format("{}: {} bytes, the manifest says {} (truncated or corrupted)",
                        weights.string(), size / 2, size));
}

TEST_F(Runtime, MissingKernelLibrary) {
  std::string dir = copy_module("runtime_no_library");
  fs::remove(fs::path(dir) / "kernels.so");
  EXPECT_EQ(load_error(dir), fmt::format("{}/kernels.so: the kernel library is missing", dir));
}

TEST_F(Runtime, CorruptedKernelLibrary) {
  std::string dir = copy_module("runtime_bad_library");
  std::ofstream(fs::path(dir) / "kernels.so") << "not an ELF file";
  EXPECT_EQ(load_error(dir),
            fmt::format("{}/kernels.so: not a 64-bit ELF library (15 bytes)", dir));
}

// dlopen would map the missing pages and fault reading them (SIGBUS): a clear error instead.
TEST_F(Runtime, TruncatedKernelLibrary) {
  std::string dir = copy_module("runtime_truncated_library");
  fs::path library = fs::path(dir) / "kernels.so";
  for (uintmax_t size : {uintmax_t{1000}, fs::file_size(library) - 1}) {
    fs::resize_file(library, size);
    std::string message = load_error(dir);
    EXPECT_EQ(message.rfind(library.string() + ": truncated or corrupted: ", 0), 0u) << message;
    EXPECT_NE(message.find(fmt::format("the file has {}", size)), std::string::npos) << message;
  }
}

TEST_F(Runtime, MissingExternalKernelGraph) {
  std::string dir = copy_module("runtime_no_graph");
  fs::remove(fs::path(dir) / "kernels" / "k0.orch");
  EXPECT_EQ(load_error(dir),
            fmt::format("{}/kernels/k0.orch: cannot read the graph of kernel k0", dir));
}

}  // namespace
}  // namespace orch::stitch_test
