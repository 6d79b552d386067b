// Fission rules of the normalizations: reductions, explicit broadcasts and elementwise chains.
// Softmax keeps the max subtraction; BatchNormalization (inference) folds its constant
// parameters into one scale and one shift per channel; in training mode it uses batch statistics.
// LRN sums its channel window as channel slices of the zero-padded squares.
#include <algorithm>
#include <cmath>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

int64_t rank_of(const RuleContext& ctx, ValueId v) {
  return static_cast<int64_t>(ctx.shape_of(v).size());
}

// A [n] vector reshaped to broadcast along `axis` of a rank-`rank` tensor.
ValueId along(RuleContext& ctx, ValueId v, int64_t axis, int64_t rank) {
  Shape s(rank, 1);
  s[axis] = ctx.shape_of(v)[0];
  return ctx.reshape(v, s);
}

std::vector<ValueId> softmax_family(RuleContext& ctx) {
  const std::string& op = ctx.node().op;
  DType out = ctx.out_type().dtype;
  ValueId x = ctx.cast(ctx.in(0), compute_type(out));
  int64_t axis = ops::normalize_axis(attr_int(ctx.attrs(), "axis", -1), rank_of(ctx, x));
  ValueId m = ctx.reduce("max", x, {axis});
  ValueId shifted = ctx.ew("sub", {x, m});
  ValueId y;
  if (op == "Hardmax") {
    int64_t n = ctx.shape_of(x)[axis];
    std::vector<double> iota(n);
    for (int64_t i = 0; i < n; ++i) iota[i] = static_cast<double>(i);
    ValueId index = along(ctx, ctx.constant_value(Tensor::from_doubles(DType::i64, {n}, iota)),
                          axis, rank_of(ctx, x));
    ValueId candidates =
        ctx.ew("where", {ctx.ew("equal", {x, m}), index, ctx.scalar(n, DType::i64)});
    ValueId first = ctx.reduce("min", ctx.broadcast_to(candidates, ctx.shape_of(x)), {axis});
    y = ctx.cast(ctx.ew("equal", {index, first}), out);
    return single(ctx.broadcast_to(y, ctx.out_type().shape));
  }
  ValueId e = ctx.ew("exp", {shifted});
  ValueId sum = ctx.reduce("sum", e, {axis});
  if (op == "Softmax")
    y = ctx.ew("div", {e, sum});
  else
    y = ctx.ew("sub", {shifted, ctx.ew("log", {sum})});
  return single(ctx.cast(y, out));
}

std::vector<ValueId> lp_normalization(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  ValueId x = ctx.cast(ctx.in(0), compute_type(out));
  int64_t axis = ops::normalize_axis(attr_int(ctx.attrs(), "axis", -1), rank_of(ctx, x));
  ValueId norm = attr_int(ctx.attrs(), "p", 2) == 1
                     ? ctx.reduce("sum", ctx.ew("abs", {x}), {axis})
                     : ctx.ew("sqrt", {ctx.reduce("sum", ctx.ew("mul", {x, x}), {axis})});
  return single(ctx.cast(ctx.ew("div", {x, norm}), out));
}

struct Moments {
  ValueId centered;  // x - mean
  ValueId mean;
  ValueId var;
};

Moments moments(RuleContext& ctx, ValueId x, const std::vector<int64_t>& axes) {
  ValueId mean = ctx.mean(x, axes);
  ValueId centered = ctx.ew("sub", {x, mean});
  ValueId var = ctx.mean(ctx.ew("mul", {centered, centered}), axes);
  return {centered, mean, var};
}

ValueId inv_std(RuleContext& ctx, ValueId var, double epsilon) {
  ValueId v = ctx.ew("add", {var, ctx.scalar(epsilon, ctx.dtype(var))});
  return ctx.ew("reciprocal", {ctx.ew("sqrt", {v})});
}

double epsilon(const RuleContext& ctx) {
  return attr_float(ctx.attrs(), "epsilon", 1e-5f);
}

std::vector<ValueId> layer_norm(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  int64_t rank = rank_of(ctx, x);
  int64_t axis = attr_int(ctx.attrs(), "axis", -1);
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
  Moments m = moments(ctx, x, axes);
  ValueId inv = inv_std(ctx, m.var, epsilon(ctx));
  ValueId y = ctx.ew("mul", {m.centered, inv});
  y = ctx.ew("mul", {y, ctx.cast(ctx.in(1), t)});
  if (ctx.has(2)) y = ctx.ew("add", {y, ctx.cast(ctx.in(2), t)});
  std::vector<ValueId> results = {ctx.cast(y, out)};
  if (ctx.num_outputs() > 1)
    results.push_back(ctx.output_used(1) ? ctx.cast(m.mean, ctx.out_type(1).dtype) : kNoValue);
  if (ctx.num_outputs() > 2)
    results.push_back(ctx.output_used(2) ? ctx.cast(inv, ctx.out_type(2).dtype) : kNoValue);
  return results;
}

std::vector<ValueId> instance_norm(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  int64_t rank = rank_of(ctx, x);
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Moments m = moments(ctx, x, axes);
  ValueId y = ctx.ew("mul", {m.centered, inv_std(ctx, m.var, epsilon(ctx))});
  y = ctx.ew("mul", {y, along(ctx, ctx.cast(ctx.in(1), t), 1, rank)});
  y = ctx.ew("add", {y, along(ctx, ctx.cast(ctx.in(2), t), 1, rank)});
  return single(ctx.cast(y, out));
}

std::vector<ValueId> group_norm(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  Shape s = ctx.shape_of(x);
  int64_t channels = s[1];
  int64_t groups = attr_int(ctx.attrs(), "num_groups", 1);
  int64_t rest = num_elements(s) / (s[0] * groups);
  ValueId grouped = ctx.reshape(x, {s[0], groups, rest});
  Moments m = moments(ctx, grouped, {2});
  ValueId y = ctx.ew("mul", {m.centered, inv_std(ctx, m.var, epsilon(ctx))});
  ValueId scale = ctx.cast(ctx.in(1), t), bias = ctx.cast(ctx.in(2), t);
  int64_t rank = static_cast<int64_t>(s.size());
  if (ctx.shape_of(scale)[0] == channels) {
    y = ctx.reshape(y, s);
    y = ctx.ew("add", {ctx.ew("mul", {y, along(ctx, scale, 1, rank)}), along(ctx, bias, 1, rank)});
  } else {
    y = ctx.ew("add", {ctx.ew("mul", {y, along(ctx, scale, 1, 3)}), along(ctx, bias, 1, 3)});
    y = ctx.reshape(y, s);
  }
  return single(ctx.cast(y, out));
}

std::vector<ValueId> mvn(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  std::vector<int64_t> axes = attr_ints(ctx.attrs(), "axes", {0, 2, 3});
  Moments m = moments(ctx, x, axes);
  ValueId denom = ctx.ew("add", {ctx.ew("sqrt", {m.var}), ctx.scalar(1e-9, t)});
  return single(ctx.cast(ctx.ew("div", {m.centered, denom}), out));
}

// y = x / (bias + alpha / size * s)^beta, s the sum of x^2 over the channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]: the squares, zero-padded along the
// channel axis, summed over one channel slice per window offset. Channels past either end add
// nothing, so the pads stop at C - 1 and a window wider than 2C - 1 takes no more slices.
// The channel slices one LRN sums, as many as the window covers within the channels.
int64_t lrn_slices(const RuleContext& ctx) {
  int64_t size = attr_int(ctx.attrs(), "size", 1);
  int64_t channels = ctx.shape_of(ctx.in(0))[1];
  return std::min(size, 2 * channels - 1);
}

// A window of more slices than a pooling window's taps (64) is kept whole: each slice is a
// primitive, and real models sum 5 channels (AlexNet, GoogLeNet).
bool lrn_guard(const RuleContext& ctx) {
  return lrn_slices(ctx) <= 64;
}

std::vector<ValueId> lrn(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  int64_t rank = rank_of(ctx, x), c = ctx.shape_of(x)[1];
  int64_t size = attr_int(ctx.attrs(), "size", 1);
  int64_t reach = std::max<int64_t>(c - 1, 0);
  int64_t before = std::min((size - 1) / 2, reach), after = std::min(size / 2, reach);
  ValueId squares = ctx.ew("mul", {x, x});
  if (before + after > 0) {
    std::vector<int64_t> pads(2 * rank, 0);
    pads[1] = before;
    pads[rank + 1] = after;
    squares = ctx.emit("prim.Pad", {squares}, {{"pads", pads}, {"mode", std::string("constant")}});
  }
  ValueId sum = ctx.slice_axis(squares, 1, 0, c);
  for (int64_t k = 1; k <= before + after; ++k)
    sum = ctx.ew("add", {sum, ctx.slice_axis(squares, 1, k, c)});
  double alpha = attr_float(ctx.attrs(), "alpha", 1e-4f);
  double bias = attr_float(ctx.attrs(), "bias", 1.0f);
  double beta = attr_float(ctx.attrs(), "beta", 0.75f);
  ValueId base =
      ctx.ew("add", {ctx.ew("mul", {sum, ctx.scalar(alpha / size, t)}), ctx.scalar(bias, t)});
  ValueId denom = ctx.ew("pow", {base, ctx.scalar(beta, t)});
  return single(ctx.cast(ctx.ew("div", {x, denom}), out));
}

// y = x * a + b per channel, a = scale / sqrt(var + eps), b = B - mean * a, folded when the
// parameters are constants.
std::vector<ValueId> batch_norm(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  int64_t rank = rank_of(ctx, x);
  double eps = epsilon(ctx);
  ValueId a, b;
  if (ctx.is_constant(1) && ctx.is_constant(2) && ctx.is_constant(3) && ctx.is_constant(4)) {
    int64_t c = ctx.shape_of(x)[1];
    std::vector<double> av(c), bv(c);
    for (int64_t i = 0; i < c; ++i) {
      av[i] = ctx.constant(1).get(i) / std::sqrt(ctx.constant(4).get(i) + eps);
      bv[i] = ctx.constant(2).get(i) - ctx.constant(3).get(i) * av[i];
    }
    a = ctx.constant_value(Tensor::from_doubles(t, {c}, av));
    b = ctx.constant_value(Tensor::from_doubles(t, {c}, bv));
  } else {
    ValueId var = ctx.cast(ctx.in(4), t);
    a = ctx.ew("mul", {ctx.cast(ctx.in(1), t), inv_std(ctx, var, eps)});
    b = ctx.ew("sub", {ctx.cast(ctx.in(2), t), ctx.ew("mul", {ctx.cast(ctx.in(3), t), a})});
  }
  ValueId y = ctx.ew("add", {ctx.ew("mul", {x, along(ctx, a, 1, rank)}), along(ctx, b, 1, rank)});
  return single(ctx.cast(y, out));
}

// Training mode: batch statistics per channel normalize, and the running statistics outputs
// blend the given ones with them by `momentum`.
std::vector<ValueId> batch_norm_training(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  int64_t rank = rank_of(ctx, x);
  int64_t c = ctx.shape_of(x)[1];
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  Moments m = moments(ctx, x, axes);
  ValueId y = ctx.ew("mul", {m.centered, inv_std(ctx, m.var, epsilon(ctx))});
  y = ctx.ew("mul", {y, along(ctx, ctx.cast(ctx.in(1), t), 1, rank)});
  y = ctx.ew("add", {y, along(ctx, ctx.cast(ctx.in(2), t), 1, rank)});
  std::vector<ValueId> results = {ctx.cast(y, out)};
  double momentum = attr_float(ctx.attrs(), "momentum", 0.9f);
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    ValueId given = ctx.cast(ctx.in(i + 2), t);
    ValueId observed = ctx.reshape(i == 1 ? m.mean : m.var, {c});
    ValueId blend = ctx.ew("add", {ctx.ew("mul", {given, ctx.scalar(momentum, t)}),
                                   ctx.ew("mul", {observed, ctx.scalar(1 - momentum, t)})});
    results.push_back(ctx.cast(blend, ctx.out_type(i).dtype));
  }
  return results;
}

std::vector<ValueId> batch_norm_any(RuleContext& ctx) {
  return attr_int(ctx.attrs(), "training_mode", 0) != 0 ? batch_norm_training(ctx)
                                                        : batch_norm(ctx);
}

// ---- samples ----

Graph along_axis_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  Attributes attrs = {{"axis", sample::axis(rng, static_cast<int64_t>(s.size()))}};
  if (op == "LpNormalization") attrs["p"] = sample::integer(rng, 1, 2);
  return sample::make(std::string(op), {Arg::input(sample::float_type(rng), s)}, attrs);
}

Graph layer_norm_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  int64_t a = axis < 0 ? axis + rank : axis;
  Shape p(s.begin() + a, s.end());
  std::vector<Arg> args = {Arg::input(DType::f32, s), Arg::input(DType::f32, p)};
  if (sample::coin(rng)) args.push_back(Arg::input(DType::f32, p));
  return sample::make("LayerNormalization", args, {{"axis", axis}, {"epsilon", 1e-3f}},
                      static_cast<int>(sample::integer(rng, 1, 3)));
}

Graph channel_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, op == "BatchNormalization" ? 2 : 3, 4);
  int64_t c = s[1];
  if (op == "GroupNormalization") {
    int64_t groups = sample::integer(rng, 1, 2);
    s[1] = c = groups * sample::integer(rng, 1, 3);
    Shape p = {sample::coin(rng) ? c : groups};
    return sample::make(
        std::string(op),
        {Arg::input(DType::f32, s), Arg::input(DType::f32, p), Arg::input(DType::f32, p)},
        {{"num_groups", groups}, {"epsilon", 1e-3f}});
  }
  std::vector<Arg> args = {Arg::input(DType::f32, s)};
  bool constants = sample::coin(rng);
  bool training = op == "BatchNormalization" && sample::integer(rng, 0, 2) == 0;
  int n = op == "BatchNormalization" ? 4 : 2;
  for (int i = 0; i < n; ++i) {
    Tensor t = sample::floats(rng, {c}, i == 3 ? 0.5 : -1, 1.5);
    args.push_back(constants ? Arg::constant_of(t) : Arg::input(DType::f32, {c}));
  }
  if (training)
    return sample::make(std::string(op), args,
                        {{"training_mode", int64_t{1}}, {"momentum", 0.8f}, {"epsilon", 1e-3f}},
                        static_cast<int>(sample::integer(rng, 1, 3)));
  return sample::make(std::string(op), args);
}

Graph mvn_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 4, 4);
  Attributes attrs;
  if (sample::coin(rng)) attrs["axes"] = std::vector<int64_t>{1, -1};
  return sample::make("MeanVarianceNormalization", {Arg::input(DType::f32, s)}, attrs);
}

// Windows of both parities, some wider than the channels; the default alpha barely weighs the
// window, so half the samples take alphas that do.
Graph lrn_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 3, 4);
  Attributes attrs = {{"size", sample::integer(rng, 1, 7)}};
  if (sample::coin(rng)) {
    attrs["alpha"] = 0.25f * static_cast<float>(sample::integer(rng, 1, 8));
    attrs["beta"] = 0.25f * static_cast<float>(sample::integer(rng, 1, 4));
    attrs["bias"] = 0.5f * static_cast<float>(sample::integer(rng, 1, 4));
  }
  return sample::make("LRN", {Arg::input(sample::float_type(rng), s)}, attrs);
}

}  // namespace

void add_normalization_rules(RuleTable& rules) {
  for (std::string_view op : {"Softmax", "LogSoftmax", "Hardmax"})
    rules.push_back({op, nullptr, softmax_family, along_axis_sample});
  rules.push_back({"LpNormalization", nullptr, lp_normalization, along_axis_sample});
  rules.push_back({"LayerNormalization", nullptr, layer_norm, layer_norm_sample});
  rules.push_back({"InstanceNormalization", nullptr, instance_norm, channel_sample});
  rules.push_back({"GroupNormalization", nullptr, group_norm, channel_sample});
  rules.push_back({"BatchNormalization", nullptr, batch_norm_any, channel_sample});
  rules.push_back({"MeanVarianceNormalization", nullptr, mvn, mvn_sample});
  rules.push_back({"LRN", lrn_guard, lrn, lrn_sample, "a channel window of more than 64 slices"});
}

}  // namespace orch::fission
