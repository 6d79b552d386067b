#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/hash_util.h"
#include "rewrite/rewrite.h"
#include "rewrite/rule.h"

namespace orch::rewrite {
namespace {

using Applied = std::map<std::string, int>;

// Structural hash for deduplication; constant contents are hashed once per buffer (constants
// never change, and the cache keeps each buffer alive, so an address is never reused by other
// contents).
class Hasher {
 public:
  uint64_t operator()(const Graph& graph) {
    std::vector<uint64_t> h(graph.num_values(), 0);
    for (size_t i = 0; i < graph.inputs().size(); ++i) h[graph.inputs()[i]] = hash_combine(1, i);
    for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
      if (graph.value(v).is_constant()) h[v] = constant_hash(graph.value(v).constant);
    std::vector<uint64_t> nodes;
    for (const Node& node : graph.nodes()) {
      uint64_t nh = hash_string(node.op);
      for (const auto& [name, value] : node.attrs)
        nh = hash_combine(hash_combine(nh, hash_string(name)), attr_hash(value));
      for (ValueId in : node.inputs) nh = hash_combine(nh, in == kNoValue ? 7 : h[in]);
      for (size_t i = 0; i < node.outputs.size(); ++i) h[node.outputs[i]] = hash_combine(nh, i);
      nodes.push_back(nh);
    }
    std::sort(nodes.begin(), nodes.end());
    uint64_t result = 0x5eed;
    for (uint64_t nh : nodes) result = hash_combine(result, nh);
    for (ValueId out : graph.outputs()) result = hash_combine(result, h[out]);
    return result;
  }

 private:
  uint64_t constant_hash(const Tensor& t) {
    auto it = cache_.find(t.bytes());
    uint64_t bytes_hash = 0;
    if (it != cache_.end() && it->second.first.nbytes() == t.nbytes()) {
      bytes_hash = it->second.second;
    } else {
      bytes_hash = hash_bytes(t.bytes(), t.nbytes());
      cache_[t.bytes()] = {t, bytes_hash};
    }
    uint64_t h = hash_combine(bytes_hash, static_cast<uint64_t>(t.dtype()));
    for (int64_t d : t.shape()) h = hash_combine(h, static_cast<uint64_t>(d));
    return h;
  }

  static uint64_t attr_hash(const AttrValue& value) {
    return std::visit(
        [](const auto& x) -> uint64_t {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            return hash_combine(2, static_cast<uint64_t>(x));
          } else if constexpr (std::is_same_v<T, float>) {
            return hash_combine(3, std::hash<float>()(x));
          } else if constexpr (std::is_same_v<T, std::string>) {
            return hash_string(x);
          } else if constexpr (std::is_same_v<T, Tensor>) {
            return x.content_hash();
          } else {
            uint64_t h = hash_combine(5, x.size());
            for (const auto& e : x) h = hash_combine(h, attr_hash(AttrValue(e)));
            return h;
          }
        },
        value);
  }

  std::unordered_map<const std::byte*, std::pair<Tensor, uint64_t>> cache_;
};

class Search {
 public:
  explicit Search(const RewriteOptions& options) : options_(options) {
    for (const RewriteRule& rule : all_rules())
      if (std::find(options.disabled.begin(), options.disabled.end(), rule.name) ==
          options.disabled.end())
        (rule.cleanup ? cleanup_rules_ : search_rules_).push_back(&rule);
    start_ = std::chrono::steady_clock::now();
  }

  double cost(const Graph& g) const {
    return options_.cost_fn ? options_.cost_fn(g) : analytic_cost(g, options_.cost);
  }

  // One application of `rule` at `root`, or nullopt (guard failed, patch refused, or no fuel).
  std::optional<Graph> apply(const RewriteRule& rule, const Graph& g, const MatchContext& ctx,
                             NodeId root) {
    if (options_.fuel >= 0 && report_.fuel_used >= options_.fuel) return std::nullopt;
    ++report_.fuel_used;
    try {
      std::optional<Graph> result = apply_rule(rule, g, ctx, root);
      if (!result) ++report_.rejected;
      return result;
    } catch (const Error&) {
      ++report_.rejected;
      return std::nullopt;
    }
  }

  // Cleanup rules, greedily, to a fixpoint; each round applies one rule at all its matches in
  // one patch (each replacement equals the value it replaces, and new nodes read the original
  // values, so the replacements compose), falling back to a single match if the batch is
  // refused. A round must not raise the cost.
  Graph cleanup(Graph g, Applied& applied) {
    double c = cost(g);
    bool changed = true;
    while (changed && !out_of_fuel()) {
      changed = false;
      MatchContext ctx(g);
      for (const RewriteRule* rule : cleanup_rules_) {
        std::vector<NodeId> roots = matches(*rule, ctx);
        if (roots.empty()) continue;
        int used = 0;
        std::optional<Graph> next = apply_batch(*rule, g, ctx, roots, used);
        if (!next && roots.size() > 1) next = apply_batch(*rule, g, ctx, {roots[0]}, used);
        if (!next) continue;
        double nc = cost(*next);
        if (nc > c) continue;
        g = std::move(*next);
        c = nc;
        applied[std::string(rule->name)] += used;
        changed = true;
        break;
      }
    }
    return g;
  }

  // `rule` at each of `roots` whose outputs no earlier root replaced, as one patch; `used` is
  // the number applied (each takes one unit of fuel).
  std::optional<Graph> apply_batch(const RewriteRule& rule, const Graph& g, const MatchContext& ctx,
                                   const std::vector<NodeId>& roots, int& used) {
    Patch patch(g);
    std::unordered_set<ValueId> replaced;
    used = 0;
    try {
      for (NodeId root : roots) {
        if (out_of_fuel()) break;
        const Node& node = ctx.node(root);
        if (std::any_of(node.outputs.begin(), node.outputs.end(),
                        [&](ValueId o) { return replaced.contains(o); }))
          continue;
        ++report_.fuel_used;
        ++used;
        rule.apply(ctx, root, patch);
        for (const auto& [old, with] : patch.replacements()) replaced.insert(old);
      }
    } catch (const Error&) {
      ++report_.rejected;
      return std::nullopt;
    }
    if (used == 0) return std::nullopt;
    std::optional<Graph> result = apply_patch(g, patch);
    if (!result) ++report_.rejected;
    return result;
  }

  Graph run(const Graph& input) {
    report_.cost_before = cost(input);
    Applied applied;
    Graph best = cleanup(input, applied);
    double best_cost = cost(best);
    Applied best_applied = applied;
    if (best_cost > report_.cost_before) {
      best = input;
      best_cost = report_.cost_before;
      best_applied.clear();
    }
    if (options_.search) {
      struct State {
        double cost;
        int64_t order;
        std::shared_ptr<Graph> graph;
        Applied applied;
      };
      auto later = [](const State& a, const State& b) {
        return a.cost != b.cost ? a.cost > b.cost : a.order > b.order;
      };
      std::priority_queue<State, std::vector<State>, decltype(later)> queue(later);
      std::unordered_set<uint64_t> seen{hasher_(best)};
      int64_t order = 0;
      queue.push({best_cost, order++, std::make_shared<Graph>(best), best_applied});
      while (!queue.empty() && report_.steps < options_.max_steps && !out_of_time() &&
             !out_of_fuel()) {
        State state = queue.top();
        queue.pop();
        ++report_.steps;
        // Candidates are queued as the rule left them; a state is cleaned up when expanded.
        int before = total(state.applied);
        Graph g = cleanup(*state.graph, state.applied);
        if (total(state.applied) != before) {
          if (!seen.insert(hasher_(g)).second) continue;
          double c = cost(g);
          if (c < best_cost) {
            best = g;
            best_cost = c;
            best_applied = state.applied;
          }
        }
        MatchContext ctx(g);
        for (const RewriteRule* rule : search_rules_) {
          for (NodeId n : matches(*rule, ctx)) {
            std::optional<Graph> next = apply(*rule, g, ctx, n);
            if (!next || !seen.insert(hasher_(*next)).second) continue;
            ++report_.graphs;
            Applied next_applied = state.applied;
            ++next_applied[std::string(rule->name)];
            double c = cost(*next);
            if (c < best_cost) {
              best = *next;
              best_cost = c;
              best_applied = next_applied;
            }
            if (c < options_.alpha * best_cost)
              queue.push(
                  {c, order++, std::make_shared<Graph>(std::move(*next)), std::move(next_applied)});
          }
        }
      }
      // The best graph may be a candidate never expanded: clean it up too.
      Applied applied_after = best_applied;
      Graph cleaned = cleanup(best, applied_after);
      double c = cost(cleaned);
      if (c <= best_cost) {
        best = std::move(cleaned);
        best_cost = c;
        best_applied = std::move(applied_after);
      }
    }
    report_.applied = best_applied;
    report_.cost_after = best_cost;
    return best;
  }

  const RewriteReport& report() const { return report_; }

 private:
  static int total(const Applied& applied) {
    int n = 0;
    for (const auto& [rule, count] : applied) n += count;
    return n;
  }
  bool out_of_fuel() const { return options_.fuel >= 0 && report_.fuel_used >= options_.fuel; }
  bool out_of_time() const {
    std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    return elapsed.count() > options_.max_seconds;
  }

  const RewriteOptions& options_;
  std::vector<const RewriteRule*> cleanup_rules_, search_rules_;
  RewriteReport report_;
  Hasher hasher_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

Graph rewrite(const Graph& graph, const RewriteOptions& options, RewriteReport* report) {
  Search search(options);
  Graph result = search.run(graph);
  if (report != nullptr) *report = search.report();
  return result;
}

int64_t fuel_from_env() {
  const char* text = std::getenv("ORCH_REWRITE_FUEL");
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  long long fuel = std::strtoll(text, &end, 10);
  return *end == '\0' && fuel >= 0 ? fuel : -1;
}

}  // namespace orch::rewrite
