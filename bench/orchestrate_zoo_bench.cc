// Orchestration solve times on the zoo models' real subgraphs: each model at its published shape
// goes through fission and kernel identification (shape rules and the backends' verdicts), and
// every subgraph's candidates are solved as one BLP, then the whole model at once. Costs are the
// roofline lower bound (profile/roofline.h) plus 2 us per kernel call: solve times depend on the
// problem's structure, not on whether costs are measured, and this runs in seconds.
//
// usage: bench_orchestrate_zoo [--time-limit SECONDS] [--dump DIR] [MODEL ...]
//   Default: every zoo model. --dump writes each subgraph's problem as DIR/MODEL.N.txt and the
//   whole model's as DIR/MODEL.whole.txt (orchestrate/problem_text.h), to be solved again with
//   `bench_orchestrate --problem FILE`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "candidates/candidates.h"
#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "fission/fission.h"
#include "ir/error.h"
#include "orchestrate/from_candidates.h"
#include "orchestrate/problem_text.h"
#include "profile/roofline.h"
#include "schedule/machine.h"
#include "zoo/zoo.h"

namespace {

using namespace orch;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The values of `outputs` (vertices) a kernel writes: every output of those nodes.
std::vector<ValueId> written_values(const Graph& g, const std::vector<int>& outputs) {
  std::vector<ValueId> values;
  for (int v : outputs)
    for (ValueId value : g.node(v).outputs) values.push_back(value);
  return values;
}

// Subgraph `s` alone: its vertices renumbered from 0, its outputs the vertices a later subgraph
// or the graph reads; values from earlier subgraphs are inputs.
OrchestrationProblem subgraph_problem(const Dag& dag, const std::vector<std::vector<int>>& succs,
                                      const SubgraphCandidates& sub,
                                      const std::vector<double>& costs, size_t first_cost) {
  OrchestrationProblem p{.num_primitives = sub.end - sub.begin};
  p.primitive_inputs.resize(p.num_primitives);
  for (int v = sub.begin; v < sub.end; ++v) {
    for (int u : dag.preds[v])
      if (u >= sub.begin) p.primitive_inputs[v - sub.begin].push_back(u - sub.begin);
    const bool read_later =
        std::any_of(succs[v].begin(), succs[v].end(), [&](int w) { return w >= sub.end; });
    if (dag.is_graph_output[v] || read_later) p.graph_outputs.push_back(v - sub.begin);
  }
  for (size_t i = 0; i < sub.kept.size(); ++i)
    p.candidates.push_back({.primitives = sub.kept[i].members.to_vector(),
                            .outputs = sub.kept[i].outputs.to_vector(),
                            .cost_us = costs[first_cost + i]});
  return p;
}

struct Settings {
  OrchestrateOptions options;
  std::string dump_dir;  // empty: no dump
};

void bench_model(std::string_view name, const schedule::Machine& machine,
                 const Settings& settings) {
  auto start = std::chrono::steady_clock::now();
  Graph g = fission::fission(zoo::build_model(name));
  Dag dag = dag_of(g);
  IdentifyOptions identify;
  identify.enumeration.feasible = feasibility_of({});
  identify.enumeration.generable = driver::backend_check(g);
  KernelIdentification kernels = identify_kernels(dag, identify);
  std::vector<Candidate> all = global_candidates(dag, kernels);
  std::vector<double> costs;
  for (const Candidate& c : all) {
    std::vector<NodeId> members(c.primitives.begin(), c.primitives.end());
    Graph kernel = codegen::extract_kernel(g, members, written_values(g, c.outputs));
    costs.push_back(2 + profile::roofline_lower_bound_us(kernel, machine));
  }
  const double prepare_s = seconds_since(start);

  const std::vector<std::vector<int>> succs = successors(dag);
  double largest_s = 0, sum_s = 0;
  OrchestrateStats largest_stats;
  size_t largest_candidates = 0, first_cost = 0;
  int largest_states = 0;
  for (const SubgraphCandidates& sub : kernels.candidates) {
    OrchestrationProblem p = subgraph_problem(dag, succs, sub, costs, first_cost);
    first_cost += sub.kept.size();
    if (!settings.dump_dir.empty()) {
      std::string path =
          fmt::format("{}/{}.{}.txt", settings.dump_dir, name, &sub - &kernels.candidates[0]);
      std::ofstream(path) << problem_to_text(p);
    }
    auto solve_start = std::chrono::steady_clock::now();
    Plan plan = orchestrate(p, settings.options);
    const double s = seconds_since(solve_start);
    check(check_plan(p, plan).empty(), "{}: invalid plan for subgraph [{}, {})", name, sub.begin,
          sub.end);
    sum_s += s;
    if (s >= largest_s) {
      largest_s = s;
      largest_candidates = sub.kept.size();
      largest_states = static_cast<int>(sub.states);
      largest_stats = plan.stats;
    }
  }
  OrchestrationProblem whole = orchestration_problem(dag, kernels, costs);
  if (!settings.dump_dir.empty())
    std::ofstream(fmt::format("{}/{}.whole.txt", settings.dump_dir, name))
        << problem_to_text(whole);
  auto whole_start = std::chrono::steady_clock::now();
  Plan plan = orchestrate(whole, settings.options);
  const double whole_s = seconds_since(whole_start);
  check(check_plan(whole, plan).empty(), "{}: invalid whole-model plan", name);
  const OrchestrateStats& ls = largest_stats;
  fmt::print(
      "| {} | {} | {} | {} | {} ({} states; {} columns, {} rows, {} rounds, {} cuts) | {:.3f} "
      "({:.3f} in CBC) | {:.3f} | {:.3f} | {} | {:.1f} |\n",
      name, dag.size, kernels.subgraphs.size(), all.size(), largest_candidates, largest_states,
      ls.columns, ls.rows, ls.rounds, ls.cycle_cuts, largest_s, ls.solve_seconds, sum_s, whole_s,
      plan.status == SolveStatus::Optimal ? "optimal" : "time limit", prepare_s);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> names;
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--time-limit" && i + 1 < argc) {
      settings.options.time_limit_s = std::atof(argv[++i]);
    } else if (arg == "--dump" && i + 1 < argc) {
      settings.dump_dir = argv[++i];
    } else if (arg.starts_with("-")) {
      fmt::print(stderr,
                 "usage: bench_orchestrate_zoo [--time-limit SECONDS] [--dump DIR] [MODEL ...]\n");
      return 2;
    } else {
      names.push_back(arg);
    }
  }
  if (names.empty())
    for (const zoo::ModelInfo& m : zoo::all_models()) names.emplace_back(m.name);
  const schedule::Machine machine = schedule::host_machine();
  fmt::print(
      "| model | primitives | subgraphs | candidates | slowest subgraph: candidates | its solve s "
      "| all subgraphs s | whole model s | status | identify + costs s |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
  try {
    for (const std::string& name : names) bench_model(name, machine, settings);
  } catch (const Error& e) {
    fmt::print(stderr, "bench_orchestrate_zoo: {}\n", e.what());
    return 1;
  }
  return 0;
}
