// Fission rules of QuantizeLinear and DequantizeLinear: elementwise chains in f32, the order of
// operations of the ONNX reference (quantize: x / scale, rounded half to even, plus the zero
// point, saturated; dequantize: (x - zero point) * scale), so every step rounds as it does. A
// scale or zero point with one value per element of `axis` is reshaped to broadcast along it.
// DynamicQuantizeLinear is kept whole (fission.cc's kNoRule).
#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

// Input `i` (a scale or zero point of input 0) in f32, shaped to broadcast against input 0.
ValueId param(RuleContext& ctx, size_t i) {
  ValueId v = ctx.cast(ctx.in(i), DType::f32);
  const Shape& s = ctx.shape_of(v);
  if (num_elements(s) == 1) return v;
  int64_t rank = static_cast<int64_t>(ctx.shape_of(ctx.in(0)).size());
  int64_t axis = ops::normalize_axis(attr_int(ctx.attrs(), "axis", 1), rank);
  Shape along(static_cast<size_t>(rank - axis), 1);
  along[0] = s[0];
  return ctx.reshape(v, along);
}

std::vector<ValueId> quantize(RuleContext& ctx) {
  DType y = ctx.out_type().dtype;
  ValueId x = ctx.cast(ctx.in(0), DType::f32);
  ValueId v = ctx.ew("round", {ctx.ew("div", {x, param(ctx, 1)})});
  if (ctx.has(2)) v = ctx.ew("add", {v, param(ctx, 2)});
  v = ctx.ew("max", {v, ctx.scalar(y == DType::u8 ? 0 : -128, DType::f32)});
  v = ctx.ew("min", {v, ctx.scalar(y == DType::u8 ? 255 : 127, DType::f32)});
  return single(ctx.cast(v, y));
}

std::vector<ValueId> dequantize(RuleContext& ctx) {
  ValueId x = ctx.cast(ctx.in(0), DType::f32);
  if (ctx.has(2)) x = ctx.ew("sub", {x, param(ctx, 2)});
  return single(ctx.ew("mul", {x, param(ctx, 1)}));
}

// Zero points of `dtype` in its range's middle half, so that values land on both sides.
Tensor zero_points(Rng& rng, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  int64_t lo = dtype == DType::u8 ? 64 : -64;
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, sample::integer(rng, lo, lo + 127));
  return t;
}

// Per tensor or per axis, with or without a zero point; the scale a positive constant, which
// quantizes inputs in [-1, 1) to values on both sides of the zero point and past the range.
Graph quantize_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  Shape params;
  if (sample::coin(rng)) params = {s[static_cast<size_t>(ops::normalize_axis(axis, rank))]};
  DType q = sample::coin(rng) ? DType::u8 : DType::i8;
  bool dequantize = op == "DequantizeLinear";
  std::vector<Arg> args = {Arg::input(dequantize ? q : DType::f32, s),
                           Arg::constant_of(sample::floats(rng, params, 0.002, 0.02))};
  if (dequantize || sample::coin(rng))
    args.push_back(Arg::constant_of(zero_points(rng, q, params)));
  return sample::make(std::string(op), args, {{"axis", axis}});
}

}  // namespace

void add_quantize_rules(RuleTable& rules) {
  rules.push_back({.op = "QuantizeLinear", .build = quantize, .sample = quantize_sample});
  rules.push_back({.op = "DequantizeLinear", .build = dequantize, .sample = quantize_sample});
}

}  // namespace orch::fission
