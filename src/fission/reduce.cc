// Fission rules of the reductions: prim.Reduce (dims kept) plus elementwise pre/post steps and
// a reshape for keepdims=0. ReduceMean is a sum times 1/n; ReduceLogSumExp keeps the max
// subtraction for stability.
#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/reduce_params.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

ops::ReduceAxes axes_of(const RuleContext& ctx) {
  const Tensor* axes_input = ctx.node().op == "ReduceSum" && ctx.has(1) ? &ctx.constant(1) : nullptr;
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
  for (std::string_view op : {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                              "ReduceSumSquare"})
    rules.push_back({op, nullptr, reduction, reduce_sample});
  for (std::string_view op : {"ReduceMean", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp"})
    rules.push_back({op, float_only, reduction, reduce_sample});
}

}  // namespace orch::fission
