// The best plan without recomputation, by Dijkstra over execution states.
//
// A plan that computes every primitive once runs kernels whose primitive sets partition the
// computed primitives; after each kernel the computed set is an execution state. A complete
// column can follow state S when it is disjoint from S and all its external inputs lie in S
// (then they were written: whoever computed them is complete). So such plans are paths from
// the empty state to a state holding every required primitive, and the cheapest is a
// shortest path. It is an upper bound for the BLP and usually a strong warm start.
#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {
namespace {

struct BitsetHash {
  size_t operator()(const Bitset& b) const { return b.hash(); }
};

struct Node {
  double cost = 0;
  int parent = -1;  // node index
  int column = -1;  // the step into this state
  bool done = false;
};

}  // namespace

std::vector<int> chain_plan(const Columns& columns, int max_states) {
  const int n = columns.num_buffers;
  std::vector<int> usable;
  std::vector<Bitset> prims, needs;
  // A column can follow S only if its entry primitives (no input inside the column) are ready
  // at S: all inputs in S. Index each column under one entry primitive.
  std::vector<std::vector<int>> by_entry(n);
  for (int k = 0; k < columns.size(); ++k) {
    if (!columns.complete[k]) continue;
    Bitset p(n), r(n);
    for (int q : columns.primitives[k]) p.set(q);
    for (int q : columns.needs[k]) r.set(q);
    int entry =
        *std::find_if(columns.primitives[k].begin(), columns.primitives[k].end(), [&](int q) {
          const std::vector<int>& in = columns.primitive_inputs[q];
          return std::none_of(in.begin(), in.end(), [&](int i) { return p.test(i); });
        });
    by_entry[entry].push_back(static_cast<int>(usable.size()));
    usable.push_back(k);
    prims.push_back(std::move(p));
    needs.push_back(std::move(r));
  }
  Bitset required(n);
  for (int p : columns.required) required.set(p);

  std::vector<Bitset> states{Bitset(n)};
  std::vector<Node> nodes{Node{}};
  std::unordered_map<Bitset, int, BitsetHash> index{{states[0], 0}};
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  queue.push({0, 0});
  while (!queue.empty()) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const double cost = queue.top().first;
    const int s = queue.top().second;
    queue.pop();
    if (nodes[s].done) continue;
    nodes[s].done = true;
    if (required.subset_of(states[s])) {
      std::vector<int> plan;
      for (int v = s; nodes[v].column >= 0; v = nodes[v].parent) plan.push_back(nodes[v].column);
      return plan;
    }
    for (int ready = 0; ready < n; ++ready) {
      const std::vector<int>& in = columns.primitive_inputs[ready];
      if (states[s].test(ready) ||
          !std::all_of(in.begin(), in.end(), [&](int i) { return states[s].test(i); }))
        continue;
      for (int u : by_entry[ready]) {
        if (prims[u].intersects(states[s]) || !needs[u].subset_of(states[s])) continue;
        Bitset next = states[s];
        next.unite(prims[u]);
        double next_cost = cost + columns.cost[usable[u]];
        auto [it, added] = index.try_emplace(next, static_cast<int>(states.size()));
        if (added) {
          if (static_cast<int>(states.size()) >= max_states) return {};
          states.push_back(next);
          nodes.push_back(Node{next_cost, s, usable[u], false});
        } else if (nodes[it->second].done || next_cost >= nodes[it->second].cost) {
          continue;
        } else {
          nodes[it->second] = Node{next_cost, s, usable[u], false};
        }
        queue.push({next_cost, it->second});
      }
    }
  }
  return {};
}

}  // namespace orch::orchestrate_detail
