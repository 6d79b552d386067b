// Epilogue matching: each oneDNN post-op is a small expression pattern over prim.Elementwise
// nodes (the shapes fission gives the activations), matched backwards from the kernel output.
// `X` is the value the post-op applies to; add, mul, min and max match either operand order.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "codegen/dnnl/dnnl_plan.h"

namespace orch::codegen::dnnl_plan {
namespace {

struct Pat {
  enum Kind { kX, kConst, kCapture, kOther, kFn } kind;
  std::string_view fn = "";
  double value = 0;  // kConst: the expected scalar; kCapture: the slot
  std::vector<Pat> args = {};
};

Pat X() {
  return {Pat::kX};
}
Pat c(double v) {
  return {Pat::kConst, "", v};
}
Pat cap(int slot) {
  return {Pat::kCapture, "", static_cast<double>(slot)};
}
Pat other() {
  return {Pat::kOther};
}
Pat f(std::string_view fn, std::vector<Pat> args) {
  return {Pat::kFn, fn, 0, std::move(args)};
}

struct Match {
  ValueId x = kNoValue;
  double caps[2] = {0, 0};
  View other;
  std::vector<NodeId> nodes;   // elementwise nodes, the root first
  std::vector<NodeId> layout;  // nodes of the binary operand's view
};

bool scalar_of(const Graph& g, ValueId v, double& out) {
  const Value& value = g.value(v);
  if (!value.is_constant() || value.constant.numel() != 1) return false;
  out = value.constant.get(0);
  return true;
}

bool match(const Graph& g, const Pat& p, ValueId v, Match& m) {
  switch (p.kind) {
    case Pat::kX:
      if (m.x == kNoValue) m.x = v;
      return m.x == v;
    case Pat::kConst: {
      double s;
      return scalar_of(g, v, s) && std::abs(s - p.value) <= 1e-6 * std::max(1.0, std::abs(p.value));
    }
    case Pat::kCapture:
      return scalar_of(g, v, m.caps[static_cast<int>(p.value)]);
    case Pat::kOther:
      return m.other.source == kNoValue && view_of(g, v, m.other, m.layout).empty();
    case Pat::kFn:
      break;
  }
  NodeId n = g.value(v).producer;
  if (n == kNoNode) return false;
  const Node& node = g.node(n);
  if (node.op != "prim.Elementwise" || attr_string(node.attrs, "fn", "") != p.fn ||
      node.inputs.size() != p.args.size())
    return false;
  bool commutative = p.fn == "add" || p.fn == "mul" || p.fn == "min" || p.fn == "max";
  for (int order = 0; order < (commutative ? 2 : 1); ++order) {
    Match attempt = m;
    attempt.nodes.push_back(n);
    bool ok = true;
    for (size_t i = 0; ok && i < p.args.size(); ++i)
      ok = match(g, p.args[order == 0 ? i : 1 - i], node.inputs[i], attempt);
    if (ok) {
      m = std::move(attempt);
      return true;
    }
  }
  return false;
}

struct Rule {
  Pat pat;
  std::string_view alg;
  // How alpha and beta come from the captures.
  enum Params {
    kNone,
    kAlphaCap,
    kClip,
    kClipLow,
    kClipHigh,
    kScale,
    kShift,
    kUnshift,
    kInvScale,
    kNegate
  };
  Params params = kNone;
};

std::vector<Rule> make_rules() {
  const double s2 = 1 / std::numbers::sqrt2, s2pi = std::sqrt(2 / std::numbers::pi);
  Pat half_x = f("mul", {X(), c(0.5)});
  Pat cube = f("mul", {f("mul", {X(), X()}), X()});
  Pat tanh_inner = f("mul", {f("add", {X(), f("mul", {cube, c(0.044715)})}), c(s2pi)});
  Pat hard_sigmoid =
      f("max", {c(0), f("min", {c(1), f("add", {f("mul", {X(), c(1.0 / 6)}), c(0.5)})})});
  Pat softplus = f("log", {f("add", {f("exp", {X()}), c(1)})});
  std::vector<Rule> rules = {
      {f("mul", {half_x, f("add", {c(1), f("tanh", {tanh_inner})})}), "gelu_tanh"},
      {f("mul", {half_x, f("add", {c(1), f("erf", {f("mul", {X(), c(s2)})})})}), "gelu_erf"},
      {f("mul", {X(), hard_sigmoid}), "hardswish"},
      {f("mul", {X(), f("sigmoid", {f("mul", {X(), cap(0)})})}), "swish", Rule::kAlphaCap},
      {f("mul", {X(), f("sigmoid", {X()})}), "swish", Rule::kNone},
      {f("mul", {X(), f("tanh", {softplus})}), "mish"},
      {softplus, "soft_relu"},
      {f("where",
         {f("less", {X(), c(0)}), f("mul", {f("sub", {f("exp", {X()}), c(1)}), cap(0)}), X()}),
       "elu", Rule::kAlphaCap},
      {f("where", {f("less", {X(), c(0)}), f("mul", {X(), cap(0)}), X()}), "relu", Rule::kAlphaCap},
      {f("min", {f("max", {X(), cap(0)}), cap(1)}), "clip", Rule::kClip},
      {f("relu", {X()}), "relu"},
      {f("sigmoid", {X()}), "logistic"},
      {f("tanh", {X()}), "tanh"},
      {f("exp", {X()}), "exp"},
      {f("log", {X()}), "log"},
      {f("abs", {X()}), "abs"},
      {f("sqrt", {X()}), "sqrt"},
      {f("neg", {X()}), "linear", Rule::kNegate},
      {f("mul", {X(), X()}), "square"},
      {f("max", {X(), cap(0)}), "clip", Rule::kClipLow},
      {f("min", {X(), cap(0)}), "clip", Rule::kClipHigh},
      {f("mul", {X(), cap(0)}), "linear", Rule::kScale},
      {f("div", {X(), cap(0)}), "linear", Rule::kInvScale},
      {f("add", {X(), cap(0)}), "linear", Rule::kShift},
      {f("sub", {X(), cap(0)}), "linear", Rule::kUnshift},
  };
  for (std::string_view fn : {"add", "sub", "mul", "div", "max", "min"})
    rules.push_back({f(fn, {X(), other()}), fn});
  return rules;
}

PostOp post_op(const Rule& rule, const Match& m) {
  PostOp op{std::string(rule.alg)};
  auto a = static_cast<float>(m.caps[0]), b = static_cast<float>(m.caps[1]);
  switch (rule.params) {
    case Rule::kNone:
      op.alpha = rule.alg == "swish" ? 1.0f : 0.0f;
      break;
    case Rule::kAlphaCap:
      op.alpha = a;
      break;
    case Rule::kClip:
      op.alpha = a, op.beta = b;
      break;
    case Rule::kClipLow:
      op.alpha = a, op.beta = FLT_MAX;
      break;
    case Rule::kClipHigh:
      op.alpha = -FLT_MAX, op.beta = a;
      break;
    case Rule::kScale:
      op.alpha = a;
      break;
    case Rule::kInvScale:
      op.alpha = 1 / a;
      break;
    case Rule::kShift:
      op.alpha = 1, op.beta = a;
      break;
    case Rule::kNegate:
      op.alpha = -1;
      break;
    case Rule::kUnshift:
      op.alpha = 1, op.beta = -a;
      break;
  }
  if (m.other.source != kNoValue) {
    op.alg = "binary_" + op.alg;
    op.other = m.other;
  }
  return op;
}

// A post-op's intermediate values must not be read outside it (they are never materialized).
bool self_contained(const Graph& g, const Match& m,
                    const std::vector<std::vector<NodeId>>& consumers) {
  for (size_t i = 1; i < m.nodes.size(); ++i)
    for (ValueId out : g.node(m.nodes[i]).outputs)
      for (NodeId reader : consumers[out])
        if (std::find(m.nodes.begin(), m.nodes.end(), reader) == m.nodes.end()) return false;
  return true;
}

}  // namespace

std::string match_epilogue(const Graph& kernel, ValueId value, ValueId linear_out,
                           std::vector<NodeId>& covered, std::vector<PostOp>& post_ops) {
  static const std::vector<Rule> rules = make_rules();
  std::vector<std::vector<NodeId>> consumers = kernel.consumers();
  std::vector<PostOp> reversed;
  while (value != linear_out) {
    NodeId n = kernel.value(value).producer;
    if (n == kNoNode) return "the kernel output is not computed from the Linear primitive";
    const Node& node = kernel.node(n);
    if (node.op != "prim.Elementwise")
      return fmt::format("{} after the Linear primitive has no oneDNN post-op{}",
                         kernel.describe(n),
                         node.op == "prim.Transpose" || node.op == "prim.Reshape"
                             ? " (only operand layouts are absorbed)"
                             : "");
    const Rule* found = nullptr;
    Match m;
    for (const Rule& rule : rules) {
      m = Match{};
      if (match(kernel, rule.pat, value, m) && self_contained(kernel, m, consumers)) {
        found = &rule;
        break;
      }
    }
    if (found == nullptr)
      return fmt::format("epilogue fn '{}' ({}) has no oneDNN post-op",
                         attr_string(node.attrs, "fn", ""), kernel.describe(n));
    reversed.push_back(post_op(*found, m));
    covered.insert(covered.end(), m.nodes.begin(), m.nodes.end());
    covered.insert(covered.end(), m.layout.begin(), m.layout.end());
    value = m.x;
  }
  post_ops.assign(reversed.rbegin(), reversed.rend());
  return "";
}

}  // namespace orch::codegen::dnnl_plan
