// Folding rules (BatchNorm-style scale and shift): a constant per-column scale after a MatMul,
// or per-channel scale after a Conv, folds into the constant weight; a scale moves past a
// constant bias; two constant biases add up.
#include "rewrite/rule_util.h"

namespace orch::rewrite {
namespace {

Attributes fn_attr(const std::string& fn) {
  return {{"fn", fn}};
}

// A constant operand of an elementwise op, seen through a Broadcast: the constant before
// broadcasting (same rank as the output, or rank 0), or nullptr.
const Tensor* broadcast_constant(const MatchContext& ctx, ValueId v) {
  if (const Tensor* t = ctx.constant(v)) return t->rank() == 0 ? t : nullptr;
  const Node* bc = ctx.producer_if(v, "prim.Broadcast");
  return bc == nullptr ? nullptr : ctx.constant(bc->inputs[0]);
}

// For scale_into_linear at Mul/Div node `n`: the slot of the linear node's output (the other
// slot is the scale), or -1.
int linear_slot(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  if (node.inputs.size() != 2 || !(is_ew(node, "mul") || is_ew(node, "div"))) return -1;
  DType dt = ctx.type(node.outputs[0]).dtype;
  if (dt != DType::f32 && dt != DType::f64) return -1;
  for (int slot = 0; slot < (is_ew(node, "mul") ? 2 : 1); ++slot) {
    ValueId y = node.inputs[slot];
    const Node* lin = ctx.producer(y);
    const Tensor* c = broadcast_constant(ctx, node.inputs[1 - slot]);
    if (lin == nullptr || (lin->op != "prim.MatMul" && lin->op != "prim.Conv") || c == nullptr ||
        !ctx.only_used_by(y, n) || ctx.constant(lin->inputs[1]) == nullptr)
      continue;
    const Shape& out = ctx.type(y).shape;
    // The scale must vary only along the weight's output axis: MatMul's last, Conv's dim 1.
    size_t axis = lin->op == "prim.MatMul" ? out.size() - 1 : 1;
    bool per_axis = true;
    for (size_t d = 0; d < static_cast<size_t>(c->rank()); ++d)
      per_axis = per_axis && (c->shape()[d] == 1 || d == axis);
    if (per_axis) return slot;
  }
  return -1;
}

bool scale_linear_guard(const MatchContext& ctx, NodeId n) {
  return linear_slot(ctx, n) >= 0;
}

void scale_linear_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& node = ctx.node(n);
  int slot = linear_slot(ctx, n);
  const Node& lin = *ctx.producer(node.inputs[slot]);
  const Tensor& w = *ctx.constant(lin.inputs[1]);
  Tensor c = *broadcast_constant(ctx, node.inputs[1 - slot]);
  if (c.rank() > 0) {
    // Align the scale with the weight's output axis: MatMul W[.., K, N] scales columns (the
    // output's last axis); Conv W[M, C/g, k..] scales dim 0 (the output's channel axis).
    Shape shape(w.rank(), 1);
    if (lin.op == "prim.MatMul") {
      shape.back() = c.shape().back();
      for (int d = 0; d + 2 < c.rank(); ++d) shape[d] = c.shape()[d];
    } else {
      shape[0] = c.shape()[1];
    }
    c = c.reshaped(shape);
  }
  std::string op = is_ew(node, "mul") ? "Mul" : "Div";
  Tensor scaled = evaluate(op, {}, {w, c});
  p.replace(node.outputs[0], p.op(lin.op, {p.value(lin.inputs[0]), p.constant(scaled)}, lin.attrs));
}

Graph scale_linear_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  ValueId y;
  Shape scale;
  bool conv = random_int(rng, 0, 1) == 0;
  if (conv) {
    int64_t c = random_int(rng, 1, 3), m = random_int(rng, 1, 4), k = random_int(rng, 1, 3);
    ValueId x = b.input("x", {DType::f32, {1, c, 5, 5}});
    ValueId w = random_constant(b, rng, {DType::f32, {m, c, k, k}});
    y = b.op("prim.Conv", {x, w},
             {{"strides", std::vector<int64_t>{1, 1}},
              {"dilations", std::vector<int64_t>{1, 1}},
              {"pads", std::vector<int64_t>{0, 0, 0, 0}}});
    scale = {1, m, 1, 1};
  } else {
    int64_t m = random_int(rng, 1, 4), k = random_int(rng, 1, 4), n = random_int(rng, 1, 4);
    ValueId x = b.input("x", {DType::f32, {2, m, k}});
    y = b.op("prim.MatMul", {x, random_constant(b, rng, {DType::f32, {2, k, n}})});
    scale = {1, 1, n};
  }
  ValueId s = b.op("prim.Broadcast", {random_constant(b, rng, {DType::f32, scale})},
                   {{"shape", b.type(y).shape}});
  if (random_int(rng, 0, 3) == 0) s = b.constant(Tensor::scalar(DType::f32, 0.75));
  std::string fn = random_int(rng, 0, 1) == 0 ? "mul" : "div";
  bool swap = fn == "mul" && random_int(rng, 0, 1) == 0;
  ValueId z = b.op("prim.Elementwise", swap ? std::vector{s, y} : std::vector{y, s}, fn_attr(fn));
  b.output(b.op("prim.Elementwise", {z}, fn_attr("neg")));
  return g;
}

// --- scale_past_bias --------------------------------------------------------------------------

// Mul(Add(y, B(b)), B(c)) with constant b, c: the Add node, or nullptr.
const Node* biased(const MatchContext& ctx, NodeId n, int* scale_slot) {
  const Node& node = ctx.node(n);
  if (!is_ew(node, "mul") || node.inputs.size() != 2) return nullptr;
  for (int slot = 0; slot < 2; ++slot) {
    const Node* add = ctx.producer(node.inputs[1 - slot]);
    if (add == nullptr || !is_ew(*add, "add") || !ctx.only_used_by(node.inputs[1 - slot], n) ||
        broadcast_constant(ctx, node.inputs[slot]) == nullptr ||
        ctx.type(add->inputs[0]) != ctx.type(add->outputs[0]))
      continue;
    if (broadcast_constant(ctx, add->inputs[1]) != nullptr) {
      *scale_slot = slot;
      return add;
    }
  }
  return nullptr;
}

bool scale_bias_guard(const MatchContext& ctx, NodeId n) {
  int slot = 0;
  return biased(ctx, n, &slot) != nullptr;
}

void scale_bias_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& node = ctx.node(n);
  int slot = 0;
  const Node& add = *biased(ctx, n, &slot);
  const Tensor& bias = *broadcast_constant(ctx, add.inputs[1]);
  const Tensor& scale = *broadcast_constant(ctx, node.inputs[slot]);
  Tensor product = evaluate("Mul", {}, {bias, scale});
  Ref scaled = p.op("prim.Elementwise", {p.value(add.inputs[0]), p.value(node.inputs[slot])},
                    fn_attr("mul"));
  Ref b = p.constant(product);
  if (product.rank() > 0) b = p.op("prim.Broadcast", {b}, {{"shape", p.shape(scaled)}});
  p.replace(node.outputs[0], p.op("prim.Elementwise", {scaled, b}, fn_attr("add")));
}

ValueId random_row(Builder& b, std::mt19937& rng, const Shape& shape) {
  Shape row(shape.size(), 1);
  row.back() = shape.back();
  return b.op("prim.Broadcast", {random_constant(b, rng, {DType::f32, row})}, {{"shape", shape}});
}

Graph scale_bias_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 1, 3)));
  ValueId y = b.op("prim.Elementwise", {b.input("y", {DType::f32, shape})}, fn_attr("relu"));
  ValueId a = b.op("prim.Elementwise", {y, random_row(b, rng, shape)}, fn_attr("add"));
  ValueId m = b.op("prim.Elementwise", {a, random_row(b, rng, shape)}, fn_attr("mul"));
  b.output(b.op("prim.Elementwise", {m}, fn_attr("neg")));
  return g;
}

// --- add_constants ----------------------------------------------------------------------------

// Add(Add(y, B(b1)), B(b2)): the inner Add, or nullptr.
const Node* double_bias(const MatchContext& ctx, NodeId n) {
  const Node& node = ctx.node(n);
  if (!is_ew(node, "add") || node.inputs.size() != 2 ||
      broadcast_constant(ctx, node.inputs[1]) == nullptr)
    return nullptr;
  const Node* inner = ctx.producer(node.inputs[0]);
  if (inner == nullptr || !is_ew(*inner, "add") || !ctx.only_used_by(node.inputs[0], n) ||
      broadcast_constant(ctx, inner->inputs[1]) == nullptr ||
      ctx.type(inner->inputs[0]) != ctx.type(inner->outputs[0]))
    return nullptr;
  return inner;
}

bool add_constants_guard(const MatchContext& ctx, NodeId n) {
  return double_bias(ctx, n) != nullptr;
}

void add_constants_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& node = ctx.node(n);
  const Node& inner = *double_bias(ctx, n);
  Tensor sum = evaluate(
      "Add", {},
      {*broadcast_constant(ctx, inner.inputs[1]), *broadcast_constant(ctx, node.inputs[1])});
  Ref b = p.constant(sum);
  if (sum.rank() > 0) b = p.op("prim.Broadcast", {b}, {{"shape", ctx.type(node.outputs[0]).shape}});
  p.replace(node.outputs[0],
            p.op("prim.Elementwise", {p.value(inner.inputs[0]), b}, fn_attr("add")));
}

Graph add_constants_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  Shape shape = random_shape(rng, static_cast<int>(random_int(rng, 1, 3)));
  ValueId y = b.op("prim.Elementwise", {b.input("y", {DType::f32, shape})}, fn_attr("relu"));
  ValueId a = b.op("prim.Elementwise", {y, random_row(b, rng, shape)}, fn_attr("add"));
  ValueId c = random_int(rng, 0, 1) == 0 ? random_row(b, rng, shape)
                                         : b.constant(Tensor::scalar(DType::f32, 0.25));
  b.output(
      b.op("prim.Elementwise", {b.op("prim.Elementwise", {a, c}, fn_attr("add"))}, fn_attr("neg")));
  return g;
}

}  // namespace

void add_folding_rules(RuleTable& rules) {
  rules.push_back({"scale_into_linear", "folding",
                   "(X·W)·c = X·(W·c) for a constant W and a constant scale c (scalar, or "
                   "varying only along the output's column axis for MatMul / channel axis for "
                   "Conv, broadcast); also / c; the product has no other use; float",
                   "prim.Elementwise", scale_linear_guard, scale_linear_apply, scale_linear_sample,
                   true});
  rules.push_back({"scale_past_bias", "folding",
                   "(y + b)·c = y·c + (b·c) for constants b, c (broadcast); the sum has no other "
                   "use",
                   "prim.Elementwise", scale_bias_guard, scale_bias_apply, scale_bias_sample});
  rules.push_back({"add_constants", "folding",
                   "(y + b1) + b2 = y + (b1 + b2) for constants b1, b2 (broadcast); the inner sum "
                   "has no other use",
                   "prim.Elementwise", add_constants_guard, add_constants_apply,
                   add_constants_sample, true});
}

}  // namespace orch::rewrite
