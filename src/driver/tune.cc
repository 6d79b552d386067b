#include "driver/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>

#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "orchestrate/from_candidates.h"
#include "profile/profiler.h"
#include "profile/roofline.h"
#include "profile/tuning_db.h"
#include "schedule/machine.h"

namespace orch::driver {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A distinct kernel (structure, output set): its candidates share one measurement.
struct UniqueKernel {
  Graph kernel;
  std::string hash;
  std::string outputs;  // output types, the database's output-set column
  std::string label;
  std::vector<size_t> candidates;
  double bound_us = 0;  // roofline lower bound
  bool known = false;   // measured, in this run or before
  double cost_us = kInfinity;
  codegen::KernelChoice choice;
};

std::string output_types(const Graph& kernel) {
  std::string out;
  for (ValueId v : kernel.outputs())
    out += fmt::format("{}{}", out.empty() ? "" : ";", format_type(kernel.value(v).type));
  return out;
}

// Applies stored or fresh records to `u`: the fastest working configuration wins.
void apply_records(UniqueKernel& u, const std::vector<profile::TuningRecord>& records) {
  u.known = true;
  for (const profile::TuningRecord& r : records) {
    if (r.ok && r.median_us < u.cost_us) {
      u.cost_us = r.median_us;
      u.choice = {.backend = r.backend, .config = r.config, .cost_us = r.median_us};
    }
  }
}

class Tuner {
 public:
  Tuner(TunedModel& model, const TuneOptions& options)
      : model_(model),
        options_(options),
        machine_id_(profile::machine_fingerprint()),
        machine_(schedule::host_machine(options.machine_path)) {
    profiler_.jobs = options.jobs;
    profiler_.timeout_s = options.timeout_s;
    profiler_.measure.budget_ms = options.budget_ms;
    profiler_.halide_configs = options.halide_configs;
    profiler_.machine = machine_;
    // Analytic tuning reads and writes no measurements: it leaves the database alone.
    if (!options.analytic) db_.emplace(options.db_path);
  }

  void run() {
    identify();
    collect_unique();
    if (options_.analytic)
      estimate();
    else if (options_.exhaustive)
      tune_exhaustively();
    else
      tune_lazily();
    finish();
  }

 private:
  void identify() {
    model_.dag = dag_of(model_.graph);
    IdentifyOptions identify;
    identify.enumeration.max_states = options_.max_states;
    FeasibilityRules rules;
    rules.max_primitives = options_.max_primitives;
    identify.enumeration.feasible = feasibility_of(rules);
    identify.enumeration.generable = backend_check(model_.graph);
    if (!options_.fixed_kernels.empty()) restrict_to_kernels(identify, options_.fixed_kernels);
    model_.kernels = identify_kernels(model_.dag, identify);
    std::vector<double> zero(global_candidates(model_.dag, model_.kernels).size(), 0.0);
    model_.problem = orchestration_problem(model_.dag, model_.kernels, zero);
  }

  void collect_unique() {
    std::map<std::string, size_t> by_hash;
    for (size_t i = 0; i < model_.problem.candidates.size(); ++i) {
      const Candidate& c = model_.problem.candidates[i];
      std::vector<NodeId> members(c.primitives.begin(), c.primitives.end());
      std::vector<ValueId> outputs;
      for (int p : c.outputs)
        for (ValueId v : model_.graph.node(p).outputs) outputs.push_back(v);
      Graph kernel = codegen::extract_kernel(model_.graph, members, outputs);
      std::string hash = format_hash(structural_hash(kernel, false));
      auto [it, inserted] = by_hash.emplace(hash, unique_.size());
      if (inserted) {
        UniqueKernel u{.hash = hash, .outputs = output_types(kernel), .label = c.label};
        u.bound_us = profile::roofline_lower_bound_us(kernel, machine_);
        u.kernel = std::move(kernel);
        unique_.push_back(std::move(u));
      }
      unique_[it->second].candidates.push_back(i);
    }
    for (UniqueKernel& u : unique_) {
      if (!db_) break;
      std::vector<profile::TuningRecord> records = db_->find(u.hash, machine_id_);
      if (records.empty()) continue;
      apply_records(u, records);
      ++model_.stats.from_db;
    }
  }

  // Measures `ids` (unique kernels), storing each result as soon as it arrives.
  void measure(const std::vector<size_t>& ids) {
    if (ids.empty()) return;
    std::vector<const Graph*> kernels;
    for (size_t id : ids) kernels.push_back(&unique_[id].kernel);
    TuneProgress progress{.total = static_cast<int>(ids.size()), .round = model_.stats.rounds};
    Clock::time_point round_start = Clock::now();
    profile::profile_kernels(
        kernels, profiler_, [&](size_t job, std::vector<profile::Measurement> results) {
          UniqueKernel& u = unique_[ids[job]];
          std::vector<profile::TuningRecord> records;
          for (const profile::Measurement& m : results) {
            records.push_back({.kernel_hash = u.hash,
                               .outputs = u.outputs,
                               .machine = machine_id_,
                               .backend = m.backend,
                               .config = m.config,
                               .ok = m.ok,
                               .reason = m.reason,
                               .median_us = m.median_us,
                               .min_us = m.min_us,
                               .max_us = m.max_us,
                               .runs = m.runs,
                               .compile_s = m.compile_s,
                               .label = u.label});
          }
          db_->put(records);
          apply_records(u, records);
          ++model_.stats.measured;
          model_.stats.measurements += static_cast<int64_t>(results.size());
          ++progress.done;
          progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start_).count();
          progress.round_elapsed_s =
              std::chrono::duration<double>(Clock::now() - round_start).count();
          progress.last =
              u.known && u.cost_us < kInfinity
                  ? fmt::format("{:.2f} us ({}) {}", u.cost_us, u.choice.backend, u.label)
                  : fmt::format("failed ({}) {}", results.front().reason, u.label);
          if (options_.progress) options_.progress(progress);
        });
  }

  // The per-call floor: a fraction of the fastest kernel measured on this machine.
  double floor_us() const {
    if (options_.overhead_floor <= 0) return 0;
    double fastest = kInfinity;
    for (const UniqueKernel& u : unique_)
      if (u.known) fastest = std::min(fastest, u.cost_us);
    return fastest == kInfinity ? 0 : options_.overhead_floor * fastest;
  }

  void set_costs(bool bounds_for_unknown) {
    double floor = bounds_for_unknown ? floor_us() : 0;
    for (const UniqueKernel& u : unique_) {
      double cost = u.known              ? u.cost_us
                    : bounds_for_unknown ? std::max(u.bound_us, floor)
                                         : kInfinity;
      for (size_t i : u.candidates) model_.problem.candidates[i].cost_us = cost;
    }
  }

  OrchestrateOptions solve_options() const { return {.time_limit_s = options_.solve_time_limit_s}; }

  // The lazy exact scheme: solve with bounds for the unmeasured, measure what the plan uses,
  // until the plan uses measured kernels only.
  void tune_lazily() {
    std::vector<size_t> unique_of(model_.problem.candidates.size());
    std::vector<size_t> singles;
    for (size_t u = 0; u < unique_.size(); ++u) {
      for (size_t i : unique_[u].candidates) unique_of[i] = u;
      if (!unique_[u].known &&
          model_.problem.candidates[unique_[u].candidates.front()].primitives.size() == 1)
        singles.push_back(u);
    }
    measure(singles);
    Clock::time_point lazy_start = Clock::now();
    while (true) {
      ++model_.stats.rounds;
      set_costs(true);
      model_.plan = orchestrate(model_.problem, solve_options());
      std::vector<size_t> missing;
      for (const PlanKernel& k : model_.plan.kernels) {
        size_t u = unique_of[static_cast<size_t>(k.candidate)];
        if (!unique_[u].known && std::find(missing.begin(), missing.end(), u) == missing.end())
          missing.push_back(u);
      }
      if (missing.empty()) break;
      double lazy_s = std::chrono::duration<double>(Clock::now() - lazy_start).count();
      if (model_.stats.rounds >= options_.max_rounds || lazy_s >= options_.max_lazy_s) {
        model_.stats.converged = false;
        set_costs(false);
        model_.plan = orchestrate(model_.problem, solve_options());
        break;
      }
      measure(missing);
    }
    set_costs(false);
  }

  // No measurement: estimated costs and the first accepting backend (TuneOptions::analytic).
  void estimate() {
    profile::BackendSet backends = profile::default_backends();
    for (UniqueKernel& u : unique_) {
      u.known = true;
      u.cost_us = u.bound_us + options_.analytic_call_us;
      u.choice = {
          .backend = std::string(profile::accepting_backends(backends, u.kernel).front()->name),
          .config = "",
          .cost_us = u.cost_us};
    }
    model_.stats.converged = false;
    set_costs(false);
    model_.plan = orchestrate(model_.problem, solve_options());
  }

  // Every unique kernel measured, except (with prune) those whose bound cannot beat computing
  // their primitives one kernel each.
  void tune_exhaustively() {
    model_.stats.rounds = 1;
    std::vector<size_t> singles, rest;
    for (size_t u = 0; u < unique_.size(); ++u) {
      if (unique_[u].known) continue;
      bool single = model_.problem.candidates[unique_[u].candidates.front()].primitives.size() == 1;
      (single || !options_.prune ? singles : rest).push_back(u);
    }
    measure(singles);
    if (!options_.prune) {
      set_costs(false);
      model_.plan = orchestrate(model_.problem, solve_options());
      return;
    }
    // Best single-primitive cost per primitive (infinite when none works).
    std::vector<double> alone(static_cast<size_t>(model_.problem.num_primitives), kInfinity);
    for (const UniqueKernel& u : unique_) {
      for (size_t i : u.candidates) {
        const Candidate& c = model_.problem.candidates[i];
        if (c.primitives.size() == 1 && u.known)
          alone[static_cast<size_t>(c.primitives[0])] =
              std::min(alone[static_cast<size_t>(c.primitives[0])], u.cost_us);
      }
    }
    std::vector<size_t> keep;
    for (size_t u : rest) {
      double unfused = kInfinity;
      for (size_t i : unique_[u].candidates) {
        double sum = 0;
        for (int p : model_.problem.candidates[i].primitives) sum += alone[static_cast<size_t>(p)];
        unfused = std::min(unfused, sum);
      }
      if (unique_[u].bound_us < unfused) keep.push_back(u);
    }
    measure(keep);
    set_costs(false);
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
    model_.stats.tuning_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
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
  Clock::time_point start_ = Clock::now();
};

}  // namespace

TunedModel tune_model(Graph primitive_graph, const TuneOptions& options) {
  TunedModel model;
  model.graph = std::move(primitive_graph);
  Tuner(model, options).run();
  return model;
}

}  // namespace orch::driver
