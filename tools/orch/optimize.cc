// `orch optimize MODEL -o OUT_DIR`: the whole pipeline, from a model file to a compiled module
// directory validated against the interpreter.
#include <fmt/format.h>

#include "codegen/cuda/cuda_source.h"
#include "commands.h"
#include "driver/optimize.h"
#include "ir/error.h"

namespace orch::tool {
namespace {

struct OptimizeArgs {
  std::string model;
  std::string out;
  std::vector<std::string> shapes;
  int threads = 0;
  std::string db;
  double time_budget_s = 60;
  bool no_validate = false;
  bool quiet = false;
  std::string fusion = "full";
  int max_primitives = 32;
  int max_chain = 3;
  double max_lazy_s = 600;
  double exact_s = 300;
  int recheck_rounds = 8;
  int module_rounds = 0;
  bool analytic = false;
  bool no_write_cost = false;
  bool plain_between_kernels = false;
  bool no_relayout_convolutions = false;
  std::string target = "cpu";
  std::string gpu;  // "": this machine's when measuring, h200 with --compile-only
  std::string gpu_libraries = "cublas,cudnn";
  bool compile_only = false;
  bool validate_on_gpu = false;
  std::string save_problem;
};

// "1.50 MiB", "3.0 KiB", "512 B".
std::string human_bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", bytes / 1048576.0);
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

void run_optimize(const OptimizeArgs& args) {
  driver::OptimizeOptions options;
  options.pipeline.import = import_options(args.shapes);
  options.tune.db_path = args.db;
  options.tune.solve_time_limit_s = args.time_budget_s;
  options.tune.max_primitives = args.max_primitives;
  options.tune.max_chain = args.max_chain;
  options.tune.max_lazy_s = args.max_lazy_s;
  options.tune.exact_s = args.exact_s;
  options.tune.recheck_rounds = args.recheck_rounds;
  options.module_rounds = args.module_rounds;
  options.tune.analytic = args.analytic || args.compile_only;
  options.tune.write_cost = !args.no_write_cost;
  options.stitch.blocked_between_kernels = !args.plain_between_kernels;
  options.stitch.relayout_convolutions = !args.no_relayout_convolutions;
  options.tune.relayout_convolutions = !args.no_relayout_convolutions;
  options.tune.target = driver::parse_target(args.target);
  options.tune.gpu = !args.gpu.empty()       ? args.gpu
                     : options.tune.analytic ? "h200"
                                             : std::string(driver::kThisGpu);
  options.tune.cuda_libraries = codegen::parse_cuda_libraries(args.gpu_libraries);
  check(args.gpu.empty() || options.tune.target == driver::Target::cuda,
        "--gpu applies to --target cuda");
  // Fail early: an unknown description, or no GPU to measure on.
  if (options.tune.target == driver::Target::cuda) driver::target_gpu(options.tune.gpu);
  options.fusion = driver::parse_fusion_policy(args.fusion);
  options.threads = args.threads;
  options.tune.threads = args.threads;
  options.validate = !args.no_validate;
  options.problem_path = args.save_problem;
  // A module measured on this machine's GPU is validated there too.
  options.validate_on_gpu = args.validate_on_gpu ||
                            (options.tune.target == driver::Target::cuda && !options.tune.analytic);
  check(!args.validate_on_gpu || options.tune.target == driver::Target::cuda,
        "--validate-on-gpu applies to --target cuda");
  check(args.gpu_libraries == "cublas,cudnn" || options.tune.target == driver::Target::cuda,
        "--gpu-libraries applies to --target cuda");
  options.tune.warning = print_warning;
  if (!args.quiet) {
    options.log = [](std::string_view line) { fmt::print("{}\n", line); };
    options.tune.log = options.log;
    // Tuning is the long step: a line every 10 measurements and at the end of each round.
    options.tune.progress = [](const driver::TuneProgress& p) {
      if (p.done % 10 == 0 || p.done == p.total)
        fmt::print(stderr, "tune round {}{}: {}/{} measured, {:.0f} s\n", p.round,
                   p.phase == "recheck" ? " (recheck)" : "", p.done, p.total, p.elapsed_s);
    };
  }
  driver::OptimizeResult r = driver::optimize_model(args.model, args.out, options);
  const stitch::StitchResult& m = r.module;
  if (options.tune.target == driver::Target::cuda)
    fmt::print(
        "module: {} ({} CUDA kernels, {} cuBLAS GEMMs and {} cuDNN convolutions among them, {} "
        "on the host, {} launches, {}; plan {:.1f} us estimated)\n",
        args.out, m.kernels, m.cublas_kernels, m.cudnn_kernels, m.reference_kernels,
        m.cuda_launches, options.tune.gpu, r.objective_us);
  else
    fmt::print("module: {} ({} kernels: {} Halide, {} oneDNN, {} reference; plan {:.1f} us)\n",
               args.out, m.kernels, m.halide_kernels, m.dnnl_kernels, m.reference_kernels,
               r.objective_us);
  fmt::print("memory: arena {} for {} of intermediates ({} stored channel-blocked); weights {}\n",
             human_bytes(m.arena_bytes), human_bytes(m.intermediate_bytes), m.blocked_tensors,
             human_bytes(m.weights_bytes));
  std::string rounds = r.module_rounds > 0 ? fmt::format(", {} module rounds {:.1f} s",
                                                         r.module_rounds, r.module_rounds_seconds)
                                           : "";
  fmt::print("time: tune {:.1f} s{}, stitch {:.1f} s, validate {:.1f} s, total {:.1f} s\n",
             r.tune_seconds, rounds, r.stitch_seconds, r.validate_seconds, r.total_seconds);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd =
      app.add_subcommand("optimize", "Optimize a model into a compiled module directory");
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .orch.txt)")->required();
  cmd->add_option("-o,--out", args->out, "Module directory to write")->required();
  add_shape_option(*cmd, args->shapes);
  cmd->add_option("--threads", args->threads,
                  "Kernel threads while measuring and validating (0: one per core); tune for the "
                  "thread count the module will run with")
      ->check(at_least(0));
  cmd->add_option("--db", args->db, "Tuning database (default: the user's tuning database)");
  cmd->add_option("--time-budget", args->time_budget_s,
                  "Seconds the orchestration solver may spend per solve (default 60)")
      ->check(above(0));
  cmd->add_flag("--no-validate", args->no_validate,
                "Skip running the module against the interpreter before writing it");
  cmd->add_flag("-q,--quiet", args->quiet, "Print only the summary");
  cmd->add_option("--save-problem", args->save_problem,
                  "Also write the tuned orchestration problem (primitives, candidate kernels, "
                  "their costs) as text to this file, for bench_orchestrate --problem FILE to "
                  "solve it again");
  cmd->add_option("--fusion", args->fusion,
                  "full (orchestration over every candidate kernel, default), operator (one "
                  "kernel per ONNX operator) or greedy (injective operators fused into their "
                  "producer, TVM FuseOps-style): the last two are the benchmark's baselines");
  cmd->add_option("--max-primitives", args->max_primitives,
                  "Primitives per candidate kernel (default 32)")
      ->check(at_least(0));
  cmd->add_option("--max-chain", args->max_chain,
                  "Convolutions one oneDNN kernel may chain in its blocked layouts (default 3; 1: "
                  "one Linear primitive per kernel)")
      ->check(CLI::Range(1, 8));
  cmd->add_option("--max-lazy-s", args->max_lazy_s,
                  "Seconds of lazy tuning rounds before settling for the best plan over the "
                  "kernels measured so far, counting earlier runs on the model (default 600; the "
                  "report says when it settled)")
      ->check(at_least(0));
  cmd->add_option("--exact-s", args->exact_s,
                  "Of those, seconds the exact phase (roofline bounds instead of estimates) may "
                  "spend proving the plan optimal; 0 skips it (default 300)")
      ->check(at_least(0));
  cmd->add_option("--recheck-rounds", args->recheck_rounds,
                  "Rounds of measuring the plan's kernels a second time and planning again over "
                  "those times, against kernels chosen for a lucky first measurement (default 8; "
                  "0: none)")
      ->check(at_least(0));
  cmd->add_option("--module-rounds", args->module_rounds,
                  "Build and time up to this many modules, planning each over the kernels' times "
                  "inside the modules before it, and keep the fastest (the first is the tuned "
                  "plan's; default 0: the tuned plan's module alone). Measured CPU tuning with "
                  "--fusion full only; 50-110 s on the CNNs here, within the noise in speed so far")
      ->check(at_least(0));
  cmd->add_flag("--plain-between-kernels", args->plain_between_kernels,
                "Store every intermediate in the model's layout, none channel-blocked between "
                "oneDNN convolutions (an ablation: each kernel then reorders its tensors)");
  cmd->add_flag("--no-relayout-convolutions", args->no_relayout_convolutions,
                "Run every oneDNN kernel in the layout it was tuned in, and plan those measured "
                "channel-blocked with the reorders they pay in the model's layout (an ablation; "
                "by default, kernels tuned in the model's layout move to the blocked one where "
                "that lets their tensors stay blocked, and --module-rounds still tries that)");
  cmd->add_flag("--analytic", args->analytic,
                "Measure nothing: plan with estimated costs (roofline bound + 2 us per kernel) "
                "and the first backend that accepts each kernel; quick, for checking code "
                "generation, not for speed");
  cmd->add_flag(
      "--no-write-cost", args->no_write_cost,
      "Plan with the kernels' measured times alone, without the cost of writing their outputs "
      "to main memory (an ablation; on several kernel threads the default counts it, as a "
      "module pays it there; at one (--threads 1, or one core) it is never counted)");
  cmd->add_option("--target", args->target,
                  "cpu (default) or cuda: NVIDIA GPU kernels as CUDA C compiled by NVRTC into one "
                  "cubin, each candidate measured on this machine's GPU (CUDA events, one "
                  "child process per kernel), or planned without one with --compile-only");
  cmd->add_option("--gpu", args->gpu,
                  "With --target cuda: the GPU to plan and compile for, a description file, a "
                  "shipped name (h200, a100) or 'this' (as this machine's driver describes its "
                  "GPU); default: 'this' when measuring, h200 with --compile-only");
  cmd->add_option("--gpu-libraries", args->gpu_libraries,
                  "With --target cuda: the vendor libraries a lone MatMul, or a convolution with "
                  "perhaps its bias and ReLU, may call: cublas,cudnn (default), cublas, cudnn or "
                  "none (generated code only)");
  cmd->add_flag("--compile-only", args->compile_only,
                "Measure nothing on the target: plan with analytic costs (like --analytic) and "
                "compile; a CUDA module is validated by running its code on the host unless "
                "--validate-on-gpu");
  cmd->add_flag("--validate-on-gpu", args->validate_on_gpu,
                "With --target cuda --compile-only: validate the module on this machine's GPU, "
                "kernel by kernel, instead of running its code on the host (a module measured "
                "on the GPU is always validated there)");
  cmd->callback([args] { run_optimize(*args); });
}

}  // namespace orch::tool
