// Fission rules of the reductions: prim.Reduce (dims kept) plus elementwise pre/post steps and
// a reshape for keepdims=0. ReduceMean is a sum times 1/n; ReduceLogSumExp keeps the max
// subtraction for stability. ArgMax/ArgMin pick the first (or last) index equal to the extreme
// with a constant index ramp; CumSum is a MatMul with a constant triangular matrix (Korch's
// "reduce as linear" view).
#include <numeric>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/reduce_params.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

ops::ReduceAxes axes_of(const RuleContext& ctx) {
  const Tensor* axes_input =
      ctx.node().op == "ReduceSum" && ctx.has(1) ? &ctx.constant(1) : nullptr;
  return ops::reduce_axes(ctx.attrs(), axes_input,
                          static_cast<int64_t>(ctx.shape_of(ctx.in(0)).size()));
}

std::vector<ValueId> reduction(RuleContext& ctx) {
  const std::string& op = ctx.node().op;
  ops::ReduceAxes r = axes_of(ctx);
  ValueId x = ctx.in(0);
  if (r.noop || r.axes.empty()) return single(ctx.ew("identity", {x}));
  ValueId v;
  if (op == "ReduceSum") {
    v = ctx.reduce("sum", x, r.axes);
  } else if (op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd") {
    v = ctx.reduce(op == "ReduceMax" ? "max" : op == "ReduceMin" ? "min" : "prod", x, r.axes);
  } else if (op == "ReduceMean") {
    v = ctx.mean(x, r.axes);
  } else if (op == "ReduceL1") {
    v = ctx.reduce("sum", ctx.ew("abs", {x}), r.axes);
  } else if (op == "ReduceL2") {
    v = ctx.ew("sqrt", {ctx.reduce("sum", ctx.ew("mul", {x, x}), r.axes)});
  } else if (op == "ReduceSumSquare") {
    v = ctx.reduce("sum", ctx.ew("mul", {x, x}), r.axes);
  } else if (op == "ReduceLogSum") {
    v = ctx.ew("log", {ctx.reduce("sum", x, r.axes)});
  } else {
    ValueId m = ctx.reduce("max", x, r.axes);
    ValueId e = ctx.ew("exp", {ctx.ew("sub", {x, m})});
    v = ctx.ew("add", {ctx.ew("log", {ctx.reduce("sum", e, r.axes)}), m});
  }
  return single(ctx.reshape(v, ctx.out_type().shape));
}

// Ops that divide, take roots or logs: their integer forms round differently.
bool float_only(const RuleContext& ctx) {
  return is_float(ctx.dtype(ctx.in(0)));
}

// A [1, .., n, .., 1] i64 ramp 0..n-1 along `axis`.
ValueId index_ramp(RuleContext& ctx, int64_t n, int64_t axis, int64_t rank) {
  std::vector<int64_t> ramp(n);
  std::iota(ramp.begin(), ramp.end(), 0);
  Shape s(rank, 1);
  s[axis] = n;
  return ctx.constant_value(Tensor::from_ints(DType::i64, s, ramp));
}

std::vector<ValueId> arg_extreme(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  int64_t rank = static_cast<int64_t>(ctx.shape_of(x).size());
  int64_t axis = ops::normalize_axis(attr_int(ctx.attrs(), "axis", 0), rank);
  bool last = attr_int(ctx.attrs(), "select_last_index", 0) != 0;
  int64_t n = ctx.shape_of(x)[axis];
  ValueId extreme = ctx.reduce(ctx.node().op == "ArgMax" ? "max" : "min", x, {axis});
  ValueId ramp = index_ramp(ctx, n, axis, rank);
  ValueId hits =
      ctx.ew("where", {ctx.ew("equal", {x, extreme}), ramp, ctx.scalar(last ? -1 : n, DType::i64)});
  ValueId index = ctx.reduce(last ? "max" : "min", ctx.broadcast_to(hits, ctx.shape_of(x)), {axis});
  return single(ctx.reshape(index, ctx.out_type().shape));
}

// An empty axis has no extreme to compare with (the kernel returns 0 there).
bool nonempty_axis(const RuleContext& ctx) {
  const Shape& s = ctx.shape_of(ctx.in(0));
  if (s.empty()) return false;
  int64_t axis =
      ops::normalize_axis(attr_int(ctx.attrs(), "axis", 0), static_cast<int64_t>(s.size()));
  return s[axis] > 0;
}

constexpr int64_t kMaxScanLength = 4096;

bool cumsum_guard(const RuleContext& ctx) {
  const Shape& s = ctx.shape_of(ctx.in(0));
  if (s.empty()) return false;
  int64_t axis = ops::normalize_axis(ctx.constant(1).get_int(0), static_cast<int64_t>(s.size()));
  DType t = ctx.dtype(ctx.in(0));
  bool matmul_type =
      is_float(t) || t == DType::i32 || t == DType::i64 || t == DType::u32 || t == DType::u64;
  return matmul_type && s[axis] <= kMaxScanLength;
}

// y[.., j] = sum_i x[.., i] * W[i, j]: W[i, j] = 1 where i <= j (i >= j reversed; strict when
// exclusive).
std::vector<ValueId> cumsum(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  Shape s = ctx.shape_of(x);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = ops::normalize_axis(ctx.constant(1).get_int(0), rank);
  bool exclusive = attr_int(ctx.attrs(), "exclusive", 0) != 0;
  bool reverse = attr_int(ctx.attrs(), "reverse", 0) != 0;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  ValueId moved = ctx.transpose(x, perm);
  Shape moved_shape = ctx.shape_of(moved);
  int64_t n = s[axis];
  ValueId rows = ctx.reshape(moved, {num_elements(s) / std::max<int64_t>(n, 1), n});
  Tensor w(ctx.dtype(x), {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      bool in = reverse ? i >= j : i <= j;
      w.set_int(i * n + j, in && !(exclusive && i == j));
    }
  ValueId y = ctx.emit("prim.MatMul", {rows, ctx.constant_value(w)});
  y = ctx.reshape(y, moved_shape);
  std::vector<int64_t> inverse(rank);
  for (int64_t d = 0; d < rank; ++d) inverse[perm[d]] = d;
  y = ctx.transpose(y, inverse);
  return single(y == x ? ctx.ew("identity", {y}) : y);
}

Graph arg_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  Attributes attrs = {{"axis", sample::axis(rng, static_cast<int64_t>(s.size()))},
                      {"keepdims", sample::integer(rng, 0, 1)},
                      {"select_last_index", sample::integer(rng, 0, 1)}};
  // Small integers make ties, so first/last index selection matters.
  DType t = sample::coin(rng) ? DType::i32 : DType::f32;
  return sample::make(std::string(op), {Arg::input(t, s)}, attrs);
}

Graph cumsum_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  Attributes attrs = {{"exclusive", sample::integer(rng, 0, 1)},
                      {"reverse", sample::integer(rng, 0, 1)}};
  int64_t axis = sample::axis(rng, static_cast<int64_t>(s.size()));
  return sample::make(
      "CumSum",
      {Arg::input(sample::float_type(rng), s), Arg::constant_of(Tensor::scalar(DType::i64, axis))},
      attrs);
}

Graph reduce_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (sample::coin(rng)) axes.push_back(sample::coin(rng) ? a - rank : a);
  Attributes attrs = {{"keepdims", sample::integer(rng, 0, 1)}};
  if (axes.empty() && sample::coin(rng)) attrs["noop_with_empty_axes"] = int64_t{1};
  std::vector<Arg> args = {Arg::input(sample::float_type(rng), s)};
  if (op == "ReduceSum") {
    if (!axes.empty()) args.push_back(Arg::constant_of(sample::ints(axes)));
  } else if (!axes.empty()) {
    attrs["axes"] = axes;
  }
  if (op != "ReduceSum") attrs.erase("noop_with_empty_axes");
  return sample::make(std::string(op), args, attrs);
}

}  // namespace

void add_reduce_rules(RuleTable& rules) {
  for (std::string_view op :
       {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceSumSquare"})
    rules.push_back({op, nullptr, reduction, reduce_sample});
  for (std::string_view op : {"ReduceMean", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    rules.push_back({op, float_only, reduction, reduce_sample, "integer input"});
  for (std::string_view op : {"ArgMax", "ArgMin"})
    rules.push_back({op, nonempty_axis, arg_extreme, arg_sample, "empty or rank-0 input"});
  rules.push_back(
      {"CumSum", cumsum_guard, cumsum, cumsum_sample, "no MatMul type, rank 0, or axis over 4096"});
}

}  // namespace orch::fission
