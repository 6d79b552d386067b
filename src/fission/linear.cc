// Fission rules of the linear ops: MatMul with numpy batch broadcasting made explicit, Gemm as
// transposes + MatMul + scaled bias, Conv / ConvTranspose with explicit pads and the bias as a
// broadcast add.
#include <algorithm>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/linear_einsum.h"
#include "ir/ops/linear_window.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

std::vector<ValueId> matmul(RuleContext& ctx) {
  ValueId a = ctx.in(0), b = ctx.in(1);
  Shape sa = ctx.shape_of(a), sb = ctx.shape_of(b);
  if (sa.size() == 1) a = ctx.reshape(a, sa = {1, sa[0]});
  if (sb.size() == 1) b = ctx.reshape(b, sb = {sb[0], 1});
  Shape batch =
      ops::broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  auto full = [&](ValueId v, const Shape& s) {
    Shape target = batch;
    target.insert(target.end(), s.end() - 2, s.end());
    return ctx.broadcast_to(v, target);
  };
  ValueId y = ctx.emit("prim.MatMul", {full(a, sa), full(b, sb)});
  return single(ctx.reshape(y, ctx.out_type().shape));
}

std::vector<ValueId> gemm(RuleContext& ctx) {
  ValueId a = ctx.in(0), b = ctx.in(1);
  if (attr_int(ctx.attrs(), "transA", 0) != 0) a = ctx.transpose(a, {1, 0});
  if (attr_int(ctx.attrs(), "transB", 0) != 0) b = ctx.transpose(b, {1, 0});
  ValueId y = ctx.emit("prim.MatMul", {a, b});
  DType t = ctx.dtype(y);
  float alpha = attr_float(ctx.attrs(), "alpha", 1.0f);
  float beta = attr_float(ctx.attrs(), "beta", 1.0f);
  if (alpha != 1.0f) y = ctx.ew("mul", {y, ctx.scalar(alpha, t)});
  if (ctx.has(2) && beta != 0.0f) {
    ValueId c = ctx.in(2);
    if (beta != 1.0f) c = ctx.ew("mul", {c, ctx.scalar(beta, t)});
    y = ctx.ew("add", {y, c});
  }
  return single(y);
}

// Adds a [M] bias along the channel axis of an [N, M, ...] value.
ValueId add_bias(RuleContext& ctx, ValueId y, ValueId bias) {
  Shape s(ctx.shape_of(y).size(), 1);
  s[1] = ctx.shape_of(bias)[0];
  return ctx.ew("add", {y, ctx.reshape(bias, s)});
}

std::vector<int64_t> concat(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

std::vector<ValueId> conv(RuleContext& ctx) {
  Shape x = ctx.shape_of(ctx.in(0)), w = ctx.shape_of(ctx.in(1));
  ops::Window win =
      ops::forward_window(ctx.attrs(), ops::spatial_dims(x), ops::spatial_dims(w), false);
  Attributes attrs = {{"strides", win.strides},
                      {"dilations", win.dilations},
                      {"pads", concat(win.pad_begin, win.pad_end)},
                      {"group", attr_int(ctx.attrs(), "group", 1)}};
  ValueId y = ctx.emit("prim.Conv", {ctx.in(0), ctx.in(1)}, attrs);
  if (ctx.has(2)) y = add_bias(ctx, y, ctx.in(2));
  return single(y);
}

// prim.ConvTranspose has no output_shape and no negative pads: it runs with the window's pads
// clamped at 0 and the extra end size as output_padding; negative pads (more output than the
// full result, e.g. SAME with output_padding) become zero padding of the result.
std::vector<ValueId> conv_transpose(RuleContext& ctx) {
  Shape x = ctx.shape_of(ctx.in(0)), w = ctx.shape_of(ctx.in(1));
  ops::Window win = ops::transposed_window(ctx.attrs(), ops::spatial_dims(x), ops::spatial_dims(w));
  size_t k = win.in.size();
  std::vector<int64_t> pads(2 * k), output_padding(k), extra(2 * (k + 2), 0);
  for (size_t s = 0; s < k; ++s) {
    pads[s] = std::max<int64_t>(win.pad_begin[s], 0);
    pads[k + s] = std::max<int64_t>(win.pad_end[s], 0);
    extra[2 + s] = pads[s] - win.pad_begin[s];
    extra[k + 4 + s] = pads[k + s] - win.pad_end[s];
    int64_t full = win.strides[s] * (win.in[s] - 1) + (win.kernel[s] - 1) * win.dilations[s] + 1;
    output_padding[s] =
        win.out[s] - extra[2 + s] - extra[k + 4 + s] - (full - pads[s] - pads[k + s]);
    check(output_padding[s] >= 0, "output size {} is below the window's", win.out[s]);
  }
  Attributes attrs = {{"strides", win.strides},
                      {"dilations", win.dilations},
                      {"pads", pads},
                      {"output_padding", output_padding},
                      {"group", attr_int(ctx.attrs(), "group", 1)}};
  ValueId y = ctx.emit("prim.ConvTranspose", {ctx.in(0), ctx.in(1)}, attrs);
  if (std::any_of(extra.begin(), extra.end(), [](int64_t e) { return e != 0; }))
    y = ctx.emit("prim.Pad", {y}, {{"pads", extra}, {"mode", std::string("constant")}});
  if (ctx.has(2)) y = add_bias(ctx, y, ctx.in(2));
  return single(y);
}

ops::EinsumSpec einsum_spec(const RuleContext& ctx) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) shapes.push_back(ctx.shape_of(ctx.in(i)));
  return ops::parse_einsum(attr_string(ctx.attrs(), "equation", ""), shapes);
}

// One or two operands without diagonals (a label repeated within an operand).
bool einsum_guard(const RuleContext& ctx) {
  if (ctx.num_inputs() > 2) return false;
  ops::EinsumSpec spec = einsum_spec(ctx);
  for (const std::vector<int>& labels : spec.operands)
    for (size_t i = 0; i < labels.size(); ++i)
      if (std::count(labels.begin(), labels.end(), labels[i]) > 1) return false;
  return true;
}

bool contains(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// An operand with its dims labelled.
struct Labelled {
  ValueId v;
  std::vector<int> labels;
};

// Broadcasts ellipsis dims of size 1, then sums the labels no one else needs.
Labelled prepare(RuleContext& ctx, Labelled x, const ops::EinsumSpec& spec,
                 const std::vector<int>& needed) {
  Shape full;
  for (int l : x.labels) full.push_back(spec.sizes[l]);
  x.v = ctx.broadcast_to(x.v, full);
  std::vector<int64_t> axes;
  Labelled kept{kNoValue, {}};
  Shape kept_shape;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (contains(needed, x.labels[d])) {
      kept.labels.push_back(x.labels[d]);
      kept_shape.push_back(full[d]);
    } else {
      axes.push_back(static_cast<int64_t>(d));
    }
  }
  kept.v = ctx.reshape(ctx.reduce("sum", x.v, axes), kept_shape);
  return kept;
}

// `x` with its dims reordered to `order` (a permutation of its labels).
ValueId arrange(RuleContext& ctx, const Labelled& x, const std::vector<int>& order) {
  std::vector<int64_t> perm;
  for (int l : order)
    perm.push_back(std::find(x.labels.begin(), x.labels.end(), l) - x.labels.begin());
  return ctx.transpose(x.v, perm);
}

int64_t extent(const ops::EinsumSpec& spec, const std::vector<int>& labels) {
  int64_t n = 1;
  for (int l : labels) n *= spec.sizes[l];
  return n;
}

// Two operands: batch labels (both and output), contracted (both, not output), and each side's
// free labels become [batch, M, K] x [batch, K, N] for prim.MatMul.
std::vector<ValueId> einsum(RuleContext& ctx) {
  ops::EinsumSpec spec = einsum_spec(ctx);
  const std::vector<int>& out = spec.output;
  if (ctx.num_inputs() == 1) {
    Labelled a = prepare(ctx, {ctx.in(0), spec.operands[0]}, spec, out);
    ValueId y = arrange(ctx, a, out);
    return single(y == ctx.in(0) ? ctx.ew("identity", {y}) : y);
  }
  std::vector<int> needed_a = out, needed_b = out;
  needed_a.insert(needed_a.end(), spec.operands[1].begin(), spec.operands[1].end());
  needed_b.insert(needed_b.end(), spec.operands[0].begin(), spec.operands[0].end());
  Labelled a = prepare(ctx, {ctx.in(0), spec.operands[0]}, spec, needed_a);
  Labelled b = prepare(ctx, {ctx.in(1), spec.operands[1]}, spec, needed_b);
  std::vector<int> batch, contract, free_a, free_b;
  for (int l : out)
    if (contains(a.labels, l) && contains(b.labels, l)) batch.push_back(l);
  for (int l : a.labels) {
    if (contains(b.labels, l) && !contains(out, l)) contract.push_back(l);
    if (!contains(b.labels, l)) free_a.push_back(l);
  }
  for (int l : b.labels)
    if (!contains(a.labels, l)) free_b.push_back(l);
  auto join = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  int64_t nb = extent(spec, batch), m = extent(spec, free_a), k = extent(spec, contract),
          n = extent(spec, free_b);
  ValueId lhs = ctx.reshape(arrange(ctx, a, join(batch, free_a, contract)), {nb, m, k});
  ValueId rhs = ctx.reshape(arrange(ctx, b, join(batch, contract, free_b)), {nb, k, n});
  std::vector<int> result = join(batch, free_a, free_b);
  Shape result_shape;
  for (int l : result) result_shape.push_back(spec.sizes[l]);
  Labelled y{ctx.reshape(ctx.emit("prim.MatMul", {lhs, rhs}), result_shape), result};
  return single(arrange(ctx, y, out));
}

// ---- samples ----

Graph matmul_sample(std::string_view, Rng& rng) {
  int64_t m = sample::integer(rng, 1, 4), k = sample::integer(rng, 1, 4),
          n = sample::integer(rng, 1, 4);
  Shape batch = sample::shape(rng, 0, 2, 3);
  Shape a = sample::broadcastable(rng, batch), b = sample::broadcastable(rng, batch);
  a.insert(a.end(), {m, k});
  b.insert(b.end(), {k, n});
  if (sample::integer(rng, 0, 4) == 0) a = {k};
  if (sample::integer(rng, 0, 4) == 0) b = {k};
  return sample::make("MatMul", {Arg::input(DType::f32, a), Arg::input(DType::f32, b)});
}

Graph gemm_sample(std::string_view, Rng& rng) {
  int64_t m = sample::integer(rng, 1, 4), k = sample::integer(rng, 1, 4),
          n = sample::integer(rng, 1, 4);
  int64_t ta = sample::integer(rng, 0, 1), tb = sample::integer(rng, 0, 1);
  Attributes attrs = {{"transA", ta}, {"transB", tb}};
  if (sample::coin(rng)) attrs["alpha"] = 0.5f;
  if (sample::coin(rng)) attrs["beta"] = 2.0f;
  std::vector<Arg> args = {Arg::input(DType::f32, ta ? Shape{k, m} : Shape{m, k}),
                           Arg::input(DType::f32, tb ? Shape{n, k} : Shape{k, n})};
  if (sample::coin(rng)) args.push_back(Arg::input(DType::f32, sample::broadcastable(rng, {m, n})));
  return sample::make("Gemm", args, attrs);
}

Graph conv_sample(std::string_view op, Rng& rng) {
  int64_t spatial = sample::integer(rng, 1, 2);
  int64_t group = sample::integer(rng, 1, 2);
  int64_t cg = sample::integer(rng, 1, 2), mg = sample::integer(rng, 1, 2);
  Shape x = {sample::integer(rng, 1, 2), cg * group};
  Shape w = op == "Conv" ? Shape{mg * group, cg} : Shape{cg * group, mg};
  std::vector<int64_t> strides, dilations, pads_b, pads_e;
  for (int64_t s = 0; s < spatial; ++s) {
    x.push_back(sample::integer(rng, 3, 6));
    w.push_back(sample::integer(rng, 1, 3));
    strides.push_back(sample::integer(rng, 1, 2));
    dilations.push_back(sample::integer(rng, 1, 2));
    pads_b.push_back(sample::integer(rng, 0, 1));
    pads_e.push_back(sample::integer(rng, 0, 1));
  }
  Attributes attrs = {{"strides", strides}, {"dilations", dilations}, {"group", group}};
  if (sample::coin(rng))
    attrs["auto_pad"] = std::string(sample::coin(rng) ? "SAME_UPPER" : "SAME_LOWER");
  else
    attrs["pads"] = concat(pads_b, pads_e);
  if (op == "ConvTranspose" && sample::coin(rng)) {
    std::vector<int64_t> output_padding;
    for (int64_t s : strides) output_padding.push_back(s > 1 ? 1 : 0);
    attrs["output_padding"] = output_padding;
  }
  std::vector<Arg> args = {Arg::input(DType::f32, x), Arg::input(DType::f32, w)};
  if (sample::coin(rng))
    args.push_back(Arg::input(DType::f32, {op == "Conv" ? w[0] : w[1] * group}));
  return sample::make(std::string(op), args, attrs);
}

Graph einsum_sample(std::string_view, Rng& rng) {
  struct Form {
    const char* equation;
    std::vector<Shape> shapes;
  };
  const std::vector<Form> forms = {
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ij,kj->ik", {{3, 4}, {5, 4}}},
      {"ij->ji", {{3, 4}}},
      {"ij->i", {{3, 4}}},
      {"i,i", {{4}, {4}}},
      {"bhqd,bhkd->bhqk", {{1, 2, 3, 4}, {1, 2, 5, 4}}},
      {"...ij,...jk", {{2, 1, 3, 4}, {3, 4, 2}}},
      {"ij,jk,->ik", {{2, 3}, {3, 2}, {}}},
      {"abc,cd->da", {{2, 3, 4}, {4, 5}}},
  };
  const Form& f = forms[sample::integer(rng, 0, static_cast<int64_t>(forms.size()) - 1)];
  std::vector<Arg> args;
  for (const Shape& s : f.shapes) args.push_back(Arg::input(DType::f32, s));
  return sample::make("Einsum", args, {{"equation", std::string(f.equation)}});
}

}  // namespace

void add_linear_rules(RuleTable& rules) {
  rules.push_back({"MatMul", nullptr, matmul, matmul_sample});
  rules.push_back({"Gemm", nullptr, gemm, gemm_sample});
  rules.push_back({"Conv", nullptr, conv, conv_sample});
  rules.push_back({"ConvTranspose", nullptr, conv_transpose, conv_sample});
  rules.push_back({"Einsum", einsum_guard, einsum, einsum_sample,
                   "more than two operands, or a diagonal (repeated label)"});
}

}  // namespace orch::fission
