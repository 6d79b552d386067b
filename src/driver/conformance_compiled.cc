// `--compiled`: a test's model through the whole optimizer (import, fission, rewrite, analytic
// tuning, stitch), validated kernel by kernel against the interpreter on the test's inputs, and
// the compiled module's outputs compared with the test's; a CUDA module's code runs on the host,
// or on this machine's GPU.
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "driver/conformance_internal.h"
#include "driver/host_cuda_module.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "ir/error.h"
#include "orch/module.h"
#include "runtime/cuda_module.h"

namespace orch::driver::conformance_detail {
namespace fs = std::filesystem;
namespace {

// A module directory of this process, removed when the run is over (also on failure).
class TempModuleDir {
 public:
  explicit TempModuleDir(const std::string& base) {
    fs::path root = base.empty() ? fs::temp_directory_path() : fs::path(base);
    root_ = root / fmt::format("orch_conformance_{}", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~TempModuleDir() {
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }
  std::string module() const { return (root_ / "module").string(); }

 private:
  fs::path root_;
};

// "stage: message" for an error out of one stage of the compiled run.
std::string stage_failure(std::string_view stage, const std::exception& e) {
  return fmt::format("{}: {}", stage, e.what());
}

// Runs a module on `feed`, `hook` after each kernel: a CPU module in a context of its own, a
// CUDA module's code on the host or on the GPU.
std::vector<Tensor> run(const Module& module, std::span<const Tensor> feed,
                        const KernelHook& hook) {
  Context context = module.new_context();
  return module.run(context, feed, hook);
}

std::vector<Tensor> run(HostCudaModule& module, std::span<const Tensor> feed,
                        const KernelHook& hook) {
  return module.run(feed, hook);
}

std::vector<Tensor> run(runtime::CudaModule& module, std::span<const Tensor> feed,
                        const KernelHook& hook) {
  return module.run(feed, hook);
}

// The module `load` returns from `dir`, checked kernel by kernel against the interpreter on the
// test's inputs, then its outputs against the test's.
template <typename Load>
std::string run_module(const std::string& dir, const Load& load, const Graph& graph,
                       std::span<const Tensor> feed, const std::vector<Tensor>& expected,
                       const ConformanceOptions& options) {
  std::optional<decltype(load())> module;
  try {
    module.emplace(load());
  } catch (const std::exception& e) {
    return stage_failure("load", e);
  }
  // The validating run's outputs are the ones compared with the test's: a second run would
  // double the time of a test, which on the host emulation of a CUDA module is long already.
  std::vector<Tensor> actual;
  try {
    check_module_run(dir, graph, feed, module->kernels(), module->outputs(),
                     [&](const KernelHook& hook) {
                       actual = run(*module, feed, hook);
                       return actual;
                     });
  } catch (const std::exception& e) {
    return stage_failure("validate", e);
  }
  if (actual.size() != expected.size())
    return fmt::format("run: the module gives {} outputs, the test expects {}", actual.size(),
                       expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    std::string diff = compare_tensors(actual[i], as_declared(expected[i], actual[i].dtype()),
                                       options.rtol, options.atol);
    if (!diff.empty())
      return fmt::format("compiled output {} ('{}'): {}", i, module->outputs()[i].name, diff);
  }
  return "";
}

}  // namespace

std::string run_compiled_data_set(const std::string& model, const frontend::ImportOptions& import,
                                  const std::vector<Tensor>& expected,
                                  const ConformanceOptions& options) {
  TempModuleDir dir(options.temp_dir);
  // optimize_model's steps, with validation on the test's inputs instead of random ones.
  OptimizeOptions optimize;
  optimize.pipeline.import = import;
  // Conformance checks code generation, not speed: estimated costs, nothing measured.
  optimize.tune.analytic = true;
  optimize.tune.target = options.target;
  optimize.validate = false;
  TunedModel tuned;
  try {
    tuned = tune_model(primitive_graph(model, optimize.pipeline), optimize.tune);
    build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir.module(), optimize);
  } catch (const Error& e) {
    // What the target does not support (no NVRTC for the CUDA target) skips the test.
    if (e.kind() == Error::Kind::unsupported) rethrow_with_context(e, "optimize");
    return stage_failure("optimize", e);
  } catch (const std::exception& e) {
    return stage_failure("optimize", e);
  }

  std::vector<Tensor> feed;
  for (ValueId in : tuned.graph.inputs()) {
    const Value& v = tuned.graph.value(in);
    auto it = import.known_inputs.find(v.name);
    if (it == import.known_inputs.end())
      return fmt::format("optimize: the primitive graph's input '{}' has no test data", v.name);
    feed.push_back(as_declared(it->second, v.type.dtype));
  }
  if (options.target == Target::cuda && options.on_gpu)
    return run_module(
        dir.module(), [&] { return runtime::CudaModule::load(dir.module()); }, tuned.graph, feed,
        expected, options);
  if (options.target == Target::cuda)
    return run_module(
        dir.module(), [&] { return HostCudaModule(dir.module()); }, tuned.graph, feed, expected,
        options);
  // Tests run in parallel processes: a CPU module runs on one kernel thread.
  auto load = [&] {
    Module module = Module::load(dir.module());
    module.set_threads(1);
    return module;
  };
  return run_module(dir.module(), load, tuned.graph, feed, expected, options);
}

}  // namespace orch::driver::conformance_detail
