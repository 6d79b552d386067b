// `orch optimize`: a model file becomes a compiled module directory, validated against the
// interpreter. The pipeline: primitive graph (import, fission), tune (candidates, measurement,
// BLP), stitch (kernels, driver, memory plan, weights), validate, then an atomic rename.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "driver/fusion_policy.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "orch/module.h"
#include "stitch/stitch.h"

namespace orch::driver {

struct OptimizeOptions {
  PipelineOptions pipeline;
  TuneOptions tune;
  stitch::StitchOptions stitch;
  int threads = 0;       // kernel threads while validating; 0: one per core
  bool validate = true;  // run the module on random inputs against the interpreter
  /// CUDA modules: validate on this machine's GPU (runtime/cuda_module.h) instead of running the
  /// generated code on the host.
  bool validate_on_gpu = false;
  uint64_t seed = 1;  // of the validation inputs
  /// full: Korch's orchestration over every candidate; operator / greedy: the benchmark's
  /// baselines (fusion_policy.h), which skip the rewrite stage (they need fission's origins).
  FusionPolicy fusion = FusionPolicy::full;
  /// Modules built and timed to plan with the kernels' times inside them (module_rounds.h), the
  /// tuned plan's first; measured CPU tuning of the full policy only. 0 or 1: the tuned plan's
  /// module alone (the default: the rounds bought no more than the timing noise so far).
  int module_rounds = 0;
  /// Where to write the tuned orchestration problem (orchestrate/problem_text.h: primitives,
  /// candidates, the costs of the last solve), for the solver's benchmark to solve it again
  /// (`bench_orchestrate --problem FILE`); empty: nowhere.
  std::string problem_path;
  std::function<void(std::string_view)> log;  // progress lines; null: silent
};

/// What optimize built and what each step cost.
struct OptimizeResult {
  stitch::StitchResult module;
  TuneStats tune;
  int primitives = 0;
  double objective_us = 0;
  double tune_seconds = 0;
  double stitch_seconds = 0;         // of the module kept
  int module_rounds = 0;             // modules built by module rounds (0: they did not run)
  double module_rounds_seconds = 0;  // their stitching and timing
  double validate_seconds = 0;
  double total_seconds = 0;
};

/// Optimizes the model at `model_path` into the module directory `out_dir`. The module is
/// written to a temporary directory beside `out_dir` and renamed at the end, so an interrupted
/// or failed run never leaves a module that looks valid; an existing `out_dir` is replaced only
/// when it is a module directory (or empty). Throws Error on any failure.
OptimizeResult optimize_model(const std::string& model_path, const std::string& out_dir,
                              const OptimizeOptions& options);

/// Stitches an orchestrated plan into `out_dir` the same way (temporary directory, validation
/// unless options.validate is false, rename): the part of optimize_model after tuning.
stitch::StitchResult build_module(const Graph& graph, const OrchestrationProblem& problem,
                                  const Plan& plan, std::span<const codegen::KernelChoice> choices,
                                  const std::string& out_dir, const OptimizeOptions& options);

/// Loads the module in `dir`, runs it on random inputs (seeded) and compares the values every
/// kernel writes with the interpreter's on `graph` (the primitive graph it was built from),
/// kernel by kernel. Throws Error naming the first kernel whose output differs, the value and
/// the element. Tolerance: |got - want| <= 1e-4 + 1e-3 |want| (kernels sum in f32 in another
/// order than the interpreter's double sums).
void validate_module(const std::string& dir, const Graph& graph, uint64_t seed, int threads = 0);
/// The same on given inputs (one per graph input, in order), such as a test's own data: random
/// values can be invalid for data-dependent primitives (Gather indices, sequence lengths).
void validate_module(const std::string& dir, const Graph& graph, std::span<const Tensor> inputs,
                     int threads = 0);

/// Runs a module through `run` (which passes its hook to the module's run and returns the
/// outputs) and compares every value each kernel writes, then the outputs, with the interpreter
/// on `inputs`, run along with the module so that only live values are kept. Throws Error naming
/// the first kernel and element that differ.
using ModuleRun = std::function<std::vector<Tensor>(const KernelHook& after_kernel)>;
void check_module_run(const std::string& dir, const Graph& graph, std::span<const Tensor> inputs,
                      std::span<const KernelSpec> kernels, std::span<const TensorSpec> outputs,
                      const ModuleRun& run);

/// The CUDA module in `dir` (stitch_cuda) validated like validate_module on this machine's GPU
/// (runtime/cuda_module.h; throws Error when there is none or it is of another architecture).
void validate_cuda_module_on_gpu(const std::string& dir, const Graph& graph, uint64_t seed);

/// Without a GPU: kernels.cu compiled for the host (codegen/cuda/cuda_emulate.h) and every
/// kernel's launches run there in plan order, each value a kernel writes compared with the
/// interpreter's. Throws Error naming the first that differs.
void validate_cuda_module_on_host(const std::string& dir, const Graph& graph, uint64_t seed);

}  // namespace orch::driver
