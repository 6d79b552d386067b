// From candidates to BLP columns: leave out what can never be in an optimal plan.
//
// Each removal keeps at least one optimal plan:
//   - unmeasured candidates (infinite cost) are not kernels anyone can run;
//   - a candidate that needs a buffer no runnable candidate writes can never run;
//   - an output no graph output and no runnable candidate reads is never needed, and a
//     candidate left with no needed output only adds cost;
//   - candidate A is dominated by B when B costs no more, needs a subset of A's inputs and
//     writes a superset of A's outputs: B can run wherever A ran and serves every reader of A.
//     Ties are broken by index, so of identical candidates the first one stays.
// Removing candidates changes which outputs are needed, so the last two steps repeat to a
// fixed point.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"
#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {
namespace {

// Candidates under consideration, indexed like problem.candidates.
struct Work {
  std::vector<char> active;
  std::vector<std::vector<int>> needs, writes;
  std::vector<double> cost;
  std::vector<int> dominator;  // the candidate that dominated this one, or -1
};

std::string describe(const OrchestrationProblem& problem, int index) {
  const std::string& label = problem.candidates[index].label;
  return label.empty() ? fmt::format("candidate {}", index)
                       : fmt::format("candidate {} ({})", index, label);
}

// Buffers some sequence of active candidates can write, and which candidates can run.
std::vector<char> forward_closure(const Work& work, int num_buffers, std::vector<char>& runnable) {
  const int m = static_cast<int>(work.active.size());
  std::vector<std::vector<int>> readers(num_buffers);
  std::vector<int> missing(m, 0), ready;
  for (int k = 0; k < m; ++k) {
    if (!work.active[k]) continue;
    missing[k] = static_cast<int>(work.needs[k].size());
    for (int j : work.needs[k]) readers[j].push_back(k);
    if (missing[k] == 0) ready.push_back(k);
  }
  std::vector<char> writable(num_buffers, 0);
  runnable.assign(m, 0);
  for (size_t i = 0; i < ready.size(); ++i) {
    int k = ready[i];
    runnable[k] = 1;
    for (int j : work.writes[k]) {
      if (writable[j]) continue;
      writable[j] = 1;
      for (int r : readers[j]) {
        if (--missing[r] == 0) ready.push_back(r);
      }
    }
  }
  return writable;
}

std::vector<int> active_writers(const Work& work, int buffer) {
  std::vector<int> writers;
  for (int k = 0; k < static_cast<int>(work.active.size()); ++k) {
    if (work.active[k] && std::binary_search(work.writes[k].begin(), work.writes[k].end(), buffer))
      writers.push_back(k);
  }
  return writers;
}

// The first input of candidate k that no plan computes.
int unwritable_need(const Work& work, const std::vector<char>& writable, int k) {
  const std::vector<int>& needs = work.needs[k];
  return *std::find_if(needs.begin(), needs.end(), [&](int j) { return !writable[j]; });
}

// Where the infeasibility starts: from `buffer` (which no plan computes) back through first
// writers and their first such inputs to a primitive no measured candidate writes. The symptom
// can lie far from it: Segformer-B0's graph output was reported, while its root was the stem
// convolution, whose every kernel had timed out.
int unwritten_root(const Work& work, const std::vector<char>& writable, int buffer) {
  for (size_t step = 0; step < work.active.size(); ++step) {  // a bound: the graph is acyclic
    std::vector<int> writers = active_writers(work, buffer);
    if (writers.empty()) return buffer;
    buffer = unwritable_need(work, writable, writers.front());
  }
  return buffer;
}

[[noreturn]] void fail_infeasible(const OrchestrationProblem& problem, const Work& work,
                                  const std::vector<char>& writable, int output) {
  std::vector<int> writers = active_writers(work, output);
  if (writers.empty()) {
    fail("orchestrate: infeasible: no measured candidate writes graph output primitive {}", output);
  }
  int missing = unwritable_need(work, writable, writers.front());
  fail(
      "orchestrate: infeasible: graph output primitive {} cannot be computed: each of its {} "
      "measured writers needs an input no plan computes ({} needs primitive {}); it starts at "
      "primitive {}, which no measured candidate writes",
      output, writers.size(), describe(problem, writers.front()), missing,
      unwritten_root(work, writable, missing));
}

// Restricts writes to buffers someone reads; drops candidates left writing nothing.
bool trim_unneeded(Work& work, const std::vector<int>& graph_outputs, int num_buffers,
                   int& removed) {
  std::vector<char> needed(num_buffers, 0);
  for (int g : graph_outputs) needed[g] = 1;
  for (size_t k = 0; k < work.active.size(); ++k) {
    if (!work.active[k]) continue;
    for (int j : work.needs[k]) needed[j] = 1;
  }
  bool changed = false;
  for (size_t k = 0; k < work.active.size(); ++k) {
    if (!work.active[k]) continue;
    std::vector<int>& writes = work.writes[k];
    size_t before = writes.size();
    writes.erase(std::remove_if(writes.begin(), writes.end(), [&](int j) { return !needed[j]; }),
                 writes.end());
    changed |= writes.size() != before;
    if (writes.empty()) {
      work.active[k] = 0;
      ++removed;
    }
  }
  return changed;
}

// B dominates A (see the top of the file); the sets are given as bitsets for speed.
bool dominates(const Work& work, const std::vector<Bitset>& needs,
               const std::vector<Bitset>& writes, int b, int a) {
  if (work.cost[b] > work.cost[a] || !writes[a].subset_of(writes[b]) ||
      !needs[b].subset_of(needs[a]))
    return false;
  bool strictly = work.cost[b] < work.cost[a] || work.writes[b].size() > work.writes[a].size() ||
                  work.needs[b].size() < work.needs[a].size();
  return strictly || b < a;
}

Bitset to_bitset(const std::vector<int>& ids, int size) {
  Bitset bits(size);
  for (int i : ids) bits.set(i);
  return bits;
}

// A dominator costs about as much as what it dominates: on YOLOX-Nano's whole-model problem
// with estimated costs (539,377 candidates) every one of the 20,110 dominators was among the
// 4,096 writers just below A's cost, 18,667 among the nearest 256. So the scan starts at A's
// cost, goes down, and gives up after this many. The full scan made 15 billion checks there:
// orchestrate() took 92 s (in every lazy tuning round), 9 s with the cap, pruning the same
// candidates. A dominated candidate left in costs a column, not a plan.
constexpr std::ptrdiff_t kMaxDominanceChecks = 1024;

// Domination is a strict partial order, so every removed candidate keeps an undominated one
// that dominates it: removing all dominated candidates at once is safe.
bool prune_dominated(Work& work, int num_buffers, int& removed) {
  const int m = static_cast<int>(work.active.size());
  std::vector<std::vector<int>> writers(num_buffers);
  std::vector<Bitset> needs(m, Bitset(0)), writes(m, Bitset(0));
  for (int k = 0; k < m; ++k) {
    if (!work.active[k]) continue;
    needs[k] = to_bitset(work.needs[k], num_buffers);
    writes[k] = to_bitset(work.writes[k], num_buffers);
    for (int j : work.writes[k]) writers[j].push_back(k);
  }
  // Cheapest first: a's dominators are a prefix of each writer list.
  for (std::vector<int>& list : writers) {
    std::stable_sort(list.begin(), list.end(),
                     [&](int x, int y) { return work.cost[x] < work.cost[y]; });
  }
  std::vector<int> dominated;
  for (int a = 0; a < m; ++a) {
    if (!work.active[a]) continue;
    // A dominator writes all of a's outputs and costs no more: it is in the shortest such
    // prefix, most likely near its end.
    auto cheaper = [&](int j) {
      return std::upper_bound(writers[j].begin(), writers[j].end(), a,
                              [&](int x, int y) { return work.cost[x] < work.cost[y]; }) -
             writers[j].begin();
    };
    int rarest = work.writes[a].front();
    for (int j : work.writes[a]) {
      if (cheaper(j) < cheaper(rarest)) rarest = j;
    }
    const std::vector<int>& list = writers[rarest];
    const std::ptrdiff_t end = cheaper(rarest);
    const std::ptrdiff_t begin = std::max<std::ptrdiff_t>(0, end - kMaxDominanceChecks);
    for (std::ptrdiff_t i = end - 1; i >= begin; --i) {
      const int b = list[static_cast<size_t>(i)];
      if (b != a && dominates(work, needs, writes, b, a)) {
        dominated.push_back(a);
        work.dominator[a] = b;
        break;
      }
    }
  }
  for (int a : dominated) work.active[a] = 0;
  removed += static_cast<int>(dominated.size());
  return !dominated.empty();
}

}  // namespace

Columns build_columns(const OrchestrationProblem& problem, bool prune_dominated_candidates,
                      OrchestrateStats& stats) {
  const int m = static_cast<int>(problem.candidates.size());
  const int n = problem.num_primitives;
  Work work{std::vector<char>(m, 0), std::vector<std::vector<int>>(m),
            std::vector<std::vector<int>>(m), std::vector<double>(m, 0), std::vector<int>(m, -1)};
  stats.candidates = m;
  for (int k = 0; k < m; ++k) {
    const Candidate& c = problem.candidates[k];
    if (std::isinf(c.cost_us)) {
      ++stats.unmeasured;
      continue;
    }
    work.active[k] = 1;
    work.needs[k] = external_inputs(problem, c);
    work.writes[k] = c.outputs;
    work.cost[k] = c.cost_us;
  }
  std::vector<int> graph_outputs = problem.graph_outputs;
  std::sort(graph_outputs.begin(), graph_outputs.end());
  graph_outputs.erase(std::unique(graph_outputs.begin(), graph_outputs.end()), graph_outputs.end());

  std::vector<char> runnable;
  std::vector<char> writable = forward_closure(work, n, runnable);
  for (int g : graph_outputs) {
    if (!writable[g]) fail_infeasible(problem, work, writable, g);
  }
  for (int k = 0; k < m; ++k) {
    if (work.active[k] && !runnable[k]) {
      work.active[k] = 0;
      ++stats.unusable;
    }
  }
  while (true) {
    bool changed = trim_unneeded(work, graph_outputs, n, stats.unusable);
    if (prune_dominated_candidates) changed |= prune_dominated(work, n, stats.dominated);
    if (!changed) break;
  }

  Columns columns;
  columns.column_of_candidate.assign(m, -1);
  columns.num_buffers = n;
  columns.primitive_inputs = problem.primitive_inputs;
  columns.graph_outputs = graph_outputs;
  for (int k = 0; k < m; ++k) {
    if (!work.active[k]) continue;
    columns.column_of_candidate[k] = columns.size();
    columns.candidate.push_back(k);
    columns.cost.push_back(work.cost[k]);
    columns.needs.push_back(std::move(work.needs[k]));
    columns.writes.push_back(std::move(work.writes[k]));
    columns.primitives.push_back(problem.candidates[k].primitives);
  }
  // Every ancestor of a graph output is computed by some kernel of any plan.
  std::vector<char> required(n, 0);
  std::vector<int> stack = graph_outputs;
  while (!stack.empty()) {
    int p = stack.back();
    stack.pop_back();
    if (required[p]) continue;
    required[p] = 1;
    for (int q : problem.primitive_inputs[p]) stack.push_back(q);
  }
  for (int p = 0; p < n; ++p) {
    if (required[p]) columns.required.push_back(p);
  }
  // Complete: writes each primitive that is a graph output or has a consumer outside the
  // kernel, where some column reads it. Such kernels chain without recomputation.
  std::vector<char> wanted(n, 0);
  for (int g : graph_outputs) wanted[g] = 1;
  for (const std::vector<int>& needs : columns.needs) {
    for (int j : needs) wanted[j] = 1;
  }
  std::vector<std::vector<int>> consumers(n);
  for (int p = 0; p < n; ++p) {
    for (int q : problem.primitive_inputs[p]) consumers[q].push_back(p);
  }
  for (int k = 0; k < columns.size(); ++k) {
    const std::vector<int>& prims = columns.primitives[k];
    const std::vector<int>& writes = columns.writes[k];
    auto inside = [&](int p) { return std::binary_search(prims.begin(), prims.end(), p); };
    bool complete = std::all_of(prims.begin(), prims.end(), [&](int p) {
      bool read_later = std::binary_search(graph_outputs.begin(), graph_outputs.end(), p) ||
                        !std::all_of(consumers[p].begin(), consumers[p].end(), inside);
      return !wanted[p] || !read_later || std::binary_search(writes.begin(), writes.end(), p);
    });
    columns.complete.push_back(complete);
  }
  // A dominated candidate stands for its dominator (which may have been dominated in turn).
  for (int k = 0; k < m; ++k) {
    int d = k;
    while (work.dominator[d] >= 0) d = work.dominator[d];
    if (d != k) columns.column_of_candidate[k] = columns.column_of_candidate[d];
  }
  stats.columns = columns.size();
  return columns;
}

}  // namespace orch::orchestrate_detail
