#include "driver/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "driver/cost_estimate.h"
#include "driver/unique_kernel.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/op_registry.h"
#include "orchestrate/from_candidates.h"
#include "profile/profiler.h"
#include "profile/roofline.h"
#include "profile/tuning_db.h"
#include "schedule/machine.h"

namespace orch::driver {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

class Tuner {
 public:
  Tuner(TunedModel& model, const TuneOptions& options)
      : model_(model),
        options_(options),
        machine_id_(measurement_key(options)),
        machine_(schedule::host_machine(options.machine_path)) {
    profiler_.jobs = options.jobs;
    profiler_.timeout_s = options.timeout_s;
    profiler_.measure.budget_ms = options.budget_ms;
    profiler_.measure.threads = options.threads;
    if (options.every_backend) profiler_.backends.library_decides = nullptr;
    // Twice the caches: whatever the replacement policy, none of the kernel's data survives.
    for (const schedule::MemoryLevel& l : machine_.levels)
      if (options.flush_cache) profiler_.measure.flush_bytes += 2 * l.capacity;
    profiler_.halide_configs = options.halide_configs;
    profiler_.machine = machine_;
    // Analytic tuning reads and writes no measurements: it leaves the database alone.
    if (!options.analytic) db_.emplace(options.db_path);
  }

  void run() {
    check(options_.target == Target::cpu || options_.analytic,
          "orch cannot measure CUDA kernels yet (no GPU profiler): plan them with analytic costs "
          "(--compile-only)");
    identify();
    collect_unique();
    if (!options_.analytic) {
      // Stored failures of kernels a plan needs whose fallback was never tried (a run killed in
      // between, or an older orch).
      std::vector<size_t> stored(unique_.size());
      std::iota(stored.begin(), stored.end(), size_t{0});
      phase_ = "fallbacks";
      measure_fallbacks(stored);
      report_unworkable(stored);
      phase_ = "new configurations";
      measure_new_configs();
    }
    if (options_.analytic)
      plan_analytically();
    else if (options_.exhaustive || !options_.fixed_kernels.empty())
      tune_exhaustively();
    else
      tune_lazily();
    if (!options_.analytic) recheck_plan();
    finish();
  }

 private:
  void identify() {
    model_.dag = dag_of(model_.graph);
    IdentifyOptions identify;
    identify.enumeration.max_states = options_.max_states;
    FeasibilityRules rules;
    rules.max_primitives = options_.max_primitives;
    // backend_check keeps a kernel of several Linear primitives only as a oneDNN chain.
    if (options_.target == Target::cpu) rules.max_linear = options_.max_chain;
    identify.enumeration.feasible = feasibility_of(rules);
    identify.enumeration.generable = options_.target == Target::cuda
                                         ? cuda_backend_check(model_.graph)
                                         : backend_check(model_.graph);
    if (!options_.fixed_kernels.empty()) restrict_to_kernels(identify, options_.fixed_kernels);
    model_.kernels = identify_kernels(model_.dag, identify);
    std::vector<double> zero(global_candidates(model_.dag, model_.kernels).size(), 0.0);
    model_.problem = orchestration_problem(model_.dag, model_.kernels, zero);
  }

  void collect_unique() {
    std::map<std::string, size_t> by_hash;
    for (size_t i = 0; i < model_.problem.candidates.size(); ++i) {
      const Candidate& c = model_.problem.candidates[i];
      auto [members, outputs] = kernel_parts(model_.graph, c);
      Graph kernel = codegen::extract_kernel(model_.graph, members, outputs);
      std::string hash = format_hash(structural_hash(kernel, false));
      auto [it, inserted] = by_hash.emplace(hash, unique_.size());
      if (inserted) {
        UniqueKernel u{.hash = hash, .outputs = output_types(kernel), .label = c.label};
        u.bound_us = profile::roofline_lower_bound_us(kernel, machine_);
        if (write_cost())
          u.write_us =
              profile::kernel_output_bytes(kernel) / (machine_.levels.back().bandwidth_gbs * 1e3);
        u.library = codegen::dnnl_backend().reject(kernel).empty();
        u.kind = kernel_kind(kernel, u.bound_us, u.library);
        u.primitives = static_cast<int>(c.primitives.size());
        u.linear = linear_primitives(kernel);
        u.kernel = std::move(kernel);
        unique_.push_back(std::move(u));
      }
      unique_[it->second].candidates.push_back(i);
    }
    unique_of_.resize(model_.problem.candidates.size());
    for (size_t u = 0; u < unique_.size(); ++u)
      for (size_t i : unique_[u].candidates) unique_of_[i] = u;
    for (UniqueKernel& u : unique_) {
      if (!db_) break;
      std::vector<profile::TuningRecord> records = db_->find(u.hash, machine_id_);
      if (records.empty() || fallback_only(u, records, profiler_.backends)) continue;
      apply_records(u, records, options_.relayout_convolutions);
      ++model_.stats.from_db;
      for (codegen::KernelChoice& choice : unmeasured_choices(u, records)) {
        new_config_ids_.push_back(static_cast<size_t>(&u - unique_.data()));
        new_configs_.push_back(std::move(choice));
      }
      const codegen::Backend* fallback = profiler_.backends.fallback;
      bool fallback_tried = std::any_of(records.begin(), records.end(), [&](const auto& r) {
        return fallback != nullptr && r.backend == fallback->name;
      });
      if (fallback_tried) tried_fallback_.insert(static_cast<size_t>(&u - unique_.data()));
    }
  }

  // TuneOptions::write_cost, which says why only kernels on several threads pay it. Measured
  // tuning only: analytic costs are bounds plus a call cost, for checking code generation.
  bool write_cost() const {
    return options_.write_cost && !options_.analytic && or_cores(options_.threads) > 1;
  }

  KernelKind kernel_kind(const Graph& kernel, double bound_us, bool library) const {
    double compute_us = profile::kernel_flops(kernel) / (profile::peak_gflops(machine_) * 1e3);
    if (compute_us < bound_us) return KernelKind::memory;
    return library ? KernelKind::library_compute : KernelKind::generated_compute;
  }

  // A kernel a plan cannot do without: a single primitive, or any kernel of a fixed policy.
  bool needed(const UniqueKernel& u) const {
    return u.primitives == 1 || !options_.fixed_kernels.empty();
  }

  // Measures `ids` (unique kernels), storing each result as soon as it arrives. A needed kernel
  // whose generators all failed and whose fallback no run measured (pinned measurements skip
  // it) is measured again with the fallback alone: the plan must exist, slow or not.
  void measure(const std::vector<size_t>& ids,
               Clock::time_point start_by = Clock::time_point::max()) {
    profile::ProfilerOptions profiler = profiler_;
    profiler.start_by = start_by;
    measure_with(ids, profiler, false);
    measure_fallbacks(ids);
    report_unworkable(ids);
  }

  // A needed kernel failed on every backend: the plan is infeasible unless a fused kernel computes
  // it. Said at once, not when the search ends (Segformer-B0 at batch 16 took 53 minutes to say
  // "infeasible" when its largest kernels timed out); a fixed policy has no other kernel for it.
  void report_unworkable(const std::vector<size_t>& ids) {
    for (size_t id : ids) {
      const UniqueKernel& u = unique_[id];
      if (!needed(u) || !u.known || u.cost_us < kInfinity || !warned_.insert(id).second) continue;
      std::string why = fmt::format(
          "{} failed on every backend ({}; raise --timeout if it timed out)", u.label, u.failure);
      check(options_.fixed_kernels.empty(), "kernel {}", why);
      if (options_.warning) options_.warning(why + ": the plan needs a fused kernel that does not");
    }
  }

  void measure_fallbacks(const std::vector<size_t>& ids) {
    const codegen::Backend* fallback = profiler_.backends.fallback;
    if (fallback == nullptr) return;
    std::vector<size_t> retry;
    for (size_t id : ids) {
      const UniqueKernel& u = unique_[id];
      if (needed(u) && u.known && u.cost_us == kInfinity && !tried_fallback_.contains(id))
        retry.push_back(id);
    }
    if (retry.empty()) return;
    tried_fallback_.insert(retry.begin(), retry.end());
    profile::ProfilerOptions alone = profiler_;
    alone.backends = {.backends = {}, .fallback = fallback};
    measure_with(retry, alone, true);
  }

  void measure_with(const std::vector<size_t>& ids, const profile::ProfilerOptions& profiler,
                    bool again) {
    if (ids.empty()) return;
    std::vector<const Graph*> kernels;
    for (size_t id : ids) kernels.push_back(&unique_[id].kernel);
    TuneProgress progress{
        .total = static_cast<int>(ids.size()), .round = model_.stats.rounds, .phase = phase_};
    Clock::time_point round_start = Clock::now();
    size_t finished = 0;
    auto on_done = [&](size_t job, std::vector<profile::Measurement> results) {
      ++finished;
      UniqueKernel& u = unique_[ids[job]];
      std::vector<profile::TuningRecord> records;
      for (const profile::Measurement& m : results) records.push_back(record_of(u, machine_id_, m));
      db_->put(records);
      apply_records(u, records, options_.relayout_convolutions);
      if (!again) ++model_.stats.measured;
      model_.stats.measurements += static_cast<int64_t>(results.size());
      report(progress, round_start, u, results.front().reason);
    };
    profile::profile_kernels(kernels, profiler, on_done);
    if (!again && finished > 0)
      seconds_per_kernel_ = seconds_since(round_start) / static_cast<double>(finished);
  }

  void report(TuneProgress& progress, Clock::time_point round_start, const UniqueKernel& u,
              const std::string& failure) const {
    ++progress.done;
    progress.elapsed_s = seconds_since(start_);
    progress.round_elapsed_s = seconds_since(round_start);
    progress.last = u.known && u.cost_us < kInfinity
                        ? fmt::format("{:.2f} us ({}) {}", u.cost_us, u.choice.backend, u.label)
                        : fmt::format("failed ({}) {}", failure, u.label);
    if (options_.progress) options_.progress(progress);
  }

  // Rechecks (TuneOptions::recheck_rounds): the plan's kernels measured again, each in the
  // configuration it was chosen in, and the BLP solved again over the new times, until the plan
  // holds rechecked kernels only. A plan picks the kernels whose one measurement came out low,
  // noise included (the winner's curse). In YOLOX-Nano's plan a 1x1 convolution's database
  // time was 66 us alone and 120 us with its bias, so the bias ran as a kernel of its own;
  // measured again, one after the other, they took 111 and 102 us. A recheck does not depend
  // on the choice it was taken for, so it replaces the first time (apply_records).
  void recheck_plan() {
    for (int round = 0; round < options_.recheck_rounds; ++round) {
      std::vector<size_t> ids;
      for (const PlanKernel& k : model_.plan.kernels) {
        size_t u = unique_of_[static_cast<size_t>(k.candidate)];
        const UniqueKernel& kernel = unique_[u];
        if (kernel.rechecked || kernel.cost_us == kInfinity || unrecheckable_.contains(u) ||
            std::find(ids.begin(), ids.end(), u) != ids.end())
          continue;
        ids.push_back(u);
      }
      if (ids.empty()) return;
      phase_ = "recheck";
      ++model_.stats.recheck_rounds;
      measure_rechecks(ids);
      set_costs(Unknown::excluded);
      model_.plan = orchestrate(model_.problem, solve_options());
    }
  }

  void measure_rechecks(const std::vector<size_t>& ids) {
    std::vector<codegen::KernelChoice> pinned;
    for (size_t id : ids) pinned.push_back(unique_[id].choice);
    measure_pinned(ids, pinned, model_.stats.recheck_rounds, [&](size_t job, const auto& m) {
      UniqueKernel& u = unique_[ids[job]];
      std::vector<profile::TuningRecord> records = db_->find(u.hash, machine_id_);
      auto chosen = std::find_if(records.begin(), records.end(), [&](const auto& r) {
        return r.backend == pinned[job].backend && r.config == pinned[job].config;
      });
      // A recheck that fails (a timeout on a loaded machine) keeps the first time.
      if (!m.ok || chosen == records.end()) {
        unrecheckable_.insert(ids[job]);
        return;
      }
      chosen->recheck_us = m.median_us;
      db_->put(std::span(&*chosen, 1));
      u.cost_us = kInfinity;
      apply_records(u, records, options_.relayout_convolutions);
      ++model_.stats.rechecked;
    });
  }

  // The choices that kernels known from the database were never measured in (an older orch
  // offered fewer: unmeasured_choices), measured alone: measuring such a kernel again would also
  // compile its Halide schedules, seconds each for a convolution.
  void measure_new_configs() {
    const std::vector<size_t>& ids = new_config_ids_;
    measure_pinned(ids, new_configs_, 0, [&](size_t job, const profile::Measurement& m) {
      UniqueKernel& u = unique_[ids[job]];
      profile::TuningRecord record = record_of(u, machine_id_, m);
      db_->put(std::span(&record, 1));
      apply_records(u, std::vector{record}, options_.relayout_convolutions);
      ++model_.stats.measurements;
    });
  }

  // Measures unique kernel ids[j] in pinned[j] alone; `take` gets each result.
  void measure_pinned(const std::vector<size_t>& ids,
                      const std::vector<codegen::KernelChoice>& pinned, int round,
                      const std::function<void(size_t, const profile::Measurement&)>& take) {
    if (ids.empty()) return;
    std::vector<const Graph*> kernels;
    for (size_t id : ids) kernels.push_back(&unique_[id].kernel);
    TuneProgress progress{.total = static_cast<int>(ids.size()), .round = round, .phase = phase_};
    Clock::time_point round_start = Clock::now();
    auto on_done = [&](size_t job, std::vector<profile::Measurement> results) {
      const profile::Measurement& m = results.back();
      take(job, m);
      report(progress, round_start, unique_[ids[job]], m.reason);
    };
    profile::profile_kernels(kernels, profiler_, on_done, pinned);
  }

  profile::ProfilerOptions library_only() const {
    profile::ProfilerOptions library = profiler_;
    library.backends = {.backends = {&codegen::dnnl_backend()}, .fallback = nullptr};
    return library;
  }

  // The per-call floor: a fraction of the fastest kernel measured on this machine.
  double floor_us() const {
    if (options_.overhead_floor <= 0) return 0;
    double fastest = kInfinity;
    for (const UniqueKernel& u : unique_)
      if (u.known) fastest = std::min(fastest, u.cost_us);
    return fastest == kInfinity ? 0 : options_.overhead_floor * fastest;
  }

  // What an unmeasured kernel costs in the BLP: a lower bound, an estimate, or nothing.
  enum class Unknown { bound, estimate, excluded };

  double estimate(const UniqueKernel& u) const {
    return estimate_cost_us(fit_, u.bound_us, u.kind, u.primitives);
  }

  void set_costs(Unknown unknown) {
    double floor = unknown == Unknown::bound ? floor_us() : 0;
    std::vector<CostSample> samples;
    for (const UniqueKernel& u : unique_)
      if (u.known && u.cost_us < kInfinity)
        samples.push_back({u.bound_us, u.cost_us, u.kind, u.primitives});
    fit_ = fit_cost_estimate(samples);
    for (const UniqueKernel& u : unique_) {
      double cost = u.write_us + (u.known                        ? u.cost_us
                                  : unknown == Unknown::bound    ? std::max(u.bound_us, floor)
                                  : unknown == Unknown::estimate ? estimate(u)
                                                                 : kInfinity);
      for (size_t i : u.candidates) model_.problem.candidates[i].cost_us = cost;
    }
  }

  OrchestrateOptions solve_options() const { return {.time_limit_s = options_.solve_time_limit_s}; }

  // Solves with `unknown` costs for the unmeasured kernels; returns the unmeasured kernels the
  // plan uses.
  std::vector<size_t> solve(Unknown unknown) {
    ++model_.stats.rounds;
    set_costs(unknown);
    Clock::time_point solve_start = Clock::now();
    model_.plan = orchestrate(model_.problem, solve_options());
    last_solve_s_ = seconds_since(solve_start);
    std::vector<size_t> missing;
    for (const PlanKernel& k : model_.plan.kernels) {
      size_t u = unique_of_[static_cast<size_t>(k.candidate)];
      if (!unique_[u].known && std::find(missing.begin(), missing.end(), u) == missing.end())
        missing.push_back(u);
    }
    return missing;
  }

  // `missing` plus, up to a batch, the unmeasured kernels that promise most: the largest
  // estimated saving over running their primitives one kernel each. Rounds are what makes lazy
  // tuning slow (each waits for its slowest compile and re-solves the BLP), so a batch keeps
  // every worker busy and measures for at least as long as the last solve took: YOLOX-Nano's
  // solves take about a minute, in which two workers measure some 80 kernels, while its plans
  // asked for 76 and then 41 and the time budget ran out after two rounds.
  std::vector<size_t> with_promising(std::vector<size_t> missing) const {
    size_t batch = std::max(missing.size(), static_cast<size_t>(2 * or_cores(options_.jobs)));
    if (seconds_per_kernel_ > 0)
      batch = std::max(batch, static_cast<size_t>(last_solve_s_ / seconds_per_kernel_));
    if (missing.size() >= batch) return missing;
    for (size_t id : most_promising(unique_, model_.problem, fit_, missing, batch - missing.size()))
      missing.push_back(id);
    return missing;
  }

  // A count option's value, 0 meaning one per core.
  static int or_cores(int count) {
    return count > 0 ? count : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }

  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }

  // The end of the lazy rounds' time: --max-lazy-s less earlier runs', or the phase's cap.
  Clock::time_point lazy_deadline(Clock::time_point phase_start, double phase_cap_s) const {
    double left_s =
        std::min(options_.max_lazy_s - model_.stats.earlier_lazy_s - seconds_since(lazy_start_),
                 phase_cap_s - seconds_since(phase_start));
    std::chrono::duration<double> left(std::clamp(left_s, 0.0, 3.2e7));  // a huge cap: a year
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(left);
  }

  bool out_of_rounds() const {
    return model_.stats.rounds >= options_.max_rounds ||
           model_.stats.earlier_lazy_s + seconds_since(lazy_start_) >= options_.max_lazy_s;
  }

  // Adds the lazy time since the last call to the model's spent budget (after every round, so a
  // killed run loses at most one round of it).
  void record_lazy_time() {
    Clock::time_point now = Clock::now();
    db_->add_lazy_seconds(model_key_, machine_id_,
                          std::chrono::duration<double>(now - lazy_recorded_).count());
    lazy_recorded_ = now;
  }

  // The lazy scheme. Phase 1 plans with costs estimated from the kernels measured so far and
  // measures what the plan uses until it uses measured kernels only: a good plan in a few
  // rounds. Phase 2 (exact) plans with lower bounds instead, until the plan uses measured kernels
  // only: then it is optimal over all candidates (as far as the bounds hold). Each exact round's
  // objective is a lower bound on every plan, kept as stats.lower_bound_us; when a cap stops the
  // search, the plan is the best over measured kernels and the bound says how far off it can be.
  void tune_lazily() {
    std::vector<size_t> singles;
    for (size_t u = 0; u < unique_.size(); ++u) {
      if (!unique_[u].known &&
          model_.problem.candidates[unique_[u].candidates.front()].primitives.size() == 1)
        singles.push_back(u);
    }
    phase_ = "single kernels";
    measure(singles);
    for (const EpilogueBatch& b :
         epilogue_batches(unique_, unique_of_, model_.problem, model_.graph)) {
      phase_ = b.phase;
      measure_with(b.ids, b.library_only ? library_only() : profiler_, false);
    }
    model_key_ = model_key(unique_, write_cost());
    model_.stats.earlier_lazy_s = db_->lazy_seconds(model_key_, machine_id_);
    lazy_start_ = lazy_recorded_ = Clock::now();
    bool proven = false;
    std::optional<Plan> settled;  // the best plan over the kernels measured in the estimated phase
    int64_t settled_measurements = 0;
    for (Unknown unknown : {Unknown::estimate, Unknown::bound}) {
      phase_ = unknown == Unknown::estimate ? "estimated" : "exact";
      Clock::time_point phase_start = Clock::now();
      double phase_cap_s = unknown == Unknown::bound ? options_.exact_s : options_.max_lazy_s;
      // Earlier runs spent the budget: settle at once (a warm rerun measures nothing).
      if (phase_cap_s <= 0 || out_of_rounds()) break;
      while (true) {
        std::vector<size_t> missing = solve(unknown);
        if (unknown == Unknown::bound)
          model_.stats.lower_bound_us =
              std::max(model_.stats.lower_bound_us, model_.plan.lower_bound_us);
        if (missing.empty()) {
          proven = unknown == Unknown::bound;
          if (unknown == Unknown::estimate) model_.stats.estimate_converged = true;
          break;
        }
        if (out_of_rounds() || seconds_since(phase_start) >= phase_cap_s) break;
        // The budget also ends a round: YOLOX-Nano's first one asked for 154 kernels, SPP
        // windows compiling 15-24 s each in Halide, and was to end some 20 minutes past it.
        measure(with_promising(std::move(missing)), lazy_deadline(phase_start, phase_cap_s));
        record_lazy_time();
      }
      if (unknown == Unknown::estimate) {
        set_costs(Unknown::excluded);
        settled = orchestrate(model_.problem, solve_options());
        settled_measurements = model_.stats.measurements;
        model_.stats.estimated_plan_us = settled->objective_us;
        model_.stats.estimated_plan_seconds = seconds_since(start_);
      }
      if (out_of_rounds()) break;
    }
    record_lazy_time();
    set_costs(Unknown::excluded);
    model_.stats.converged = proven;
    // A proven plan uses measured kernels only; otherwise the best plan over the measured ones,
    // which the estimated phase solved for already when nothing was measured since (a solve of
    // a large model takes a minute or more).
    if (proven) return;
    if (settled && settled_measurements == model_.stats.measurements)
      model_.plan = std::move(*settled);
    else
      model_.plan = orchestrate(model_.problem, solve_options());
  }

  // No measurement (TuneOptions::analytic): estimated costs, the target GPU's for CUDA.
  void plan_analytically() {
    if (options_.target == Target::cuda) {
      std::string rejected = cuda_single_rejects(model_.graph);
      check(rejected.empty(), "the CUDA generator cannot compile this model: {}", rejected);
      cost_on_gpu(unique_, target_gpu(options_.gpu));
    } else {
      cost_analytically(unique_, options_.analytic_call_us);
    }
    model_.stats.converged = false;
    set_costs(Unknown::excluded);
    model_.plan = orchestrate(model_.problem, solve_options());
  }

  // Every unique kernel measured, except (with prune) those whose bound cannot beat computing
  // their primitives one kernel each. Fixed policies too: a spent lazy budget made them infeasible.
  void tune_exhaustively() {
    model_.stats.rounds = 1;
    const bool prune = options_.prune && options_.fixed_kernels.empty();
    std::vector<size_t> singles, rest;
    for (size_t u = 0; u < unique_.size(); ++u) {
      if (unique_[u].known) continue;
      bool single = model_.problem.candidates[unique_[u].candidates.front()].primitives.size() == 1;
      (single || !prune ? singles : rest).push_back(u);
    }
    measure(singles);
    if (!prune) {
      set_costs(Unknown::excluded);
      model_.plan = orchestrate(model_.problem, solve_options());
      return;
    }
    std::vector<double> alone = cheapest_alone(unique_, model_.problem);
    std::vector<size_t> keep;
    for (size_t u : rest) {
      double unfused = kInfinity;
      for (size_t i : unique_[u].candidates)
        unfused = std::min(unfused, unfused_us(alone, model_.problem.candidates[i]));
      if (unique_[u].bound_us + unique_[u].write_us < unfused) keep.push_back(u);
    }
    measure(keep);
    set_costs(Unknown::excluded);
    model_.plan = orchestrate(model_.problem, solve_options());
  }

  void finish() {
    model_.choices.assign(model_.problem.candidates.size(), {});
    for (const UniqueKernel& u : unique_) {
      if (!u.known) {
        ++model_.stats.pruned;
        continue;
      }
      if (u.cost_us == kInfinity) ++model_.stats.failed;
      for (size_t i : u.candidates) model_.choices[i] = u.choice;
    }
    model_.stats.candidates = static_cast<int64_t>(model_.problem.candidates.size());
    model_.stats.unique = static_cast<int64_t>(unique_.size());
    model_.stats.tuning_seconds = seconds_since(start_);
    std::string problem = check_plan(model_.problem, model_.plan);
    check(problem.empty(), "tuning produced an invalid plan: {}", problem);
  }

  TunedModel& model_;
  const TuneOptions& options_;
  std::optional<profile::TuningDb> db_;
  std::string machine_id_;
  schedule::Machine machine_;
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

}  // namespace

std::string tuning_outcome(const TuneStats& stats, bool analytic) {
  if (stats.converged) return "";
  if (analytic) return " (analytic: estimated costs, nothing measured)";
  if (stats.estimate_converged)
    return " (the estimated phase converged, every kernel of the plan measured; not proven "
           "optimal: the exact phase was skipped or stopped at --exact-s)";
  return " (stopped by --max-rounds/--max-lazy-s: the best plan over the kernels measured so "
         "far; a rerun with a larger --max-lazy-s continues from the database)";
}

TunedModel tune_model(Graph primitive_graph, const TuneOptions& options) {
  TunedModel model;
  model.graph = std::move(primitive_graph);
  Tuner(model, options).run();
  return model;
}

}  // namespace orch::driver
