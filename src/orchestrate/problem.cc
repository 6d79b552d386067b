// Validation of an OrchestrationProblem: a DAG of primitives and well-formed candidates.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "orchestrate/columns.h"

namespace orch {

std::vector<int> external_inputs(const OrchestrationProblem& problem, const Candidate& candidate) {
  std::vector<int> result;
  for (int p : candidate.primitives) {
    for (int input : problem.primitive_inputs[p]) {
      if (!std::binary_search(candidate.primitives.begin(), candidate.primitives.end(), input)) {
        result.push_back(input);
      }
    }
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

namespace orchestrate_detail {
namespace {

std::string describe(const OrchestrationProblem& problem, int index) {
  const std::string& label = problem.candidates[index].label;
  return label.empty() ? fmt::format("candidate {}", index)
                       : fmt::format("candidate {} ({})", index, label);
}

bool strictly_increasing(const std::vector<int>& ids) {
  return std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<int>()) == ids.end();
}

// Kahn's algorithm; fails naming a primitive on a cycle.
std::vector<int> topological_order(const OrchestrationProblem& problem,
                                   const std::vector<std::vector<int>>& consumers) {
  const int n = problem.num_primitives;
  std::vector<int> missing(n), order;
  for (int p = 0; p < n; ++p) missing[p] = static_cast<int>(problem.primitive_inputs[p].size());
  for (int p = 0; p < n; ++p) {
    if (missing[p] == 0) order.push_back(p);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (int c : consumers[order[i]]) {
      if (--missing[c] == 0) order.push_back(c);
    }
  }
  if (static_cast<int>(order.size()) < n) {
    int on_cycle =
        static_cast<int>(std::find_if(missing.begin(), missing.end(), [](int m) { return m > 0; }) -
                         missing.begin());
    fail("orchestrate: the primitive graph has a cycle (primitive {} depends on itself)", on_cycle);
  }
  return order;
}

void validate_candidate(const OrchestrationProblem& problem, int index,
                        const std::vector<Bitset>& descendants,
                        const std::vector<Bitset>& ancestors,
                        const std::vector<std::vector<int>>& consumers,
                        const std::vector<char>& is_graph_output) {
  const Candidate& c = problem.candidates[index];
  const int n = problem.num_primitives;
  check(!c.primitives.empty(), "orchestrate: {} has no primitives", describe(problem, index));
  check(strictly_increasing(c.primitives) && strictly_increasing(c.outputs),
        "orchestrate: {}: primitives and outputs must be sorted without duplicates",
        describe(problem, index));
  check(c.primitives.front() >= 0 && c.primitives.back() < n,
        "orchestrate: {}: primitive id out of range [0, {})", describe(problem, index), n);
  check(!std::isnan(c.cost_us) && c.cost_us >= 0, "orchestrate: {}: cost {} is not a latency",
        describe(problem, index), c.cost_us);
  for (int o : c.outputs) {
    check(std::binary_search(c.primitives.begin(), c.primitives.end(), o),
          "orchestrate: {}: output {} is not one of its primitives", describe(problem, index), o);
    bool read_outside = std::any_of(consumers[o].begin(), consumers[o].end(), [&](int consumer) {
      return !std::binary_search(c.primitives.begin(), c.primitives.end(), consumer);
    });
    check(read_outside || is_graph_output[o],
          "orchestrate: {}: output {} is neither read outside the kernel nor a graph output",
          describe(problem, index), o);
  }
  // Convex: nothing outside lies on a path between two of its primitives, i.e. the
  // descendants of its primitives that are also their ancestors all lie inside.
  Bitset between(n), above(n);
  for (int p : c.primitives) {
    between.unite(descendants[p]);
    above.unite(ancestors[p]);
  }
  between.intersect(above);
  for (int p : c.primitives) between.reset(p);
  int outside = between.first();
  check(outside < 0,
        "orchestrate: {} is not convex: primitive {} lies on a path between two of its "
        "primitives",
        describe(problem, index), outside);
}

}  // namespace

void validate_problem(const OrchestrationProblem& problem) {
  const int n = problem.num_primitives;
  // No primitives (every output folded to a constant) is legal: the empty plan computes it.
  check(n >= 0, "orchestrate: negative number of primitives {}", n);
  check(static_cast<int>(problem.primitive_inputs.size()) == n,
        "orchestrate: primitive_inputs has {} entries for {} primitives",
        problem.primitive_inputs.size(), n);
  std::vector<std::vector<int>> consumers(n);
  for (int p = 0; p < n; ++p) {
    for (int input : problem.primitive_inputs[p]) {
      check(input >= 0 && input < n && input != p,
            "orchestrate: primitive {} has input {}, not another primitive", p, input);
      consumers[input].push_back(p);
    }
  }
  std::vector<int> order = topological_order(problem, consumers);
  check(n == 0 || !problem.graph_outputs.empty(), "orchestrate: the problem has no graph outputs");
  std::vector<char> is_graph_output(n, 0);
  for (int o : problem.graph_outputs) {
    check(o >= 0 && o < n, "orchestrate: graph output {} is not a primitive", o);
    is_graph_output[o] = 1;
  }
  std::vector<Bitset> descendants(n, Bitset(n)), ancestors(n, Bitset(n));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (int c : consumers[*it]) {
      descendants[*it].set(c);
      descendants[*it].unite(descendants[c]);
    }
  }
  for (int p : order) {
    for (int input : problem.primitive_inputs[p]) {
      ancestors[p].set(input);
      ancestors[p].unite(ancestors[input]);
    }
  }
  for (int i = 0; i < static_cast<int>(problem.candidates.size()); ++i) {
    validate_candidate(problem, i, descendants, ancestors, consumers, is_graph_output);
  }
}

}  // namespace orchestrate_detail
}  // namespace orch
