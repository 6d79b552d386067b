// Plans: extraction from a chosen set of columns, the replay checker, and the text form.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "orchestrate/columns.h"

namespace orch {
namespace {

std::string describe(const OrchestrationProblem& problem, int index) {
  const std::string& label = problem.candidates[index].label;
  return label.empty() ? fmt::format("candidate {}", index)
                       : fmt::format("candidate {} ({})", index, label);
}

// Position of each primitive in a topological order (the problem is a valid DAG).
std::vector<int> topological_positions(const OrchestrationProblem& problem) {
  const int n = problem.num_primitives;
  std::vector<std::vector<int>> consumers(n);
  std::vector<int> missing(n), order, position(n);
  for (int p = 0; p < n; ++p) {
    missing[p] = static_cast<int>(problem.primitive_inputs[p].size());
    for (int input : problem.primitive_inputs[p]) consumers[input].push_back(p);
    if (missing[p] == 0) order.push_back(p);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int c : consumers[order[i]]) {
      if (--missing[c] == 0) order.push_back(c);
    }
  }
  for (int i = 0; i < static_cast<int>(order.size()); ++i) position[order[i]] = i;
  return position;
}

// Lifetimes of the buffers the kernels keep, from a replay of the plan.
std::vector<BufferLifetime> lifetimes(const OrchestrationProblem& problem,
                                      const std::vector<PlanKernel>& kernels) {
  std::vector<int> slot(problem.num_primitives, -1);
  std::vector<BufferLifetime> buffers;
  for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
    for (int j : kernels[i].inputs) {
      if (slot[j] >= 0) buffers[slot[j]].last_use = i;
    }
    for (int j : kernels[i].outputs) {
      slot[j] = static_cast<int>(buffers.size());
      bool graph_output = std::find(problem.graph_outputs.begin(), problem.graph_outputs.end(),
                                    j) != problem.graph_outputs.end();
      buffers.push_back({j, i, i, graph_output});
    }
  }
  return buffers;
}

std::string join(const std::vector<int>& ids) {
  return ids.empty() ? "-" : fmt::format("{}", fmt::join(ids, ","));
}

}  // namespace

namespace orchestrate_detail {

Plan extract_plan(const OrchestrationProblem& problem, std::vector<int> kernels) {
  std::vector<int> position = topological_positions(problem);
  std::vector<char> is_output(problem.num_primitives, 0);
  for (int g : problem.graph_outputs) is_output[g] = 1;
  auto key = [&](int c) {
    const std::vector<int>& prims = problem.candidates[c].primitives;
    int first = position[prims.front()];
    for (int p : prims) first = std::min(first, position[p]);
    return std::pair{first, c};
  };

  while (true) {
    // Order: repeatedly run the ready kernel that starts earliest in the primitive order.
    std::vector<char> written(problem.num_primitives, 0), done(kernels.size(), 0);
    std::vector<PlanKernel> plan;
    for (size_t step = 0; step < kernels.size(); ++step) {
      int best = -1;
      for (int i = 0; i < static_cast<int>(kernels.size()); ++i) {
        if (done[i]) continue;
        std::vector<int> inputs = external_inputs(problem, problem.candidates[kernels[i]]);
        bool ready = std::all_of(inputs.begin(), inputs.end(), [&](int j) { return written[j]; });
        if (ready && (best < 0 || key(kernels[i]) < key(kernels[best]))) best = i;
      }
      check(best >= 0, "orchestrate: internal error: the chosen kernels cannot be ordered");
      done[best] = 1;
      const Candidate& c = problem.candidates[kernels[best]];
      PlanKernel kernel{kernels[best], external_inputs(problem, c), {}, {}, c.cost_us};
      for (int j : c.outputs) {
        // Only the first writer keeps a buffer; the rest are recomputations nobody reads.
        (written[j] ? kernel.dropped_outputs : kernel.outputs).push_back(j);
        written[j] = 1;
      }
      plan.push_back(std::move(kernel));
    }
    std::vector<char> read(problem.num_primitives, 0);
    for (const PlanKernel& k : plan) {
      for (int j : k.inputs) read[j] = 1;
    }
    std::vector<int> useful;
    for (PlanKernel& k : plan) {
      std::vector<int> keep;
      for (int j : k.outputs) {
        (read[j] || is_output[j] ? keep : k.dropped_outputs).push_back(j);
      }
      std::sort(k.dropped_outputs.begin(), k.dropped_outputs.end());
      k.outputs = std::move(keep);
      if (!k.outputs.empty()) useful.push_back(k.candidate);
    }
    if (useful.size() < kernels.size()) {
      kernels = std::move(useful);  // a kernel nobody reads from: drop it and reorder
      continue;
    }
    Plan result;
    result.kernels = std::move(plan);
    result.buffers = lifetimes(problem, result.kernels);
    for (const PlanKernel& k : result.kernels) result.objective_us += k.cost_us;
    return result;
  }
}

}  // namespace orchestrate_detail

std::string check_plan(const OrchestrationProblem& problem, const Plan& plan) {
  try {
    orchestrate_detail::validate_problem(problem);
  } catch (const Error& e) {
    return e.what();
  }
  const int m = static_cast<int>(problem.candidates.size());
  std::vector<int> writer(problem.num_primitives, -1);
  double total = 0;
  for (int i = 0; i < static_cast<int>(plan.kernels.size()); ++i) {
    const PlanKernel& k = plan.kernels[i];
    if (k.candidate < 0 || k.candidate >= m) {
      return fmt::format("kernel {}: candidate {} does not exist", i, k.candidate);
    }
    const Candidate& c = problem.candidates[k.candidate];
    std::string name = fmt::format("kernel {} ({})", i, describe(problem, k.candidate));
    if (!std::isfinite(c.cost_us) || k.cost_us != c.cost_us) {
      return fmt::format("{}: cost {} us, the candidate's {} us", name, k.cost_us, c.cost_us);
    }
    if (k.inputs != external_inputs(problem, c)) {
      return fmt::format("{}: inputs [{}] are not the candidate's external inputs", name,
                         join(k.inputs));
    }
    std::vector<int> all = k.outputs;
    all.insert(all.end(), k.dropped_outputs.begin(), k.dropped_outputs.end());
    std::sort(all.begin(), all.end());
    if (all != c.outputs || !std::is_sorted(k.outputs.begin(), k.outputs.end())) {
      return fmt::format("{}: outputs [{}] and dropped [{}] do not split the candidate's outputs",
                         name, join(k.outputs), join(k.dropped_outputs));
    }
    for (int j : k.inputs) {
      if (writer[j] < 0) {
        return fmt::format("{} reads primitive {} before any kernel writes it", name, j);
      }
    }
    for (int j : k.outputs) {
      if (writer[j] >= 0) {
        return fmt::format("{} writes primitive {} again (kernel {} wrote it)", name, j, writer[j]);
      }
      writer[j] = i;
    }
    total += k.cost_us;
  }
  for (int g : problem.graph_outputs) {
    if (writer[g] < 0) return fmt::format("no kernel writes graph output primitive {}", g);
  }
  if (std::abs(total - plan.objective_us) > 1e-9 * std::max(1.0, std::abs(total))) {
    return fmt::format("objective {} us, kernels sum to {} us", plan.objective_us, total);
  }
  std::vector<BufferLifetime> expected = lifetimes(problem, plan.kernels);
  if (expected.size() != plan.buffers.size()) {
    return fmt::format("{} buffer lifetimes, the kernels write {} buffers", plan.buffers.size(),
                       expected.size());
  }
  for (size_t b = 0; b < expected.size(); ++b) {
    const BufferLifetime &want = expected[b], &got = plan.buffers[b];
    if (want.primitive != got.primitive || want.producer != got.producer ||
        want.last_use != got.last_use || want.graph_output != got.graph_output) {
      return fmt::format(
          "buffer {}: lifetime of primitive {} is kernels {}..{}, replay gives primitive {} in "
          "kernels {}..{}",
          b, got.primitive, got.producer, got.last_use, want.primitive, want.producer,
          want.last_use);
    }
  }
  return "";
}

std::string format_plan(const OrchestrationProblem& problem, const Plan& plan) {
  std::string text =
      fmt::format("plan: {} kernels, {:.2f} us", plan.kernels.size(), plan.objective_us);
  if (plan.status == SolveStatus::Optimal) {
    text += ", optimal\n";
  } else {
    text += fmt::format(", not proven optimal (lower bound {:.2f} us, gap {:.1f}%)\n",
                        plan.lower_bound_us, 100 * plan.gap);
  }
  if (!plan.note.empty()) text += fmt::format("note: {}\n", plan.note);
  text += fmt::format("{:>4}  {:>10}  {:>9}  {:<24}  {:<16}  {}\n", "#", "cost_us", "candidate",
                      "kernel", "reads", "writes");
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlanKernel& k = plan.kernels[i];
    const Candidate& c = problem.candidates[k.candidate];
    std::string name = c.label.empty() ? fmt::format("{{{}}}", join(c.primitives)) : c.label;
    std::string writes = join(k.outputs);
    if (!k.dropped_outputs.empty()) writes += fmt::format(" (drops {})", join(k.dropped_outputs));
    text += fmt::format("{:>4}  {:>10.2f}  {:>9}  {:<24}  {:<16}  {}\n", i, k.cost_us, k.candidate,
                        name, join(k.inputs), writes);
  }
  const OrchestrateStats& s = plan.stats;
  text += fmt::format(
      "candidates: {} given, {} unmeasured, {} unusable, {} dominated; BLP {} candidates, {} "
      "rows, {} rounds, {} cycle cuts, {:.3f} s in CBC\n",
      s.candidates, s.unmeasured, s.unusable, s.dominated, s.columns, s.rows, s.rounds,
      s.cycle_cuts, s.solve_seconds);
  text += fmt::format("starting plans: greedy {:.2f} us, without recomputation {:.2f} us\n",
                      s.greedy_us, s.no_recompute_us);
  return text;
}

}  // namespace orch
