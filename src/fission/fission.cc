// The fission driver: walks the operator graph in order, applies the first rule whose op and
// guard match each node, and copies every other node unchanged (Opaque ops, ops without a rule).
// A final copy gives each primitive that computes an operator output that output's name.
#include "fission/fission.h"

#include <unordered_map>

#include "fission/rule.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/prim.h"

namespace orch::fission {
namespace {

RuleTable build_rules() {
  RuleTable rules;
  add_elementwise_rules(rules);
  add_reduce_rules(rules);
  add_normalization_rules(rules);
  add_linear_rules(rules);
  add_pooling_rules(rules);
  add_layout_rules(rules);
  add_indexing_rules(rules);
  add_generator_rules(rules);
  add_quantize_rules(rules);
  return rules;
}

// Operators with no rule on purpose: their semantics need a primitive orch does not have.
constexpr std::pair<std::string_view, std::string_view> kNoRule[] = {
    {"GatherND", "multi-axis data-dependent gather"},
    {"ScatterElements", "data-dependent scatter"},
    {"ScatterND", "data-dependent scatter"},
    {"MaxUnpool", "data-dependent scatter"},
    {"ConvInteger", "quantized linear op (integer accumulation with zero points)"},
    {"MatMulInteger", "quantized linear op (integer accumulation with zero points)"},
    {"QLinearConv", "quantized linear op (requantization)"},
    {"QLinearMatMul", "quantized linear op (requantization)"},
    {"DynamicQuantizeLinear", "its scale comes from reductions of the data, with a case for 0 / 0"},
    {"GridSample", "data-dependent gather (sampling at the grid's coordinates)"},
    {"RoiAlign", "data-dependent gather (sampling at the regions' coordinates)"},
    {"NegativeLogLikelihoodLoss", "a training loss: data-dependent gather of the target class"},
    {"SoftmaxCrossEntropyLoss", "a training loss: data-dependent gather of the target class"},
};

// The rule for the node, or nullptr with the reason it is kept whole.
const FissionRule* find_rule(const RuleContext& ctx, std::string& why) {
  why = "no fission rule";
  for (const FissionRule& rule : all_rules()) {
    if (rule.op != ctx.node().op) continue;
    if (rule.guard == nullptr || rule.guard(ctx)) return &rule;
    why = fmt::format("rule declined: {}", rule.declined);
  }
  for (const auto& [op, reason] : kNoRule)
    if (op == ctx.node().op) why = std::string(reason);
  return nullptr;
}

// Copies `g`, naming values by `names` where given, so operator outputs keep their names.
Graph copy_with_names(const Graph& g, const std::unordered_map<ValueId, std::string>& names) {
  Graph out;
  out.name = g.name;
  std::vector<ValueId> map(g.num_values(), kNoValue);
  for (ValueId v : g.inputs()) map[v] = out.add_input(g.value(v).name, g.value(v).type);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (g.value(v).is_constant()) map[v] = out.add_constant(g.value(v).name, g.value(v).constant);
  auto name_of = [&](ValueId v) {
    auto it = names.find(v);
    return it != names.end() ? it->second : g.value(v).name;
  };
  for (const Node& n : g.nodes()) copy_node(out, g, n, map, name_of);
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs()) outputs.push_back(map[v]);
  out.set_outputs(outputs);
  return out;
}

}  // namespace

std::span<const FissionRule> all_rules() {
  static const RuleTable kRules = build_rules();
  return kRules;
}

Graph fission(const Graph& graph, const FissionOptions& options, FissionReport* report) {
  Graph target;
  target.name = graph.name;
  std::vector<ValueId> map(graph.num_values(), kNoValue);
  for (ValueId v : graph.inputs())
    map[v] = target.add_input(graph.value(v).name, graph.value(v).type);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant())
      map[v] = target.add_constant(graph.value(v).name, graph.value(v).constant);

  FissionReport local;
  // Target values computing an operator output get that output's name in the final copy.
  std::unordered_map<ValueId, std::string> names;
  std::vector<NodeId> origin;  // per target node
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& node = graph.node(n);
    std::vector<ValueId> inputs;
    for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? kNoValue : map[v]);
    RuleContext ctx(graph, n, target, inputs);
    const OpSchema* schema = find_op(node.op);
    bool opaque = schema != nullptr && schema->category == Category::Opaque;
    std::string why = "Opaque";
    const FissionRule* rule = prim::is_primitive(node.op) || opaque ? nullptr : find_rule(ctx, why);
    std::vector<ValueId> results;
    if (rule != nullptr) {
      try {
        results = rule->build(ctx);
      } catch (const Error& e) {
        rethrow_with_context(e, fmt::format("fission of {}", graph.describe(n)));
      }
      check(results.size() == node.outputs.size(), "fission of {}: rule gave {} outputs for {}",
            graph.describe(n), results.size(), node.outputs.size());
      ++local.rewritten;
    } else {
      if (!prim::is_primitive(node.op)) {
        if (!opaque && !options.keep_unmatched)
          unsupported("fission of {}: {}", graph.describe(n), why);
        local.kept.push_back(fmt::format("{}: {}", graph.describe(n), why));
      }
      std::vector<std::string> out_names;
      std::vector<TensorType> types;
      for (ValueId v : node.outputs) {
        out_names.push_back(target.fresh_name("fission.kept"));
        types.push_back(graph.value(v).type);
      }
      NodeId copy = target.add_node(node.op, inputs, node.attrs, out_names, types, node.name);
      results = target.node(copy).outputs;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      ValueId r = results[i];
      if (r == kNoValue) continue;
      check(target.value(r).type == graph.value(node.outputs[i]).type,
            "fission of {}: output {} is {}, the operator's is {}", graph.describe(n), i,
            format_type(target.value(r).type), format_type(graph.value(node.outputs[i]).type));
      map[node.outputs[i]] = r;
      if (target.value(r).producer != kNoNode) names.emplace(r, graph.value(node.outputs[i]).name);
    }
    origin.resize(target.num_nodes(), n);
  }

  // A graph output whose value now has another name gets an identity primitive of its name.
  std::vector<ValueId> outputs;
  for (ValueId v : graph.outputs()) {
    ValueId r = map[v];
    check(r != kNoValue, "fission: graph output '{}' was not computed", graph.value(v).name);
    auto it = names.find(r);
    const std::string& name = graph.value(v).name;
    bool named = it != names.end() ? it->second == name : target.value(r).name == name;
    if (!named) {
      // An operator's output (or a graph input or constant, read by no operator) renamed.
      const NodeId producer = target.value(r).producer;
      Builder b(target);
      r = b.op("prim.Elementwise", {r}, {{"fn", std::string("identity")}},
               target.fresh_name("fission.out"));
      names.emplace(r, name);
      origin.push_back(producer != kNoNode ? origin[producer] : kNoNode);
    }
    outputs.push_back(r);
  }
  target.set_outputs(outputs);
  Graph named = copy_with_names(target, names);
  Graph result = remove_dead_code(named);
  // Value names are unique and survive both copies: a node's first output finds its origin.
  std::unordered_map<std::string, NodeId> by_name;
  for (NodeId n = 0; n < static_cast<NodeId>(named.num_nodes()); ++n)
    by_name.emplace(named.value(named.node(n).outputs.front()).name, origin[n]);
  for (const Node& n : result.nodes())
    local.origin.push_back(by_name.at(result.value(n.outputs.front()).name));
  if (report != nullptr) *report = std::move(local);
  return result;
}

}  // namespace orch::fission
