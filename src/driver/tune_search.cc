#include "driver/tuner.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace orch::driver::tune_detail {

double Tuner::floor_us() const {
  if (options_.overhead_floor <= 0) return 0;
  double fastest = kInfinity;
  for (const UniqueKernel& u : unique_)
    if (u.known) fastest = std::min(fastest, u.cost_us);
  return fastest == kInfinity ? 0 : options_.overhead_floor * fastest;
}

void Tuner::set_costs(Unknown unknown) {
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

std::vector<size_t> Tuner::solve(Unknown unknown) {
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

std::vector<size_t> Tuner::with_promising(std::vector<size_t> missing) const {
  size_t batch = std::max(missing.size(), static_cast<size_t>(2 * or_cores(options_.jobs)));
  if (seconds_per_kernel_ > 0)
    batch = std::max(batch, static_cast<size_t>(last_solve_s_ / seconds_per_kernel_));
  if (missing.size() >= batch) return missing;
  for (size_t id : most_promising(unique_, model_.problem, fit_, missing, batch - missing.size()))
    missing.push_back(id);
  return missing;
}

Clock::time_point Tuner::lazy_deadline(Clock::time_point phase_start, double phase_cap_s) const {
  double left_s =
      std::min(options_.max_lazy_s - model_.stats.earlier_lazy_s - seconds_since(lazy_start_),
               phase_cap_s - seconds_since(phase_start));
  std::chrono::duration<double> left(std::clamp(left_s, 0.0, 3.2e7));  // a huge cap: a year
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(left);
}

bool Tuner::out_of_rounds() const {
  return model_.stats.rounds >= options_.max_rounds ||
         model_.stats.earlier_lazy_s + seconds_since(lazy_start_) >= options_.max_lazy_s;
}

void Tuner::record_lazy_time() {
  Clock::time_point now = Clock::now();
  db_->add_lazy_seconds(model_key_, machine_id_,
                        std::chrono::duration<double>(now - lazy_recorded_).count());
  lazy_recorded_ = now;
}

void Tuner::tune_lazily() {
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

void Tuner::plan_analytically() {
  // collect_unique priced every kernel.
  model_.stats.converged = false;
  set_costs(Unknown::excluded);
  say(fmt::format("estimated their costs, {:.1f} s; planning (solver time limit {} s)",
                  seconds_since(start_), options_.solve_time_limit_s));
  model_.plan = orchestrate(model_.problem, solve_options());
}

void Tuner::tune_exhaustively() {
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

}  // namespace orch::driver::tune_detail
