// Replay of chosen columns, the greedy warm start, and cuts against cyclic solutions.
#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {

bool Replay::complete(const Columns& columns) const {
  return stuck.empty() && std::all_of(columns.graph_outputs.begin(), columns.graph_outputs.end(),
                                      [&](int g) { return written[g]; });
}

Replay replay(const Columns& columns, const std::vector<int>& chosen) {
  Replay result;
  result.written.assign(columns.num_buffers, 0);
  std::vector<int> pending = chosen;
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<int> still;
    for (int k : pending) {
      const std::vector<int>& needs = columns.needs[k];
      if (std::all_of(needs.begin(), needs.end(), [&](int j) { return result.written[j]; })) {
        result.order.push_back(k);
        for (int j : columns.writes[k]) result.written[j] = 1;
        progress = true;
      } else {
        still.push_back(k);
      }
    }
    pending = std::move(still);
  }
  result.stuck = std::move(pending);
  return result;
}

double total_cost(const Columns& columns, const std::vector<int>& chosen) {
  double sum = 0;
  for (int k : chosen) sum += columns.cost[k];
  return sum;
}

namespace {

// Drops kernels, most expensive first, while the rest still computes every graph output.
std::vector<int> remove_redundant(const Columns& columns, std::vector<int> chosen) {
  std::vector<int> by_cost = chosen;
  std::sort(by_cost.begin(), by_cost.end(),
            [&](int a, int b) { return columns.cost[a] > columns.cost[b]; });
  for (int k : by_cost) {
    std::vector<int> without;
    for (int c : chosen) {
      if (c != k) without.push_back(c);
    }
    if (replay(columns, without).complete(columns)) chosen = std::move(without);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace

// Knuth's algorithm: a buffer's price is the cheapest column writing it plus the prices of
// that column's inputs (shared inputs counted twice, hence a heuristic). Walking back from
// the graph outputs along the cheapest writers gives a plan whose columns only read buffers
// priced earlier, so it is acyclic. Crediting every output of a chosen column usually saves
// kernels, but can close a cycle; then the plan without credit is used.
std::vector<int> greedy_plan(const Columns& columns, const std::vector<int>& free) {
  const int m = columns.size();
  std::vector<double> cost = columns.cost;
  for (int k : free) cost[k] = 0;
  const int n = columns.num_buffers;
  std::vector<std::vector<int>> readers(n);
  std::vector<int> missing(m);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  for (int k = 0; k < m; ++k) {
    missing[k] = static_cast<int>(columns.needs[k].size());
    for (int j : columns.needs[k]) readers[j].push_back(k);
    if (missing[k] == 0) queue.push({cost[k], k});
  }
  std::vector<double> price(n, std::numeric_limits<double>::infinity());
  std::vector<int> cheapest(n, -1);
  while (!queue.empty()) {
    auto [value, k] = queue.top();
    queue.pop();
    for (int j : columns.writes[k]) {
      if (cheapest[j] >= 0) continue;
      cheapest[j] = k;
      price[j] = value;
      for (int r : readers[j]) {
        if (--missing[r] > 0) continue;
        double total = cost[r];
        for (int i : columns.needs[r]) total += price[i];
        queue.push({total, r});
      }
    }
  }

  auto walk_back = [&](bool credit) {
    std::vector<char> covered(n, 0), chosen(m, 0);
    std::vector<int> stack = columns.graph_outputs, plan;
    while (!stack.empty()) {
      int j = stack.back();
      stack.pop_back();
      if (covered[j]) continue;
      int k = cheapest[j];
      covered[j] = 1;
      if (chosen[k]) continue;
      chosen[k] = 1;
      plan.push_back(k);
      if (credit) {
        for (int w : columns.writes[k]) covered[w] = 1;
      }
      for (int i : columns.needs[k]) stack.push_back(i);
    }
    return plan;
  };
  std::vector<int> plan = walk_back(true);
  if (!replay(columns, plan).complete(columns)) plan = walk_back(false);
  return remove_redundant(columns, std::move(plan));
}

std::vector<int> repaired_plan(const Columns& columns, const std::vector<int>& cyclic,
                               const std::vector<int>& incumbent) {
  std::vector<int> both = cyclic;
  both.insert(both.end(), incumbent.begin(), incumbent.end());
  std::sort(both.begin(), both.end());
  both.erase(std::unique(both.begin(), both.end()), both.end());
  // The incumbent runs alone, so it runs with more written: only columns of the cycles stay.
  std::vector<int> patched = remove_redundant(columns, replay(columns, both).order);
  // Or the greedy plan with the solution's columns priced at nothing: it takes each of them
  // wherever its inputs can be written first, and the cheapest other columns where a cycle must
  // be broken (the incumbent's columns can be far from the cheapest way to break it).
  std::vector<int> finished = greedy_plan(columns, cyclic);
  return total_cost(columns, finished) < total_cost(columns, patched) ? finished : patched;
}

namespace {

// Tarjan's strongly connected components over the stuck columns.
class Components {
 public:
  explicit Components(const std::vector<std::vector<int>>& edges)
      : edges_(edges),
        index_(edges.size(), -1),
        low_(edges.size()),
        on_stack_(edges.size()),
        component_(edges.size(), -1) {
    for (int v = 0; v < static_cast<int>(edges.size()); ++v) {
      if (index_[v] < 0) visit(v);
    }
  }
  int count() const { return count_; }
  int of(int v) const { return component_[v]; }

 private:
  void visit(int v) {
    index_[v] = low_[v] = next_++;
    stack_.push_back(v);
    on_stack_[v] = 1;
    for (int w : edges_[v]) {
      if (index_[w] < 0) {
        visit(w);
        low_[v] = std::min(low_[v], low_[w]);
      } else if (on_stack_[w]) {
        low_[v] = std::min(low_[v], index_[w]);
      }
    }
    if (low_[v] != index_[v]) return;
    while (true) {
      int w = stack_.back();
      stack_.pop_back();
      on_stack_[w] = 0;
      component_[w] = count_;
      if (w == v) break;
    }
    ++count_;
  }

  const std::vector<std::vector<int>>& edges_;
  std::vector<int> index_, low_;
  std::vector<char> on_stack_;
  std::vector<int> component_, stack_;
  int next_ = 0, count_ = 0;
};

}  // namespace

// A stuck column waits on buffers that only stuck columns write (a chosen column that ran wrote
// its buffers). In the graph "k waits on a stuck writer of one of its missing inputs", every
// column has an edge, so each component with no edge leaving it is a cycle S whose missing
// inputs J only S writes. Each member of S reads J and, being waited on, writes J: no chosen
// kernel writes J without reading it, which the cut over J forbids. It forbids as well any other
// cycle that passes all of J around; a cut naming S's members let CBC swap one of them for an
// equal-cost alternative (horizontal fusions have many) and come back cyclic round after round.
std::vector<CycleCut> cycle_cuts(const Columns& columns, const Replay& stuck_replay) {
  const std::vector<int>& stuck = stuck_replay.stuck;
  const int s = static_cast<int>(stuck.size());
  std::vector<std::vector<int>> stuck_writers(columns.num_buffers);
  for (int v = 0; v < s; ++v) {
    for (int j : columns.writes[stuck[v]]) stuck_writers[j].push_back(v);
  }
  std::vector<std::vector<int>> missing(s), edges(s);
  for (int v = 0; v < s; ++v) {
    for (int j : columns.needs[stuck[v]]) {
      if (stuck_replay.written[j]) continue;
      missing[v].push_back(j);
      for (int w : stuck_writers[j]) edges[v].push_back(w);
    }
  }
  Components components(edges);
  std::vector<char> has_exit(components.count(), 0);
  for (int v = 0; v < s; ++v) {
    for (int w : edges[v]) {
      if (components.of(w) != components.of(v)) has_exit[components.of(v)] = 1;
    }
  }
  auto touches = [](const std::vector<int>& buffers, const std::vector<char>& in_set) {
    return std::any_of(buffers.begin(), buffers.end(), [&](int j) { return in_set[j]; });
  };
  std::vector<CycleCut> cuts;
  for (int c = 0; c < components.count(); ++c) {
    if (has_exit[c]) continue;
    std::vector<char> in_set(columns.num_buffers, 0);
    for (int v = 0; v < s; ++v) {
      if (components.of(v) != c) continue;
      for (int j : missing[v]) in_set[j] = 1;
    }
    CycleCut cut;
    for (int j = 0; j < columns.num_buffers; ++j) {
      if (in_set[j]) cut.buffers.push_back(j);
    }
    for (int k = 0; k < columns.size(); ++k) {
      bool reads = touches(columns.needs[k], in_set);
      if (reads) cut.readers.push_back(k);
      if (!reads && touches(columns.writes[k], in_set)) cut.first_writers.push_back(k);
    }
    cuts.push_back(std::move(cut));
  }
  return cuts;
}

}  // namespace orch::orchestrate_detail
