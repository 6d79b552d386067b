#include "candidates/states.h"

#include <algorithm>
#include <unordered_set>

#include "ir/error.h"

namespace orch {

DagIndex index_dag(const Dag& dag) {
  check_dag(dag);
  return {.anchored = anchored_preds(dag), .last_consumer = last_consumers(dag)};
}

SubDag sub_dag(const Dag& dag, const DagIndex& index, int begin, int end) {
  check(0 <= begin && begin <= end && end <= dag.size,
        "subgraph [{}, {}) is not a range of the {} vertices", begin, end, dag.size);
  check(end - begin <= VertexSet::kCapacity,
        "subgraph [{}, {}) has {} vertices; enumeration handles at most {}: cut it", begin, end,
        end - begin, VertexSet::kCapacity);
  SubDag sub;
  sub.begin = begin;
  sub.size = end - begin;
  sub.preds.resize(sub.size);
  sub.succs.resize(sub.size);
  sub.readers.resize(sub.size);
  sub.category.assign(dag.category.begin() + begin, dag.category.begin() + end);
  for (int v = 0; v < sub.size; ++v) {
    const int g = begin + v;
    // Consumers come later in the order: one outside the subgraph is at or after `end`.
    if (dag.is_graph_output[g] || index.last_consumer[g] >= end) sub.external.insert(v);
    for (int p : index.anchored[g]) {
      if (p < begin) continue;
      sub.preds[v].insert(p - begin);
      sub.succs[p - begin].insert(v);
    }
    for (int p : dag.preds[g])
      if (p >= begin) sub.readers[p - begin].insert(v);
  }
  return sub;
}

SubDag sub_dag(const Dag& dag, int begin, int end) {
  return sub_dag(dag, index_dag(dag), begin, end);
}

StateSet execution_states(const SubDag& sub, int64_t max_states) {
  check(max_states >= 1, "the state cap must be at least 1, not {}", max_states);
  StateSet result;
  std::unordered_set<VertexSet, VertexSetHash> seen;
  std::vector<VertexSet> stack{VertexSet{}};
  seen.insert(VertexSet{});
  while (!stack.empty() && !result.capped) {
    VertexSet state = stack.back();
    stack.pop_back();
    // Extend by every vertex whose predecessors have all run.
    for (int v = 0; v < sub.size; ++v) {
      if (state.contains(v) || !sub.preds[v].subset_of(state)) continue;
      VertexSet next = state;
      next.insert(v);
      if (seen.contains(next)) continue;
      if (static_cast<int64_t>(seen.size()) >= max_states) {
        result.capped = true;
        break;
      }
      seen.insert(next);
      stack.push_back(next);
    }
  }
  result.states.assign(seen.begin(), seen.end());
  std::sort(result.states.begin(), result.states.end(), [](const VertexSet& a, const VertexSet& b) {
    int sa = a.size(), sb = b.size();
    return sa != sb ? sa < sb : a < b;
  });
  return result;
}

}  // namespace orch
