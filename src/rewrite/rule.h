// A rewrite rule: {name, guard, apply, sample}, as data. The guard looks at one node (the
// rule's root) and its neighbourhood and says whether the substitution is legal there; apply
// builds the replacement as a Patch. Each rule states its legality condition in words (shown by
// `orch rewrite --list-rules` and checked by the registry-wide test with its sampler).
//
// Rule families, one file each: cleanup (folding constants, identities, CSE), attention (Korch
// Fig. 2b), layout (Transpose/Reshape canonicalization), folding (scales and shifts into
// linear weights), linear (pointwise convolutions before upsamplings and over concatenations).
#pragma once

#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "rewrite/patch.h"

namespace orch::rewrite {

/// What a guard sees: the graph, its consumers and which values are graph outputs.
class MatchContext {
 public:
  explicit MatchContext(const Graph& graph);

  const Graph& graph() const { return graph_; }
  const Node& node(NodeId n) const { return graph_.node(n); }
  const Value& value(ValueId v) const { return graph_.value(v); }
  const TensorType& type(ValueId v) const { return graph_.value(v).type; }
  /// The node producing `v`, nullptr for inputs and constants.
  const Node* producer(ValueId v) const;
  /// The producer of `v` when it is `op`, else nullptr.
  const Node* producer_if(ValueId v, std::string_view op) const;
  const std::vector<NodeId>& consumers(ValueId v) const { return consumers_[v]; }
  bool is_output(ValueId v) const { return is_output_[v]; }
  /// Whether `v` is read only by `n` (once) and is not a graph output.
  bool only_used_by(ValueId v, NodeId n) const;
  /// Whether `old` may be replaced by the existing value `with`: a graph output keeps its name,
  /// so it cannot become a graph input, a constant or another graph output.
  bool can_replace_with(ValueId old, ValueId with) const;
  /// The contents of `v` when it is a constant, nullptr otherwise.
  const Tensor* constant(ValueId v) const;
  /// An earlier node computing the same op on the same inputs with the same attributes
  /// (common subexpressions), kNoNode when none.
  NodeId earlier_duplicate(NodeId n) const;

 private:
  const Graph& graph_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<bool> is_output_;
  mutable std::optional<std::vector<NodeId>> duplicates_;
};

/// A random graph on which the rule's guard holds at some node, for the registry-wide test.
using SampleFn = Graph (*)(std::mt19937& rng);

struct RewriteRule {
  std::string_view name;
  /// "cleanup", "attention", "layout", "folding" or "linear".
  std::string_view family;
  /// When the substitution is legal, in words.
  std::string_view legality;
  /// Only nodes of this op are tried as the root ("" tries every node).
  std::string_view root_op;
  bool (*guard)(const MatchContext& ctx, NodeId root) = nullptr;
  /// Builds the replacement; called only where the guard holds.
  void (*apply)(const MatchContext& ctx, NodeId root, Patch& patch) = nullptr;
  SampleFn sample = nullptr;
  /// Rules that never increase cost run greedily (before the search and after each step).
  bool cleanup = false;
};

using RuleTable = std::vector<RewriteRule>;

/// Every rule, family by family.
std::span<const RewriteRule> all_rules();
/// The rule named `name`, nullptr when none.
const RewriteRule* find_rule(std::string_view name);

void add_cleanup_rules(RuleTable& rules);
void add_attention_rules(RuleTable& rules);
void add_layout_rules(RuleTable& rules);
void add_folding_rules(RuleTable& rules);
void add_linear_rules(RuleTable& rules);

/// Applies `rule` at `root` (the guard must hold): nullopt when the patch cannot apply.
std::optional<Graph> apply_rule(const RewriteRule& rule, const Graph& graph,
                                const MatchContext& ctx, NodeId root);

/// The nodes of `graph` where `rule`'s guard holds.
std::vector<NodeId> matches(const RewriteRule& rule, const MatchContext& ctx);

}  // namespace orch::rewrite
