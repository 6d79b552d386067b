// Helpers for kernel identification tests: hand-made and random DAGs, and brute force over all
// vertex subsets (the definitions of Korch §4.1 applied literally).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "candidates/vertex_set.h"
#include "partition/dag.h"

namespace orch::testing {

/// A DAG of `n` vertices with edges (u, v), u < v; the vertices without successors are graph
/// outputs.
inline Dag make_dag(int n, const std::vector<std::pair<int, int>>& edges,
                    std::vector<Category> categories = {}) {
  Dag dag;
  dag.size = n;
  dag.preds.resize(n);
  dag.is_graph_output.assign(n, true);
  dag.category = categories.empty() ? std::vector<Category>(n, Category::Elementwise) : categories;
  dag.constant_only.assign(n, false);
  for (int v = 0; v < n; ++v) dag.label.push_back(fmt::format("v{}", v));
  for (auto [u, v] : edges) {
    dag.preds[v].push_back(u);
    dag.is_graph_output[u] = false;
  }
  for (auto& p : dag.preds) std::sort(p.begin(), p.end());
  return dag;
}

/// A random DAG: each edge u -> v (u < v) with probability `p`; sinks and a few others are graph
/// outputs; about one vertex in six is Linear and one in twenty Opaque when `opaque`; some
/// sources, and some vertices reading only constant-only ones, are constant-only.
inline Dag random_dag(std::mt19937& rng, int n, double p, bool opaque) {
  std::bernoulli_distribution edge(p), extra_output(0.1), linear(1.0 / 6), is_opaque(0.05),
      constant_only(0.3);
  std::vector<std::pair<int, int>> edges;
  for (int v = 0; v < n; ++v)
    for (int u = 0; u < v; ++u)
      if (edge(rng)) edges.emplace_back(u, v);
  std::vector<Category> categories(n, Category::Elementwise);
  for (auto& c : categories) {
    if (linear(rng)) c = Category::Linear;
    if (opaque && is_opaque(rng)) c = Category::Opaque;
  }
  Dag dag = make_dag(n, edges, categories);
  for (int v = 0; v < n; ++v) {
    if (extra_output(rng)) dag.is_graph_output[v] = true;
    bool preds_constant = std::all_of(dag.preds[v].begin(), dag.preds[v].end(),
                                      [&](int u) { return dag.constant_only[u]; });
    dag.constant_only[v] = preds_constant && constant_only(rng);
  }
  return dag;
}

/// Brute-force facts about a DAG of at most ~20 vertices with the given predecessor lists (the
/// real ones or the anchored ones), subsets as bit masks.
struct BruteForce {
  int n;
  std::vector<uint32_t> pred_mask, succ_mask, reach;  // reach[u]: vertices u reaches, u excluded

  BruteForce(int size, const std::vector<std::vector<int>>& preds)
      : n(size), pred_mask(n), succ_mask(n), reach(n) {
    for (int v = 0; v < n; ++v)
      for (int p : preds[v]) {
        pred_mask[v] |= 1u << p;
        succ_mask[p] |= 1u << v;
      }
    for (int u = n - 1; u >= 0; --u)
      for (int v = u + 1; v < n; ++v)
        if (succ_mask[u] >> v & 1) reach[u] |= (1u << v) | reach[v];
  }
  bool is_state(uint32_t s) const {
    for (int v = 0; v < n; ++v)
      if ((s >> v & 1) && (pred_mask[v] & ~s)) return false;
    return true;
  }
  // Definition 1: no p outside S with a path from S to p and from p to S.
  bool is_convex(uint32_t s) const {
    uint32_t reached = 0;
    for (int v = 0; v < n; ++v)
      if (s >> v & 1) reached |= reach[v];
    for (int p = 0; p < n; ++p)
      if ((reached >> p & 1) && !(s >> p & 1) && (reach[p] & s)) return false;
    return true;
  }
};

/// Definition 3 on the real edges: members read outside `s`, or graph outputs.
inline uint32_t brute_outputs(const Dag& dag, uint32_t s) {
  BruteForce real(dag.size, dag.preds);
  uint32_t outputs = 0;
  for (int v = 0; v < dag.size; ++v)
    if ((s >> v & 1) && (dag.is_graph_output[v] || (real.succ_mask[v] & ~s))) outputs |= 1u << v;
  return outputs;
}

/// The bit mask of a VertexSet of a subgraph starting at vertex `begin`.
inline uint32_t mask_of(const VertexSet& set, int begin = 0) {
  uint32_t m = 0;
  set.for_each([&](int v) { m |= 1u << (v + begin); });
  return m;
}

}  // namespace orch::testing
