#include "partition/dag.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ir/error.h"

namespace orch {

Dag dag_of(const Graph& graph) {
  Dag dag;
  dag.size = static_cast<int>(graph.num_nodes());
  dag.preds.resize(dag.size);
  dag.is_graph_output.assign(dag.size, false);
  dag.category.assign(dag.size, Category::Operator);
  dag.label.resize(dag.size);
  dag.constant_only.assign(dag.size, true);
  for (NodeId n = 0; n < dag.size; ++n) {
    const Node& node = graph.node(n);
    for (ValueId v : node.inputs) {
      if (v == kNoValue) continue;
      NodeId producer = graph.value(v).producer;
      if (producer == kNoNode) {
        if (!graph.value(v).is_constant()) dag.constant_only[n] = false;
        continue;
      }
      dag.preds[n].push_back(producer);
      if (!dag.constant_only[producer]) dag.constant_only[n] = false;
    }
    std::sort(dag.preds[n].begin(), dag.preds[n].end());
    dag.preds[n].erase(std::unique(dag.preds[n].begin(), dag.preds[n].end()), dag.preds[n].end());
    if (const OpSchema* schema = find_op(node.op)) dag.category[n] = schema->category;
    dag.label[n] = graph.describe(n);
  }
  for (ValueId v : graph.outputs()) {
    NodeId producer = graph.value(v).producer;
    if (producer != kNoNode) dag.is_graph_output[producer] = true;
  }
  return dag;
}

void check_dag(const Dag& dag) {
  const size_t n = static_cast<size_t>(dag.size);
  check(dag.size >= 0 && dag.preds.size() == n && dag.is_graph_output.size() == n &&
            dag.category.size() == n && dag.label.size() == n && dag.constant_only.size() == n,
        "DAG of {} vertices has {} predecessor lists, {} output flags, {} categories, {} labels, "
        "{} constant-only flags",
        dag.size, dag.preds.size(), dag.is_graph_output.size(), dag.category.size(),
        dag.label.size(), dag.constant_only.size());
  for (int v = 0; v < dag.size; ++v) {
    for (int p : dag.preds[v]) {
      check(p >= 0 && p < v, "DAG vertex {} has predecessor {}: not an earlier vertex", v, p);
      check(!dag.constant_only[v] || dag.constant_only[p],
            "DAG vertex {} is constant-only but its predecessor {} is not", v, p);
    }
  }
}

std::vector<std::vector<int>> anchored_preds(const Dag& dag) {
  std::vector<std::vector<int>> preds = dag.preds;
  std::vector<int> first_consumer(dag.size, -1);
  for (int v = dag.size - 1; v >= 0; --v)
    for (int p : dag.preds[v]) first_consumer[p] = v;
  // From the last vertex back, so that a consumer's anchors are known before its producers'.
  for (int v = dag.size - 1; v >= 0; --v) {
    if (!dag.constant_only[v] || first_consumer[v] < 0) continue;
    for (int p : preds[first_consumer[v]])
      if (p < v && !dag.constant_only[p]) preds[v].push_back(p);
    std::sort(preds[v].begin(), preds[v].end());
    preds[v].erase(std::unique(preds[v].begin(), preds[v].end()), preds[v].end());
  }
  // Sibling views, in vertex order: each after the one before it.
  std::map<std::pair<int, std::vector<int>>, int> last_sibling;
  const std::vector<std::vector<int>> succs = successors(dag);
  for (int v = 0; v < dag.size; ++v) {
    if (dag.category[v] != Category::Layout || dag.constant_only[v] || dag.is_graph_output[v] ||
        succs[v].size() != 1 || dag.preds[v].empty())
      continue;
    auto [it, first] = last_sibling.try_emplace({succs[v][0], dag.preds[v]}, v);
    if (first) continue;
    preds[v].insert(std::upper_bound(preds[v].begin(), preds[v].end(), it->second), it->second);
    preds[v].erase(std::unique(preds[v].begin(), preds[v].end()), preds[v].end());
    it->second = v;
  }
  return preds;
}

std::vector<int> last_consumers(const Dag& dag) {
  std::vector<int> last(dag.size, -1);
  for (int v = 0; v < dag.size; ++v)
    for (int p : dag.preds[v]) last[p] = std::max(last[p], v);
  return last;
}

std::vector<std::vector<int>> successors(const Dag& dag) {
  std::vector<std::vector<int>> succs(dag.size);
  for (int v = 0; v < dag.size; ++v)
    for (int p : dag.preds[v]) succs[p].push_back(v);
  for (auto& s : succs) s.erase(std::unique(s.begin(), s.end()), s.end());
  return succs;
}

}  // namespace orch
