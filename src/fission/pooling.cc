// Fission rules of the pooling ops. A windowed pool becomes: pad (with the reduction's identity),
// one strided prim.Slice per window offset, a concat of those views, and a prim.Reduce over them
// (max, or sum divided by a constant count map for AveragePool; |x|^p sums for LpPool). A max
// over a box is the max over each of its dims in turn, so a MaxPool window of more taps than the
// limit (YOLO's SPP: 9x9 and 13x13) is pooled one spatial dim at a time: 13 + 13 taps instead of
// 169; along a dim of more taps than the limit, in chunks of taps whose maxima an elementwise max
// combines. Global pools are reductions over the spatial axes. MaxPool's Indices output and
// MaxUnpool are kept whole (Opaque-like: argmax positions are not expressible with these
// primitives).
#include <algorithm>
#include <cmath>
#include <limits>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/linear_window.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

// Taps one stack of window views may hold.
constexpr int64_t kMaxWindowTaps = 64;
// The widest MaxPool window along one dim that fission splits (8 chunks); wider is kept whole.
constexpr int64_t kMaxChunkedTaps = 8 * kMaxWindowTaps;

ops::Window window_of(const RuleContext& ctx) {
  return ops::forward_window(ctx.attrs(), ops::spatial_dims(ctx.shape_of(ctx.in(0))),
                             attr_ints(ctx.attrs(), "kernel_shape"),
                             attr_int(ctx.attrs(), "ceil_mode", 0) != 0);
}

int64_t taps(const ops::Window& w) {
  int64_t n = 1;
  for (int64_t k : w.kernel) n *= k;
  return n;
}

// The window pooled along spatial dim `d` alone (MaxPool's separable form), over an input of
// spatial dims `in` (dims pooled before already have their output size).
ops::Window along(const ops::Window& w, size_t d, std::vector<int64_t> in) {
  ops::Window one = w;
  one.in = std::move(in);
  for (size_t e = 0; e < w.in.size(); ++e) {
    if (e == d) continue;
    one.kernel[e] = one.strides[e] = one.dilations[e] = 1;
    one.pad_begin[e] = one.pad_end[e] = 0;
    one.out[e] = one.in[e];
  }
  return one;
}

bool separable(const RuleContext& ctx) {
  return ctx.node().op == "MaxPool" && taps(window_of(ctx)) > kMaxWindowTaps;
}

bool pool_guard(const RuleContext& ctx) {
  ops::Window w = window_of(ctx);
  int64_t widest = *std::max_element(w.kernel.begin(), w.kernel.end());
  if (separable(ctx) ? widest > kMaxChunkedTaps : taps(w) > kMaxWindowTaps) return false;
  return ctx.node().op != "MaxPool" || ctx.num_outputs() == 1 || !ctx.output_used(1);
}

// The window's elements stacked on a new leading axis: [taps, N, C, out...]; with `first`, its
// taps from first[d] on along each dim d (a chunk of a wider window).
ValueId window_stack(RuleContext& ctx, ValueId x, const ops::Window& w, double pad_value,
                     std::vector<int64_t> first = {}) {
  Shape s = ctx.shape_of(x);
  size_t k = w.in.size(), rank = s.size();
  first.resize(k, 0);
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t d = 0; d < k; ++d) {
    int64_t needed =
        (w.out[d] - 1) * w.strides[d] + (first[d] + w.kernel[d] - 1) * w.dilations[d] + 1;
    int64_t have = w.in[d] + w.pad_begin[d] + w.pad_end[d];
    pads[2 + d] = w.pad_begin[d];
    pads[rank + 2 + d] = w.pad_end[d] + std::max<int64_t>(needed - have, 0);
  }
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; }))
    x = ctx.emit("prim.Pad", {x},
                 {{"pads", pads},
                  {"mode", std::string("constant")},
                  {"value", static_cast<float>(pad_value)}});
  Shape padded = ctx.shape_of(x);
  std::vector<ValueId> views;
  std::vector<int64_t> offset(k, 0);
  for (int64_t t = 0, n = taps(w); t < n; ++t) {
    std::vector<int64_t> starts(rank, 0), ends = padded, steps(rank, 1);
    for (size_t d = 0; d < k; ++d) {
      starts[2 + d] = (first[d] + offset[d]) * w.dilations[d];
      steps[2 + d] = w.strides[d];
      ends[2 + d] = starts[2 + d] + w.out[d] * w.strides[d];
    }
    views.push_back(
        ctx.emit("prim.Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}));
    for (size_t d = k; d-- > 0;) {  // next offset, row-major
      if (++offset[d] < w.kernel[d]) break;
      offset[d] = 0;
    }
  }
  Shape out = ctx.shape_of(views[0]);
  ValueId stacked =
      views.size() == 1 ? views[0] : ctx.emit("prim.Concat", views, {{"axis", int64_t{0}}});
  Shape stacked_shape = {static_cast<int64_t>(views.size())};
  stacked_shape.insert(stacked_shape.end(), out.begin(), out.end());
  return ctx.reshape(stacked, stacked_shape);
}

// Reduces the stacked window axis and drops it.
ValueId reduce_stack(RuleContext& ctx, const std::string& kind, ValueId stack) {
  Shape s = ctx.shape_of(stack);
  ValueId r = ctx.reduce(kind, stack, {0});
  return ctx.reshape(r, Shape(s.begin() + 1, s.end()));
}

// MaxPool over window `one`, which pools along dim `d` alone, in chunks of at most
// kMaxWindowTaps taps whose maxima an elementwise max combines.
ValueId max_along(RuleContext& ctx, ValueId x, const ops::Window& one, size_t d, double lowest) {
  ValueId y = kNoValue;
  for (int64_t first = 0; first < one.kernel[d]; first += kMaxWindowTaps) {
    ops::Window chunk = one;
    chunk.kernel[d] = std::min(kMaxWindowTaps, one.kernel[d] - first);
    std::vector<int64_t> start(one.in.size(), 0);
    start[d] = first;
    ValueId m = reduce_stack(ctx, "max", window_stack(ctx, x, chunk, lowest, start));
    y = y == kNoValue ? m : ctx.ew("max", {y, m});
  }
  return y;
}

// AveragePool's divisor per output position, as the reference kernel counts it.
Tensor average_counts(const ops::Window& w, bool include_pad, DType t) {
  Shape shape = {1, 1};
  shape.insert(shape.end(), w.out.begin(), w.out.end());
  Tensor counts(t, shape);
  size_t k = w.in.size();
  for (int64_t o = 0, n = num_elements(shape); o < n; ++o) {
    std::vector<int64_t> pos(k);
    for (size_t d = k, rest = o; d-- > 0;) {
      pos[d] = static_cast<int64_t>(rest) % w.out[d];
      rest = static_cast<int64_t>(rest) / w.out[d];
    }
    double count = 1;
    for (size_t d = 0; d < k; ++d) {
      int64_t c = 0;
      for (int64_t kk = 0; kk < w.kernel[d]; ++kk) {
        int64_t i = pos[d] * w.strides[d] - w.pad_begin[d] + kk * w.dilations[d];
        c += include_pad ? (i >= -w.pad_begin[d] && i < w.in[d] + w.pad_end[d])
                         : (i >= 0 && i < w.in[d]);
      }
      count *= static_cast<double>(c);
    }
    counts.set(o, count);
  }
  return counts;
}

std::vector<ValueId> pool(RuleContext& ctx) {
  const std::string& op = ctx.node().op;
  DType out = ctx.out_type().dtype;
  ops::Window w = window_of(ctx);
  if (op == "MaxPool") {
    double lowest = is_float(out)      ? -std::numeric_limits<double>::infinity()
                    : out == DType::i8 ? -128.0
                                       : 0.0;
    ValueId y = ctx.in(0);
    if (separable(ctx)) {
      for (size_t d = 0; d < w.in.size(); ++d) {
        Shape s = ctx.shape_of(y);
        y = max_along(ctx, y, along(w, d, std::vector<int64_t>(s.begin() + 2, s.end())), d, lowest);
      }
    } else {
      y = reduce_stack(ctx, "max", window_stack(ctx, y, w, lowest));
    }
    std::vector<ValueId> results = {y};
    if (ctx.num_outputs() > 1) results.push_back(kNoValue);
    return results;
  }
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  if (op == "AveragePool") {
    ValueId sum = reduce_stack(ctx, "sum", window_stack(ctx, x, w, 0));
    bool include_pad = attr_int(ctx.attrs(), "count_include_pad", 0) != 0;
    ValueId counts = ctx.constant_value(average_counts(w, include_pad, t));
    return single(ctx.cast(ctx.ew("div", {sum, counts}), out));
  }
  int64_t p = attr_int(ctx.attrs(), "p", 2);
  ValueId a = ctx.ew("abs", {x});
  ValueId powered = p == 2 ? ctx.ew("mul", {a, a}) : ctx.ew("pow", {a, ctx.scalar(p, t)});
  ValueId sum = reduce_stack(ctx, "sum", window_stack(ctx, powered, w, 0));
  ValueId y = p == 2 ? ctx.ew("sqrt", {sum}) : ctx.ew("pow", {sum, ctx.scalar(1.0 / p, t)});
  return single(ctx.cast(y, out));
}

std::vector<ValueId> global_pool(RuleContext& ctx) {
  const std::string& op = ctx.node().op;
  DType out = ctx.out_type().dtype;
  DType t = compute_type(out);
  ValueId x = ctx.cast(ctx.in(0), t);
  std::vector<int64_t> axes;
  for (size_t d = 2; d < ctx.shape_of(x).size(); ++d) axes.push_back(static_cast<int64_t>(d));
  ValueId y;
  if (op == "GlobalAveragePool") {
    y = ctx.mean(x, axes);
  } else if (op == "GlobalMaxPool") {
    y = ctx.reduce("max", x, axes);
  } else {
    int64_t p = attr_int(ctx.attrs(), "p", 2);
    ValueId a = ctx.ew("abs", {x});
    ValueId powered = p == 2 ? ctx.ew("mul", {a, a}) : ctx.ew("pow", {a, ctx.scalar(p, t)});
    ValueId sum = ctx.reduce("sum", powered, axes);
    y = p == 2 ? ctx.ew("sqrt", {sum}) : ctx.ew("pow", {sum, ctx.scalar(1.0 / p, t)});
  }
  if (y == ctx.in(0)) y = ctx.ew("identity", {y});
  return single(ctx.cast(y, out));
}

Graph pool_sample(std::string_view op, Rng& rng) {
  int64_t spatial = sample::integer(rng, 1, 2);
  Shape x = {sample::integer(rng, 1, 2), sample::integer(rng, 1, 2)};
  std::vector<int64_t> kernel, strides, dilations, pads_b, pads_e;
  // Now and then a MaxPool window over the tap limit, dilated or not: 9 or 10 taps a dim over
  // two dims (pooled one dim at a time), or 65 to 150 over one (in chunks of taps).
  bool wide = op == "MaxPool" && sample::integer(rng, 0, 3) == 0;
  for (int64_t s = 0; s < spatial; ++s) {
    bool chunked = wide && spatial == 1;
    x.push_back(chunked ? sample::integer(rng, 150, 320)
                : wide  ? sample::integer(rng, 19, 22)
                        : sample::integer(rng, 3, 7));
    kernel.push_back(chunked ? sample::integer(rng, 65, 150)
                     : wide  ? sample::integer(rng, 9, 10)
                             : sample::integer(rng, 1, 3));
    strides.push_back(sample::integer(rng, 1, 2));
    dilations.push_back(op == "LpPool" ? 1 : sample::integer(rng, 1, 2));
    pads_b.push_back(sample::integer(rng, 0, kernel.back() - 1));
    pads_e.push_back(sample::integer(rng, 0, kernel.back() - 1));
  }
  Attributes attrs = {{"kernel_shape", kernel}, {"strides", strides}};
  if (op != "LpPool") attrs["dilations"] = dilations;
  if (sample::integer(rng, 0, 3) == 0) {
    attrs["auto_pad"] = std::string("SAME_UPPER");
  } else {
    std::vector<int64_t> pads = pads_b;
    pads.insert(pads.end(), pads_e.begin(), pads_e.end());
    attrs["pads"] = pads;
    if (op != "LpPool") attrs["ceil_mode"] = sample::integer(rng, 0, 1);
  }
  if (op == "AveragePool") attrs["count_include_pad"] = sample::integer(rng, 0, 1);
  if (op == "LpPool") attrs["p"] = sample::integer(rng, 1, 3);
  int outputs = op == "MaxPool" ? static_cast<int>(sample::integer(rng, 1, 2)) : 1;
  Graph g = sample::make(std::string(op), {Arg::input(DType::f32, x)}, attrs, outputs);
  // Only Y is consumed: the Indices output is then dead, so the rule applies.
  if (outputs == 2) g.set_outputs({g.outputs()[0]});
  return g;
}

Graph global_sample(std::string_view op, Rng& rng) {
  Attributes attrs;
  if (op == "GlobalLpPool") attrs["p"] = sample::integer(rng, 1, 3);
  return sample::make(std::string(op), {Arg::input(DType::f32, sample::shape(rng, 3, 4))}, attrs);
}

}  // namespace

void add_pooling_rules(RuleTable& rules) {
  for (std::string_view op : {"MaxPool", "AveragePool", "LpPool"})
    rules.push_back({op, pool_guard, pool, pool_sample,
                     "window over 64 taps (MaxPool: over 512 along a dim), or MaxPool's Indices "
                     "output is used"});
  for (std::string_view op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
    rules.push_back({op, nullptr, global_pool, global_sample});
}

}  // namespace orch::fission
