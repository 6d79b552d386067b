// `--compiled`: a test's model through the whole optimizer (import, fission, rewrite, analytic
// tuning, stitch), validated kernel by kernel against the interpreter on the test's inputs, and
// the compiled module's outputs compared with the test's.
#include <unistd.h>

#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "driver/conformance_internal.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "ir/error.h"
#include "orch/module.h"

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
  optimize.validate = false;
  TunedModel tuned;
  try {
    tuned = tune_model(primitive_graph(model, optimize.pipeline), optimize.tune);
    build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir.module(), optimize);
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
  // Kernel by kernel against the interpreter; tests run in parallel processes: one thread each.
  try {
    validate_module(dir.module(), tuned.graph, feed, 1);
  } catch (const std::exception& e) {
    return stage_failure("validate", e);
  }

  std::optional<Module> module;
  try {
    module.emplace(Module::load(dir.module()));
    module->set_threads(1);
  } catch (const std::exception& e) {
    return stage_failure("load", e);
  }
  std::vector<Tensor> actual;
  try {
    actual = module->run(feed);
  } catch (const std::exception& e) {
    return stage_failure("run", e);
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

}  // namespace orch::driver::conformance_detail
