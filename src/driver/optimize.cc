#include "driver/optimize.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "driver/host_cuda_module.h"
#include "driver/module_rounds.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/error.h"
#include "orch/module.h"
#include "orchestrate/problem_text.h"
#include "runtime/cuda_module.h"
#include "runtime/module_format.h"
#include "stitch/layouter.h"

namespace orch::driver {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void say(const OptimizeOptions& options, std::string_view line) {
  if (options.log) options.log(line);
}

// A kernel computes from the module's values, which differ from the interpreter's within the
// float tolerance, so a comparison of a value within rounding of its threshold may come out the
// other way: YOLOv4's LeakyReLU (where(x < 0, 0.1 x, x)) tests each convolution output against
// 0, and one element of a (x < 0) kernel came out false where the interpreter's was true, which
// failed the module. A boolean output may differ in this fraction of its elements, at least one;
// what it selects (x or 0.1 x, both about 0 there) is still checked with the float tolerance
// downstream, and a wrong comparison flips far more.
constexpr double kFlippedComparisons = 1e-5;

// "" when `got` matches `want`, else the first element that differs.
std::string compare(const Tensor& want, const Tensor& got) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape())
    return fmt::format("type {} instead of {}", format_type({got.dtype(), got.shape()}),
                       format_type({want.dtype(), want.shape()}));
  const bool boolean = want.dtype() == DType::boolean;
  const int64_t allowed =
      boolean
          ? std::max<int64_t>(
                1, static_cast<int64_t>(kFlippedComparisons * static_cast<double>(want.numel())))
          : 0;
  int64_t differing = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (close_enough(got.get(i), want.get(i), 1e-3, 1e-4)) continue;
    if (first < 0) first = i;
    if (++differing > allowed) break;
  }
  if (differing <= allowed) return "";
  std::string where =
      fmt::format("element {}: interpreter {}, module {}", first, want.get(first), got.get(first));
  if (!boolean) return where;
  return fmt::format("{} (over {} of {} boolean elements differ)", where, allowed, want.numel());
}

// A module may replace `to` only when it is absent, empty or a module directory.
void check_replaceable(const fs::path& to) {
  bool replaceable =
      !fs::exists(to) ||
      (fs::is_directory(to) && (fs::is_empty(to) || fs::exists(to / runtime::kManifestFile)));
  check(replaceable, "{}: exists and is not a module directory; not replacing it", to.string());
}

// The problem file's directory exists and is writable: checked before tuning, which can take
// minutes, and not after it.
void check_writable(const std::string& file) {
  const fs::path dir = fs::absolute(file).parent_path();
  check(fs::is_directory(dir) && ::access(dir.c_str(), W_OK) == 0,
        "{}: cannot write (no writable directory {})", file, dir.string());
}

// Moves `from` to `to`, replacing `to`.
void install(const fs::path& from, const fs::path& to) {
  check_replaceable(to);
  if (fs::exists(to)) fs::remove_all(to);
  fs::rename(from, to);
}

}  // namespace

void validate_module(const std::string& dir, const Graph& graph, uint64_t seed, int threads) {
  validate_module(dir, graph, interp::random_inputs(graph, seed), threads);
}

void check_module_run(const std::string& dir, const Graph& graph, std::span<const Tensor> inputs,
                      std::span<const KernelSpec> kernels, std::span<const TensorSpec> outputs,
                      const ModuleRun& run) {
  // The interpreter runs along with the module (interp::Interpretation): each value a kernel
  // writes is computed when the kernel has run, compared, and let go. Keeping all of them first
  // took 17 GB for Segformer-B0 at batch 16, and a second run of the interpreter for the outputs.
  std::vector<int> holds(graph.num_values(), 0);
  std::vector<std::vector<ValueId>> written(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k)
    for (const TensorSpec& out : kernels[k].outputs) {
      ValueId v = graph.find_value(out.name);
      check(v != kNoValue, "{}: kernel {} writes '{}', which the graph does not have", dir,
            kernels[k].name, out.name);
      written[k].push_back(v);
      ++holds[v];
    }
  for (ValueId out : graph.outputs()) ++holds[out];
  interp::Interpretation interpretation(graph, inputs, std::move(holds));

  std::vector<Tensor> got = run([&](int k, std::span<const Tensor> results) {
    const KernelSpec& spec = kernels[k];
    for (size_t i = 0; i < results.size(); ++i) {
      ValueId v = written[k][i];
      std::string diff = compare(interpretation.value(v), results[i]);
      if (!diff.empty())
        fail("validation: kernel {} writes '{}', which differs from the interpreter: {}", spec.name,
             spec.outputs[i].name, diff);
      interpretation.release(v);
    }
  });
  for (size_t i = 0; i < got.size(); ++i) {
    std::string diff = compare(interpretation.value(graph.outputs()[i]), got[i]);
    check(diff.empty(), "validation: module output {} '{}' differs from the interpreter: {}", i,
          outputs[i].name, diff);
  }
}

void validate_module(const std::string& dir, const Graph& graph, std::span<const Tensor> inputs,
                     int threads) {
  Module module = Module::load(dir);
  module.set_threads(threads);
  Context context = module.new_context();
  check_module_run(dir, graph, inputs, module.kernels(), module.outputs(),
                   [&](const KernelHook& hook) { return module.run(context, inputs, hook); });
}

void validate_cuda_module_on_gpu(const std::string& dir, const Graph& graph, uint64_t seed) {
  runtime::CudaModule module = runtime::CudaModule::load(dir);
  std::vector<Tensor> inputs = interp::random_inputs(graph, seed);
  check_module_run(dir, graph, inputs, module.kernels(), module.outputs(),
                   [&](const KernelHook& hook) { return module.run(inputs, hook); });
}

void validate_cuda_module_on_host(const std::string& dir, const Graph& graph, uint64_t seed) {
  HostCudaModule module(dir);
  std::vector<Tensor> inputs = interp::random_inputs(graph, seed);
  check_module_run(dir, graph, inputs, module.kernels(), module.outputs(),
                   [&](const KernelHook& hook) { return module.run(inputs, hook); });
}

namespace {

fs::path module_path(const std::string& out_dir) {
  fs::path out = fs::absolute(out_dir).lexically_normal();
  return out.filename().empty() ? out.parent_path() : out;
}

// A directory beside the module `out` for work in progress: renamed onto `out` when done, so an
// interrupted run never leaves a module that looks valid.
fs::path scratch_beside(const fs::path& out, std::string_view what) {
  return out.parent_path() / fmt::format(".{}.{}-{}", out.filename().string(), what, getpid());
}

// Removes the scratch directories beside `out` whose run is gone: a run killed by a signal
// (SIGTERM, SIGKILL) leaves its .NAME.tmp-PID or .NAME.roundN-PID behind, which nothing else
// would remove. A live process's are kept: two runs may build beside the same output.
void remove_stale_scratch(const fs::path& out) {
  const std::string prefix = "." + out.filename().string() + ".";
  auto digits = [](std::string_view text) {
    return !text.empty() && text.size() < 10 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(out.parent_path(), ec)) {
    std::string name = entry.path().filename().string();
    size_t dash = name.rfind('-');
    if (!name.starts_with(prefix) || dash == std::string::npos || dash < prefix.size()) continue;
    std::string what = name.substr(prefix.size(), dash - prefix.size());
    std::string pid = name.substr(dash + 1);
    bool ours = what == "tmp" || (what.starts_with("round") && digits(what.substr(5)));
    if (!ours || !digits(pid)) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) == 0 || errno != ESRCH) continue;
    fs::remove_all(entry.path(), ec);
  }
}

// Validates the module stitched into `dir` (when the options ask) and renames it onto `out`;
// removes `dir` when either fails.
void validate_and_install(const fs::path& dir, const fs::path& out, const Graph& graph,
                          const OptimizeOptions& options) {
  try {
    if (options.validate) {
      auto start = Clock::now();
      std::string where;
      if (options.tune.target != Target::cuda) {
        validate_module(dir.string(), graph, options.seed, options.threads);
      } else if (options.validate_on_gpu) {
        validate_cuda_module_on_gpu(dir.string(), graph, options.seed);
        where = " (on the GPU)";
      } else {
        validate_cuda_module_on_host(dir.string(), graph, options.seed);
        where = " (the CUDA code run on the host)";
      }
      say(options, fmt::format("validated against the interpreter{} in {:.1f} s", where,
                               seconds_since(start)));
    }
    install(dir, out);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
    throw;
  }
}

// Module rounds (module_rounds.h) apply to measured CPU plans over the candidates; a baseline
// policy's fixed kernels leave the BLP no other plan.
bool module_rounds_apply(const OptimizeOptions& options) {
  const TuneOptions& tune = options.tune;
  return options.module_rounds > 1 && !tune.analytic && tune.target == Target::cpu &&
         tune.fixed_kernels.empty();
}

InModulePlan run_module_rounds(const TunedModel& tuned, const fs::path& out,
                               const OptimizeOptions& options) {
  ModuleRoundsOptions rounds;
  rounds.rounds = options.module_rounds;
  rounds.threads = options.threads;
  rounds.seed = options.seed;
  rounds.stitch = options.stitch;
  rounds.solve.time_limit_s = options.tune.solve_time_limit_s;
  rounds.log = options.log;
  return plan_in_modules(tuned, rounds, [&](int round) {
    return scratch_beside(out, fmt::format("round{}", round + 1)).string();
  });
}

}  // namespace

// The stitcher's options for a CUDA module: the libraries its plan was costed with.
stitch::StitchOptions cuda_stitch_options(const OptimizeOptions& options) {
  stitch::StitchOptions o = options.stitch;
  o.cuda_libraries = options.tune.cuda_libraries;
  return o;
}

stitch::StitchResult build_module(const Graph& graph, const OrchestrationProblem& problem,
                                  const Plan& plan, std::span<const codegen::KernelChoice> choices,
                                  const std::string& out_dir, const OptimizeOptions& options) {
  fs::path out = module_path(out_dir);
  fs::path temp = scratch_beside(out, "tmp");
  check_replaceable(out);  // before the work, not after it
  remove_stale_scratch(out);
  fs::remove_all(temp);
  stitch::StitchResult result;
  try {
    result = options.tune.target == Target::cuda
                 ? stitch::stitch_cuda(graph, problem, plan, choices, temp.string(),
                                       target_gpu(options.tune.gpu), cuda_stitch_options(options))
                 : stitch::stitch(graph, problem, plan, choices, temp.string(), options.stitch);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    throw;
  }
  say(options, fmt::format("stitched {} kernels in {:.1f} s", result.kernels, result.seconds));
  validate_and_install(temp, out, graph, options);
  return result;
}

OptimizeResult optimize_model(const std::string& model_path, const std::string& out_dir,
                              const OptimizeOptions& options) {
  auto start = Clock::now();
  OptimizeResult result;
  if (!options.problem_path.empty()) check_writable(options.problem_path);
  PipelineOptions pipeline = options.pipeline;
  TuneOptions tune = options.tune;
  std::vector<NodeId> origin;
  if (options.fusion != FusionPolicy::full) {
    pipeline.rewrite = false;
    pipeline.fission_origin = &origin;
  }
  Graph graph = primitive_graph(model_path, pipeline);
  if (options.fusion == FusionPolicy::operator_) tune.fixed_kernels = operator_kernels(origin);
  if (options.fusion == FusionPolicy::greedy) tune.fixed_kernels = greedy_kernels(graph, origin);
  result.primitives = static_cast<int>(graph.num_nodes());
  say(options,
      fmt::format("{}: {} primitives{}", model_path, result.primitives,
                  tune.fixed_kernels.empty()
                      ? ""
                      : fmt::format(", {} fixed kernels ({} fusion)", tune.fixed_kernels.size(),
                                    fusion_policy_name(options.fusion))));
  auto tune_start = Clock::now();
  TunedModel tuned = tune_model(std::move(graph), tune);
  result.tune_seconds = seconds_since(tune_start);
  result.tune = tuned.stats;
  result.objective_us = tuned.plan.objective_us;
  if (!options.problem_path.empty())
    stitch::write_file(options.problem_path, problem_to_text(tuned.problem));
  say(options, fmt::format("tuned in {:.1f} s: {} kernels, {:.1f} us{}", result.tune_seconds,
                           tuned.plan.kernels.size(), tuned.plan.objective_us,
                           tuning_outcome(tuned.stats, tune.analytic)));
  auto stitch_start = Clock::now();
  if (module_rounds_apply(options)) {
    fs::path out = module_path(out_dir);
    check_replaceable(out);
    InModulePlan in_module = run_module_rounds(tuned, out, options);
    result.module_rounds = static_cast<int>(in_module.rounds.size());
    result.module_rounds_seconds = seconds_since(stitch_start);
    result.objective_us = in_module.plan.objective_us;
    result.module = std::move(in_module.stitched);
    validate_and_install(in_module.dir, out, tuned.graph, options);
    result.stitch_seconds = result.module.seconds;
    result.validate_seconds = seconds_since(stitch_start) - result.module_rounds_seconds;
  } else {
    result.module =
        build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, out_dir, options);
    result.stitch_seconds = result.module.seconds;
    result.validate_seconds = seconds_since(stitch_start) - result.module.seconds;
  }
  result.total_seconds = seconds_since(start);
  return result;
}

}  // namespace orch::driver
