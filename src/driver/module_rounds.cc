#include "driver/module_rounds.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "codegen/dnnl/dnnl_backend.h"
#include "driver/kernel_timing.h"
#include "interp/random_inputs.h"
#include "orch/module.h"

namespace orch::driver {
namespace {

namespace fs = std::filesystem;

// A module built in a round, loaded for timing.
struct Built {
  std::string dir;
  Plan plan;
  stitch::StitchResult stitched;
  Module module;
  Context context;
};

std::set<int> candidates_of(const Plan& plan) {
  std::set<int> ids;
  for (const PlanKernel& k : plan.kernels) ids.insert(k.candidate);
  return ids;
}

// `plan` with its kernels' costs (and so its objective) those of `problem`'s candidates.
Plan repriced(Plan plan, const OrchestrationProblem& problem) {
  plan.objective_us = 0;
  for (PlanKernel& k : plan.kernels) {
    k.cost_us = problem.candidates[static_cast<size_t>(k.candidate)].cost_us;
    plan.objective_us += k.cost_us;
  }
  return plan;
}

// Stitches `plan` into `dir` with `stitch`, loads the module and times it, appending it to
// `built`; returns the timing.
KernelTimes build_and_time(const TunedModel& tuned, Plan plan, const std::string& dir,
                           const stitch::StitchOptions& stitch, const std::vector<Tensor>& feed,
                           const ModuleRoundsOptions& options, std::vector<Built>& built) {
  fs::remove_all(dir);
  stitch::StitchResult stitched =
      stitch::stitch(tuned.graph, tuned.problem, plan, tuned.choices, dir, stitch);
  Module module = Module::load(dir);
  module.set_threads(options.threads);
  Context context = module.new_context();
  KernelTimes times = time_kernels(module, context, feed, options.repeat, options.budget_s);
  built.push_back(
      {dir, std::move(plan), std::move(stitched), std::move(module), std::move(context)});
  return times;
}

// Whether some module built has a oneDNN kernel that relaying out would move (blocked_layout.h).
bool relayable(const std::vector<Built>& built, const std::vector<codegen::KernelChoice>& choices) {
  for (const Built& b : built)
    for (const PlanKernel& k : b.plan.kernels)
      if (!codegen::dnnl_blocked_variant(choices[static_cast<size_t>(k.candidate)].config).empty())
        return true;
  return false;
}

void say(const ModuleRoundsOptions& options, const std::string& line) {
  if (options.log) options.log(line);
}

// Times every built module `passes` times in turns (so that all of them see the same load) and
// returns the index of the one with the lowest median run; fills each round's final_run_us.
size_t fastest(std::vector<Built>& built, std::vector<ModuleRound>& rounds,
               const std::vector<Tensor>& feed, const ModuleRoundsOptions& options) {
  std::vector<std::vector<double>> run_us(built.size());
  for (int pass = 0; pass < options.final_passes; ++pass)
    for (size_t i = 0; i < built.size(); ++i) {
      KernelTimes t =
          time_kernels(built[i].module, built[i].context, feed, options.repeat, options.budget_s);
      run_us[i].insert(run_us[i].end(), t.run_us.begin(), t.run_us.end());
    }
  size_t best = 0;
  for (size_t i = 0; i < built.size(); ++i) {
    rounds[i].final_run_us = median_of(run_us[i]);
    if (rounds[i].final_run_us < rounds[best].final_run_us) best = i;
  }
  return best;
}

}  // namespace

OrchestrationProblem in_module_costs(const OrchestrationProblem& tuned,
                                     const std::map<int, double>& in_module) {
  double module_us = 0, alone_us = 0;
  for (auto [c, us] : in_module) {
    module_us += us;
    alone_us += tuned.candidates[static_cast<size_t>(c)].cost_us;
  }
  const double slowdown = alone_us > 0 ? module_us / alone_us : 1;
  OrchestrationProblem problem = tuned;
  for (size_t c = 0; c < problem.candidates.size(); ++c) {
    auto timed = in_module.find(static_cast<int>(c));
    problem.candidates[c].cost_us =
        timed != in_module.end() ? timed->second : tuned.candidates[c].cost_us * slowdown;
  }
  return problem;
}

InModulePlan plan_in_modules(const TunedModel& tuned, const ModuleRoundsOptions& options,
                             const std::function<std::string(int)>& scratch) {
  const std::vector<Tensor> feed = interp::random_inputs(tuned.graph, options.seed);
  OrchestrationProblem problem;
  Plan plan = tuned.plan;
  std::vector<Built> built;
  std::vector<ModuleRound> rounds;
  std::set<std::set<int>> tried;
  std::map<int, double> in_module;  // candidates some round's module ran: their latest time
  try {
    for (int r = 0; r < options.rounds && tried.insert(candidates_of(plan)).second; ++r) {
      // The module is stitched with the tuned costs: it reports each kernel's time alone.
      KernelTimes times = build_and_time(tuned, repriced(plan, tuned.problem), scratch(r),
                                         options.stitch, feed, options, built);

      ModuleRound round{.kernels = static_cast<int>(plan.kernels.size()),
                        .objective_us = plan.objective_us,
                        .run_us = median_of(times.run_us)};
      for (size_t k = 0; k < plan.kernels.size(); ++k) {
        int c = plan.kernels[k].candidate;
        if (!in_module.contains(c)) ++round.new_kernels;
        in_module[c] = median_of(times.kernel_us[k]);
      }
      problem = in_module_costs(tuned.problem, in_module);
      say(options, fmt::format("module round {}: {} kernels ({} not in an earlier module), "
                               "planned at {:.1f} us, runs in {:.1f} us (median of {})",
                               r + 1, round.kernels, round.new_kernels, round.objective_us,
                               round.run_us, times.run_us.size()));
      rounds.push_back(round);
      if (r + 1 < options.rounds) plan = orchestrate(problem, options.solve);
    }
    if (!options.stitch.relayout_convolutions && relayable(built, tuned.choices)) {
      // The quickest round's plan once more, its convolutions relaid out (blocked_layout.h).
      size_t quickest = 0;
      for (size_t i = 0; i < rounds.size(); ++i)
        if (rounds[i].run_us < rounds[quickest].run_us) quickest = i;
      stitch::StitchOptions relayout = options.stitch;
      relayout.relayout_convolutions = true;
      ModuleRound round = rounds[quickest];
      round.new_kernels = 0;
      round.relaid_out = true;
      round.run_us = median_of(build_and_time(tuned, built[quickest].plan,
                                              scratch(static_cast<int>(built.size())), relayout,
                                              feed, options, built)
                                   .run_us);
      say(options, fmt::format("module round {}: round {}'s plan with its convolutions relaid out "
                               "({} tensors stored blocked), runs in {:.1f} us",
                               built.size(), quickest + 1, built.back().stitched.blocked_tensors,
                               round.run_us));
      rounds.push_back(round);
    }
    size_t best = built.size() > 1 ? fastest(built, rounds, feed, options) : 0;
    if (built.size() > 1)
      say(options,
          fmt::format("module rounds: kept round {}'s module{}, {:.1f} us against {:.1f} "
                      "for the tuned plan's (medians over {} turns of timing each)",
                      best + 1, rounds[best].relaid_out ? " (relaid out)" : "",
                      rounds[best].final_run_us, rounds[0].final_run_us, options.final_passes));
    InModulePlan result{.plan = std::move(built[best].plan),
                        .dir = built[best].dir,
                        .stitched = std::move(built[best].stitched),
                        .rounds = std::move(rounds),
                        .chosen = static_cast<int>(best)};
    for (size_t i = 0; i < built.size(); ++i)
      if (i != best) fs::remove_all(built[i].dir);
    return result;
  } catch (...) {
    std::error_code ignored;
    for (int r = 0; r <= static_cast<int>(built.size()); ++r) fs::remove_all(scratch(r), ignored);
    throw;
  }
}

}  // namespace orch::driver
