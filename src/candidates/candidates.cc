#include "candidates/candidates.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace orch {

Feasibility feasibility_of(const FeasibilityRules& rules) {
  return [rules](const KernelShape& k) -> std::string {
    const int opaque = k.by_category[static_cast<int>(Category::Opaque)];
    if (rules.opaque_alone && opaque > 0 && k.size > 1) return "Opaque with others";
    const int operators = k.by_category[static_cast<int>(Category::Operator)];
    if (rules.operator_alone && operators > 0 && k.size > 1) return "operator with others";
    if (k.by_category[static_cast<int>(Category::Linear)] > rules.max_linear)
      return fmt::format("more than {} Linear", rules.max_linear);
    if (rules.max_primitives > 0 && k.size > rules.max_primitives)
      return fmt::format("more than {} primitives", rules.max_primitives);
    return "";
  };
}

int64_t SubgraphCandidates::rejected_total() const {
  int64_t total = 0;
  for (const auto& [reason, count] : rejected) total += count;
  return total;
}

namespace {

// Vertices of `sub` with no successor inside `state`: the sinks of the state.
VertexSet sinks_of(const SubDag& sub, const VertexSet& state) {
  VertexSet sinks;
  state.for_each([&](int v) {
    if (!sub.succs[v].intersects(state)) sinks.insert(v);
  });
  return sinks;
}

void classify(const SubDag& sub, const std::array<VertexSet, kNumCategories>& by_category,
              const VertexSet& members, const EnumerationOptions& options,
              SubgraphCandidates& out) {
  KernelCandidate candidate{.members = members};
  members.for_each([&](int v) {
    if (sub.external.contains(v) || !sub.readers[v].subset_of(members)) candidate.outputs.insert(v);
  });
  KernelShape shape{.size = members.size(), .num_outputs = candidate.outputs.size()};
  for (int c = 0; c < kNumCategories; ++c) shape.by_category[c] = (members & by_category[c]).size();
  // A kernel whose values nobody reads is never worth running.
  std::string reason = shape.num_outputs == 0 ? "writes nothing read" : "";
  if (reason.empty() && options.feasible) reason = options.feasible(shape);
  if (reason.empty() && options.generable) {
    std::vector<int> members_global, outputs_global;
    candidate.members.for_each([&](int v) { members_global.push_back(sub.begin + v); });
    candidate.outputs.for_each([&](int v) { outputs_global.push_back(sub.begin + v); });
    reason = options.generable(members_global, outputs_global);
  }
  if (reason.empty()) {
    out.kept.push_back(candidate);
  } else {
    ++out.rejected[reason];
  }
}

}  // namespace

SubgraphCandidates enumerate_candidates(const SubDag& sub, const EnumerationOptions& options) {
  auto start = std::chrono::steady_clock::now();
  SubgraphCandidates out{.begin = sub.begin, .end = sub.begin + sub.size};
  StateSet states = execution_states(sub, options.max_states);
  out.states = static_cast<int64_t>(states.states.size());
  out.state_cap_hit = states.capped;
  if (states.capped)
    out.note = fmt::format(
        "state cap reached in subgraph of vertices [{}, {}) ({} vertices): more than {} "
        "execution states; its candidates are incomplete (cut it or raise the cap)",
        out.begin, out.end, sub.size, options.max_states);

  std::array<VertexSet, kNumCategories> by_category;
  for (int v = 0; v < sub.size; ++v) by_category[static_cast<int>(sub.category[v])].insert(v);
  std::vector<VertexSet> sinks;
  sinks.reserve(states.states.size());
  for (const VertexSet& s : states.states) sinks.push_back(sinks_of(sub, s));

  // C = D2 \ D1 is convex for every pair D1 ⊂ D2 of states. C arises from many pairs, but D1 is
  // the set of C's ancestors outside C exactly when every sink of D1 feeds C: keep that pair.
  const auto& all = states.states;
  for (size_t j = 0; j < all.size(); ++j) {
    const int size2 = all[j].size();
    for (size_t i = 0; i < j && all[i].size() < size2; ++i) {
      if (!all[i].subset_of(all[j])) continue;
      VertexSet c = all[j] - all[i];
      bool canonical = true;
      sinks[i].for_each([&](int u) { canonical = canonical && sub.succs[u].intersects(c); });
      if (!canonical) continue;
      ++out.convex;
      classify(sub, by_category, c, options, out);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

KernelIdentification identify_kernels(const Dag& dag, const IdentifyOptions& options) {
  PartitionOptions partition_options = options.partition;
  partition_options.max_vertices =
      std::min(partition_options.max_vertices, static_cast<int>(VertexSet::kCapacity));
  const int64_t cap = options.enumeration.max_states;
  const DagIndex index = index_dag(dag);
  partition_options.fits = [&dag, &index, cap](int begin, int end) {
    return !execution_states(sub_dag(dag, index, begin, end), cap).capped;
  };
  KernelIdentification result;
  result.subgraphs = partition(dag, partition_options);
  for (const Subgraph& s : result.subgraphs)
    result.candidates.push_back(
        enumerate_candidates(sub_dag(dag, index, s.begin, s.end), options.enumeration));
  return result;
}

}  // namespace orch
