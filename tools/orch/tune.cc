// `orch tune MODEL`: measure the candidate kernels a model needs (tuning database first) and
// orchestrate them; `orch plan MODEL`: the same, then the chosen plan.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

#include "commands.h"
#include "driver/pipeline.h"
#include "driver/tune.h"

namespace orch::tool {
namespace {

struct TuneArgs {
  std::string model;
  std::vector<std::string> shapes;
  driver::TuneOptions options;
  bool quiet = false;
};

// A bar with ETA on a terminal, plain lines otherwise.
std::function<void(const driver::TuneProgress&)> progress_printer(bool quiet) {
  if (quiet) return {};
  bool terminal = ::isatty(STDERR_FILENO) != 0;
  return [=](const driver::TuneProgress& p) {
    double eta = p.round_elapsed_s / std::max(1, p.done) * (p.total - p.done);
    if (terminal) {
      int width = 30;
      int filled = p.total > 0 ? width * p.done / p.total : width;
      fmt::print(stderr, "\r[{}{}] {} round {} {}/{} {:.0f} s, ETA {:.0f} s   ",
                 std::string(filled, '#'), std::string(width - filled, ' '), p.phase, p.round,
                 p.done, p.total, p.elapsed_s, eta);
      if (p.done == p.total) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "{} round {} {}/{} ({:.1f} s, ETA {:.0f} s): {}\n", p.phase, p.round,
                 p.done, p.total, p.elapsed_s, eta, p.last);
    }
  };
}

driver::TunedModel tune(TuneArgs& args) {
  driver::PipelineOptions pipeline{.import = import_options(args.shapes)};
  Graph graph = driver::primitive_graph(args.model, pipeline);
  args.options.progress = progress_printer(args.quiet);
  if (!args.quiet)
    args.options.log = [](std::string_view line) { fmt::print(stderr, "{}\n", line); };
  args.options.warning = print_warning;
  return driver::tune_model(std::move(graph), args.options);
}

void print_summary(const TuneArgs& args, const driver::TunedModel& t) {
  const driver::TuneStats& s = t.stats;
  fmt::print("model: {}\n", args.model);
  fmt::print("primitives: {}; candidates: {}; unique kernels: {}\n", t.dag.size, s.candidates,
             s.unique);
  fmt::print(
      "kernels: {} from the database, {} measured ({} measurements), {} rechecked, {} failed, {} "
      "never measured ({})\n",
      s.from_db, s.measured, s.measurements, s.rechecked, s.failed, s.pruned,
      args.options.analytic     ? "analytic estimates"
      : args.options.exhaustive ? (args.options.prune ? "pruned by the roofline bound" : "none")
                                : "ruled out by the roofline bound, lazily");
  fmt::print("rounds: {}{}; recheck rounds: {}; tuning time: {:.1f} s\n", s.rounds,
             driver::tuning_outcome(s, args.options.analytic), s.recheck_rounds, s.tuning_seconds);
  if (s.earlier_lazy_s > 0)
    fmt::print("search budget: earlier runs spent {:.1f} s of --max-lazy-s {:g} on this model{}\n",
               s.earlier_lazy_s, args.options.max_lazy_s,
               s.earlier_lazy_s >= args.options.max_lazy_s
                   ? " (spent: settled without measuring; a "
                     "larger --max-lazy-s searches further)"
                   : "");
  fmt::print("objective: {:.2f} us in {} kernels{}\n", t.plan.objective_us, t.plan.kernels.size(),
             t.plan.note.empty() ? "" : fmt::format(" ({})", t.plan.note));
  if (s.estimated_plan_us > 0)
    fmt::print("estimated phase: a plan of {:.2f} us after {:.1f} s\n", s.estimated_plan_us,
               s.estimated_plan_seconds);
  if (!s.converged && s.lower_bound_us > 0)
    fmt::print(
        "lower bound: no plan costs less than {:.2f} us (as far as the roofline bounds hold; "
        "gap {:.1f}%)\n",
        s.lower_bound_us,
        100 * (t.plan.objective_us - s.lower_bound_us) / std::max(t.plan.objective_us, 1e-9));
}

void add_tune_options(CLI::App& cmd, TuneArgs& args) {
  cmd.add_option("MODEL", args.model, "Model file (.onnx or .orch.txt)")->required();
  add_shape_option(cmd, args.shapes);
  cmd.add_option("--db", args.options.db_path,
                 "Tuning database (default $XDG_CACHE_HOME/orch/tuning.db or "
                 "~/.cache/orch/tuning.db)");
  cmd.add_option("--jobs", args.options.jobs, "Measurement workers (default: cores)")
      ->check(at_least(0));
  cmd.add_option("--threads", args.options.threads,
                 "Kernel threads while measuring (default: one per core)")
      ->check(at_least(0));
  cmd.add_flag("--every-backend", args.options.every_backend,
               "Also measure Halide on a lone MatMul/Conv that oneDNN takes (slow compiles)");
  cmd.add_flag("--flush-cache", args.options.flush_cache,
               "Evict the caches before every timed run (cold-cache latencies)");
  cmd.add_flag("--exhaustive", args.options.exhaustive,
               "Measure every candidate instead of only those a plan could use");
  cmd.add_flag("--prune", args.options.prune,
               "With --exhaustive: skip kernels whose roofline bound cannot beat their primitives "
               "run one per kernel");
  cmd.add_flag("--analytic", args.options.analytic,
               "Measure nothing: estimated costs (roofline bound + 2 us per kernel)");
  cmd.add_flag_callback(
      "--no-write-cost", [&args] { args.options.write_cost = false; },
      "Plan with the kernels' measured times alone, without the cost of writing their outputs "
      "to main memory (an ablation; on several kernel threads the default counts it, as a "
      "module pays it there; at one (--threads 1, or one core) it is never counted)");
  cmd.add_flag("--quiet", args.quiet, "No progress on stderr");
  cmd.add_option("--max-primitives", args.options.max_primitives,
                 "Primitives per candidate kernel (default 32)")
      ->check(at_least(0));
  cmd.add_option("--max-chain", args.options.max_chain,
                 "Convolutions one oneDNN kernel may chain in its blocked layouts (default 3; 1: "
                 "one Linear primitive per kernel)")
      ->check(CLI::Range(1, 8));
  cmd.add_option("--max-states", args.options.max_states,
                 "Execution states per subgraph (default 2000)")
      ->check(at_least(1));
  cmd.add_option("--halide-configs", args.options.halide_configs,
                 "Tile-search schedules measured besides Halide's default (default 1)")
      ->check(at_least(0));
  cmd.add_option("--budget-ms", args.options.budget_ms, "Timed runs per kernel (default 20 ms)")
      ->check(above(0));
  cmd.add_option(
         "--timeout", args.options.timeout_s,
         "CPU seconds a backend configuration may spend compiling a kernel, and again timing it, "
         "before it counts as hung (default 30; wall clock: ten times; the reference "
         "interpreter's run that checks the kernel: 40 times)")
      ->check(above(0));
  cmd.add_option("--max-rounds", args.options.max_rounds,
                 "Lazy rounds before settling for the measured kernels (default 30)")
      ->check(at_least(0));
  cmd.add_option(
         "--max-lazy-s", args.options.max_lazy_s,
         "Seconds of lazy rounds before settling for the measured kernels, counting earlier "
         "runs on the model (default 600; a rerun continues with what is left)")
      ->check(at_least(0));
  cmd.add_option("--exact-s", args.options.exact_s,
                 "Of those, seconds the exact phase (roofline bounds instead of estimates) may "
                 "spend proving the plan optimal; 0 skips it (default 300)")
      ->check(at_least(0));
  cmd.add_option("--recheck-rounds", args.options.recheck_rounds,
                 "Rounds of measuring the plan's kernels a second time and planning again over "
                 "those times, against kernels chosen for a lucky first measurement (default 8; "
                 "0: none)")
      ->check(at_least(0));
  cmd.add_option("--machine", args.options.machine_path, "Machine description (JSON)");
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Measure the candidate kernels of a model (tuning database) and orchestrate them");
  add_tune_options(*cmd, *args);
  cmd->callback([args] { print_summary(*args, tune(*args)); });
}

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd =
      app.add_subcommand("plan", "Tune a model, then print the chosen kernels and the objective");
  add_tune_options(*cmd, *args);
  cmd->callback([args] {
    driver::TunedModel t = tune(*args);
    print_summary(*args, t);
    fmt::print("\n{}", format_plan(t.problem, t.plan));
    fmt::print("\nbackends (each kernel's time measured alone):\n");
    for (size_t i = 0; i < t.plan.kernels.size(); ++i) {
      int c = t.plan.kernels[i].candidate;
      const codegen::KernelChoice& choice = t.choices[static_cast<size_t>(c)];
      fmt::print("  {:>4}  {:<9} {:>10.2f} us  {}\n", i, choice.backend, choice.cost_us,
                 t.problem.candidates[static_cast<size_t>(c)].label);
    }
  });
}

}  // namespace orch::tool
