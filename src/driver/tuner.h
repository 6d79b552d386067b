// The tuner behind tune_model (driver/tune.h), shared by the files that define it: tune.cc
// (identification, the unique kernels, the result), tune_measure.cc (measurements, fallbacks,
// rechecks) and tune_search.cc (the BLP's costs and the lazy, exhaustive and analytic searches).
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "codegen/choice.h"
#include "driver/cost_estimate.h"
#include "driver/tune.h"
#include "driver/unique_kernel.h"
#include "orchestrate/orchestrate.h"
#include "profile/profiler.h"
#include "profile/tuning_db.h"
#include "schedule/gpu/gpu_machine.h"
#include "schedule/machine.h"

namespace orch::driver::tune_detail {

using Clock = std::chrono::steady_clock;
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

class Tuner {
 public:
  Tuner(TunedModel& model, const TuneOptions& options);
  void run();

 private:
  void identify();
  void collect_unique();
  // Extracts the kernel of u's first candidate and fills in what follows from it alone.
  void describe(UniqueKernel& u) const;
  // The kernel graph of u's first candidate. UniqueKernel::kernel holds it only while u is
  // measured or its records read: all of them at once took 6 GB on YOLOX-Nano.
  Graph kernel_graph(const UniqueKernel& u) const;
  // Holds the graphs of `ids` (kernel_graph) while they are measured.
  void hold_graphs(const std::vector<size_t>& ids);
  void release_graphs(const std::vector<size_t>& ids);
  void say(std::string_view line) const {
    if (options_.log) options_.log(line);
  }

  // TuneOptions::write_cost, which says why only kernels on several threads pay it. Measured
  // tuning only: analytic costs are bounds plus a call cost, for checking code generation.
  bool write_cost() const {
    return options_.write_cost && !options_.analytic && !gpu_ && or_cores(options_.threads) > 1;
  }

  // Measured CUDA tuning: the profiler measures with the cuda backend (cuda_measure.h) on this
  // machine's GPU, which must be of the description's architecture, and the database keys its
  // records by that GPU and the libraries kernels may call.
  void measure_on_gpu();

  KernelKind kernel_kind(const Graph& kernel, double bound_us, bool library) const;

  // A kernel a plan cannot do without: a single primitive, or any kernel of a fixed policy.
  bool needed(const UniqueKernel& u) const {
    return u.primitives == 1 || !options_.fixed_kernels.empty();
  }

  // Measures `ids` (unique kernels), storing each result as soon as it arrives. A needed kernel
  // whose generators all failed and whose fallback no run measured (pinned measurements skip
  // it) is measured again with the fallback alone: the plan must exist, slow or not.
  void measure(const std::vector<size_t>& ids,
               Clock::time_point start_by = Clock::time_point::max());

  // A needed kernel failed on every backend: the plan is infeasible unless a fused kernel computes
  // it. Said at once, not when the search ends (Segformer-B0 at batch 16 took 53 minutes to say
  // "infeasible" when its largest kernels timed out); a fixed policy has no other kernel for it.
  void report_unworkable(const std::vector<size_t>& ids);
  void measure_fallbacks(const std::vector<size_t>& ids);
  void measure_with(const std::vector<size_t>& ids, const profile::ProfilerOptions& profiler,
                    bool again);
  void report(TuneProgress& progress, Clock::time_point round_start, const UniqueKernel& u,
              const std::string& failure) const;

  // Rechecks (TuneOptions::recheck_rounds): the plan's kernels measured again, each in the
  // configuration it was chosen in, and the BLP solved again over the new times, until the plan
  // holds rechecked kernels only. A plan picks the kernels whose one measurement came out low,
  // noise included (the winner's curse). In YOLOX-Nano's plan a 1x1 convolution's database
  // time was 66 us alone and 120 us with its bias, so the bias ran as a kernel of its own;
  // measured again, one after the other, they took 111 and 102 us. A recheck does not depend
  // on the choice it was taken for, so it replaces the first time (apply_records).
  void recheck_plan();
  void measure_rechecks(const std::vector<size_t>& ids);

  // The choices that kernels known from the database were never measured in (an older orch
  // offered fewer: unmeasured_choices), measured alone: measuring such a kernel again would also
  // compile its Halide schedules, seconds each for a convolution.
  void measure_new_configs();

  // Measures unique kernel ids[j] in pinned[j] alone; `take` gets each result.
  void measure_pinned(const std::vector<size_t>& ids,
                      const std::vector<codegen::KernelChoice>& pinned, int round,
                      const std::function<void(size_t, const profile::Measurement&)>& take);
  profile::ProfilerOptions library_only() const;

  // The per-call floor: a fraction of the fastest kernel measured on this machine.
  double floor_us() const;

  // What an unmeasured kernel costs in the BLP: a lower bound, an estimate, or nothing.
  enum class Unknown { bound, estimate, excluded };

  double estimate(const UniqueKernel& u) const {
    return estimate_cost_us(fit_, u.bound_us, u.kind, u.primitives);
  }

  void set_costs(Unknown unknown);

  OrchestrateOptions solve_options() const { return {.time_limit_s = options_.solve_time_limit_s}; }

  // Solves with `unknown` costs for the unmeasured kernels; returns the unmeasured kernels the
  // plan uses.
  std::vector<size_t> solve(Unknown unknown);

  // `missing` plus, up to a batch, the unmeasured kernels that promise most: the largest
  // estimated saving over running their primitives one kernel each. Rounds are what makes lazy
  // tuning slow (each waits for its slowest compile and re-solves the BLP), so a batch keeps
  // every worker busy and measures for at least as long as the last solve took: YOLOX-Nano's
  // solves take about a minute, in which two workers measure some 80 kernels, while its plans
  // asked for 76 and then 41 and the time budget ran out after two rounds.
  std::vector<size_t> with_promising(std::vector<size_t> missing) const;

  // A count option's value, 0 meaning one per core.
  static int or_cores(int count) {
    return count > 0 ? count : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }

  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  // The end of the lazy rounds' time: --max-lazy-s less earlier runs', or the phase's cap.
  Clock::time_point lazy_deadline(Clock::time_point phase_start, double phase_cap_s) const;
  bool out_of_rounds() const;

  // Adds the lazy time since the last call to the model's spent budget (after every round, so a
  // killed run loses at most one round of it).
  void record_lazy_time();

  // The lazy scheme. Phase 1 plans with costs estimated from the kernels measured so far and
  // measures what the plan uses until it uses measured kernels only: a good plan in a few
  // rounds. Phase 2 (exact) plans with lower bounds instead, until the plan uses measured kernels
  // only: then it is optimal over all candidates (as far as the bounds hold). Each exact round's
  // objective is a lower bound on every plan, kept as stats.lower_bound_us; when a cap stops the
  // search, the plan is the best over measured kernels and the bound says how far off it can be.
  void tune_lazily();

  // No measurement (TuneOptions::analytic): estimated costs, the target GPU's for CUDA.
  void plan_analytically();

  // Every unique kernel measured, except (with prune) those whose bound cannot beat computing
  // their primitives one kernel each. Fixed policies too: a spent lazy budget made them infeasible.
  void tune_exhaustively();
  void finish();
  TunedModel& model_;
  const TuneOptions& options_;
  std::optional<profile::TuningDb> db_;
  std::string machine_id_;
  schedule::Machine machine_;
  std::optional<schedule::GpuMachine> gpu_;  // target cuda: the GPU planned and compiled for
  profile::ProfilerOptions profiler_;
  std::vector<UniqueKernel> unique_;
  std::vector<size_t> unique_of_;    // candidate -> unique kernel
  std::set<size_t> warned_;          // unique kernels report_unworkable told of
  std::set<size_t> tried_fallback_;  // unique kernels measured again with the fallback alone
  std::set<size_t> unrecheckable_;   // unique kernels whose recheck failed
  // Kernels known from the database, and a choice none of its records measured.
  std::vector<size_t> new_config_ids_;
  std::vector<codegen::KernelChoice> new_configs_;
  std::string phase_;              // for progress lines
  CostEstimate fit_;               // fitted by the last set_costs
  double last_solve_s_ = 0;        // wall time of the last lazy round's solve
  double seconds_per_kernel_ = 0;  // wall time per kernel of the last measurement batch
  Clock::time_point lazy_start_;
  Clock::time_point lazy_recorded_;  // lazy time up to here is in the database
  std::string model_key_;
  Clock::time_point start_ = Clock::now();
};

}  // namespace orch::driver::tune_detail
