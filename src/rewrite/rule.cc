#include "rewrite/rule.h"

#include <algorithm>
#include <unordered_map>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/hash_util.h"
#include "ir/op_registry.h"
#include "rewrite/rule_util.h"

namespace orch::rewrite {

MatchContext::MatchContext(const Graph& graph)
    : graph_(graph), consumers_(graph.consumers()), is_output_(graph.num_values(), false) {
  for (ValueId o : graph.outputs()) is_output_[o] = true;
}

const Node* MatchContext::producer(ValueId v) const {
  NodeId n = graph_.value(v).producer;
  return n == kNoNode ? nullptr : &graph_.node(n);
}

const Node* MatchContext::producer_if(ValueId v, std::string_view op) const {
  const Node* n = producer(v);
  return n != nullptr && n->op == op ? n : nullptr;
}

bool MatchContext::only_used_by(ValueId v, NodeId n) const {
  return !is_output_[v] && consumers_[v].size() == 1 && consumers_[v][0] == n;
}

bool MatchContext::can_replace_with(ValueId old, ValueId with) const {
  return !is_output_[old] || (graph_.value(with).producer != kNoNode && !is_output_[with]);
}

const Tensor* MatchContext::constant(ValueId v) const {
  return graph_.value(v).is_constant() ? &graph_.value(v).constant : nullptr;
}

NodeId MatchContext::earlier_duplicate(NodeId n) const {
  if (!duplicates_) {
    duplicates_.emplace(graph_.num_nodes(), kNoNode);
    // Nodes with the same op and inputs (by hash), then compared exactly.
    std::unordered_map<uint64_t, std::vector<NodeId>> groups;
    for (NodeId m = 0; m < static_cast<NodeId>(graph_.num_nodes()); ++m) {
      const Node& node = graph_.node(m);
      uint64_t key = hash_string(node.op);
      for (ValueId in : node.inputs) key = hash_combine(key, static_cast<uint64_t>(in + 1));
      auto& group = groups[key];
      for (NodeId earlier : group) {
        const Node& e = graph_.node(earlier);
        const Attributes& a = e.attrs;
        bool same = e.op == node.op && e.inputs == node.inputs && a.size() == node.attrs.size() &&
                    std::equal(a.begin(), a.end(), node.attrs.begin(), [](auto& x, auto& y) {
                      return x.first == y.first && attr_equal(x.second, y.second);
                    });
        if (same) {
          (*duplicates_)[m] = earlier;
          break;
        }
      }
      if ((*duplicates_)[m] == kNoNode) group.push_back(m);
    }
  }
  return (*duplicates_)[n];
}

std::span<const RewriteRule> all_rules() {
  static const RuleTable kRules = [] {
    RuleTable rules;
    add_cleanup_rules(rules);
    add_attention_rules(rules);
    add_layout_rules(rules);
    add_folding_rules(rules);
    add_linear_rules(rules);
    return rules;
  }();
  return kRules;
}

const RewriteRule* find_rule(std::string_view name) {
  for (const RewriteRule& rule : all_rules())
    if (rule.name == name) return &rule;
  return nullptr;
}

std::optional<Graph> apply_rule(const RewriteRule& rule, const Graph& graph,
                                const MatchContext& ctx, NodeId root) {
  Patch patch(graph);
  rule.apply(ctx, root, patch);
  return apply_patch(graph, patch);
}

std::vector<NodeId> matches(const RewriteRule& rule, const MatchContext& ctx) {
  std::vector<NodeId> result;
  for (NodeId n = 0; n < static_cast<NodeId>(ctx.graph().num_nodes()); ++n)
    if ((rule.root_op.empty() || ctx.node(n).op == rule.root_op) && rule.guard(ctx, n))
      result.push_back(n);
  return result;
}

std::string_view ew_fn(const Node& node) {
  if (node.op != "prim.Elementwise") return "";
  auto it = node.attrs.find("fn");
  return it == node.attrs.end() ? "" : std::string_view(std::get<std::string>(it->second));
}

bool is_ew(const Node& node, std::string_view fn) {
  return ew_fn(node) == fn;
}

bool all_equal(const Tensor& t, double v) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.get(i) != v) return false;
  return true;
}

Tensor filled(const TensorType& type, double v) {
  Tensor t(type.dtype, type.shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, v);
  return t;
}

Tensor evaluate(const std::string& op, const Attributes& attrs, std::vector<Tensor> inputs) {
  const OpSchema* schema = find_op(op);
  check(schema != nullptr && schema->infer != nullptr, "unknown op '{}'", op);
  InferInput in{attrs, {}, {}, 1};
  for (const Tensor& t : inputs) {
    in.types.emplace_back(TensorType{t.dtype(), t.shape()});
    in.values.push_back(&t);
  }
  std::vector<TensorType> types = schema->infer(in);
  return interp::run_op(op, attrs, std::move(inputs), types).at(0);
}

Shape random_shape(std::mt19937& rng, int rank, int64_t lo, int64_t hi) {
  Shape shape;
  for (int i = 0; i < rank; ++i) shape.push_back(random_int(rng, lo, hi));
  return shape;
}

int64_t random_int(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

ValueId random_constant(Builder& b, std::mt19937& rng, const TensorType& type) {
  return b.constant(interp::random_tensor(type, rng()));
}

}  // namespace orch::rewrite
