#include "driver/tuner.h"

#include <fmt/format.h>

#include "codegen/dnnl/dnnl_backend.h"
#include "ir/error.h"

namespace orch::driver::tune_detail {

void Tuner::measure(const std::vector<size_t>& ids, Clock::time_point start_by) {
  profile::ProfilerOptions profiler = profiler_;
  profiler.start_by = start_by;
  measure_with(ids, profiler, false);
  measure_fallbacks(ids);
  report_unworkable(ids);
}

void Tuner::report_unworkable(const std::vector<size_t>& ids) {
  for (size_t id : ids) {
    const UniqueKernel& u = unique_[id];
    if (!needed(u) || !u.known || u.cost_us < kInfinity || !warned_.insert(id).second) continue;
    std::string why = fmt::format(
        "{} failed on every backend ({}; raise --timeout if it timed out)", u.label, u.failure);
    check(options_.fixed_kernels.empty(), "kernel {}", why);
    if (options_.warning) options_.warning(why + ": the plan needs a fused kernel that does not");
  }
}

void Tuner::measure_fallbacks(const std::vector<size_t>& ids) {
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

void Tuner::measure_with(const std::vector<size_t>& ids, const profile::ProfilerOptions& profiler,
                         bool again) {
  if (ids.empty()) return;
  hold_graphs(ids);
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
  release_graphs(ids);
  if (!again && finished > 0)
    seconds_per_kernel_ = seconds_since(round_start) / static_cast<double>(finished);
}

void Tuner::report(TuneProgress& progress, Clock::time_point round_start, const UniqueKernel& u,
                   const std::string& failure) const {
  ++progress.done;
  progress.elapsed_s = seconds_since(start_);
  progress.round_elapsed_s = seconds_since(round_start);
  progress.last = u.known && u.cost_us < kInfinity
                      ? fmt::format("{:.2f} us ({}) {}", u.cost_us, u.choice.backend, u.label)
                      : fmt::format("failed ({}) {}", failure, u.label);
  if (options_.progress) options_.progress(progress);
}

void Tuner::recheck_plan() {
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

void Tuner::measure_rechecks(const std::vector<size_t>& ids) {
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

void Tuner::measure_new_configs() {
  const std::vector<size_t>& ids = new_config_ids_;
  measure_pinned(ids, new_configs_, 0, [&](size_t job, const profile::Measurement& m) {
    UniqueKernel& u = unique_[ids[job]];
    profile::TuningRecord record = record_of(u, machine_id_, m);
    db_->put(std::span(&record, 1));
    apply_records(u, std::vector{record}, options_.relayout_convolutions);
    ++model_.stats.measurements;
  });
}

void Tuner::measure_pinned(const std::vector<size_t>& ids,
                           const std::vector<codegen::KernelChoice>& pinned, int round,
                           const std::function<void(size_t, const profile::Measurement&)>& take) {
  if (ids.empty()) return;
  hold_graphs(ids);
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
  release_graphs(ids);
}

profile::ProfilerOptions Tuner::library_only() const {
  if (gpu_) return profiler_;  // a CUDA kernel has one backend
  profile::ProfilerOptions library = profiler_;
  library.backends = {.backends = {&codegen::dnnl_backend()}, .fallback = nullptr};
  return library;
}

}  // namespace orch::driver::tune_detail
