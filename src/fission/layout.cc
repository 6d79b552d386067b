// Fission rules of the layout ops: shape-only ops become prim.Reshape; Slice, Pad, Concat,
// Transpose, Tile map to their primitives with every parameter explicit; Split becomes one
// prim.Slice per output; DepthToSpace/SpaceToDepth are reshape-transpose-reshape; Trilu is a
// select with a constant mask.
#include <algorithm>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"
#include "ir/ops/layout_params.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

std::vector<ValueId> to_out_shape(RuleContext& ctx) {
  ValueId v = ctx.reshape(ctx.in(0), ctx.out_type().shape);
  return single(v == ctx.in(0) ? ctx.ew("identity", {v}) : v);
}

std::vector<ValueId> transpose(RuleContext& ctx) {
  std::vector<int64_t> perm =
      ops::transpose_perm(ctx.attrs(), static_cast<int64_t>(ctx.shape_of(ctx.in(0)).size()));
  ValueId v = ctx.transpose(ctx.in(0), perm);
  return single(v == ctx.in(0) ? ctx.ew("identity", {v}) : v);
}

std::vector<ValueId> concat(RuleContext& ctx) {
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.in(i));
  return single(ctx.emit("prim.Concat", inputs, {{"axis", attr_int(ctx.attrs(), "axis", 0)}}));
}

std::vector<ValueId> split(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  int64_t axis = ops::normalize_axis(attr_int(ctx.attrs(), "axis", 0),
                                     static_cast<int64_t>(ctx.shape_of(x).size()));
  std::vector<ValueId> out;
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    int64_t size = ctx.out_type(i).shape[axis];
    ValueId v = ctx.slice_axis(x, axis, offset, size);
    out.push_back(v == x ? ctx.ew("identity", {v}) : v);
    offset += size;
  }
  return out;
}

std::vector<ValueId> slice(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  const Shape& s = ctx.shape_of(x);
  std::vector<ops::SliceAxis> axes =
      ops::slice_axes(s, ctx.constant(1), ctx.constant(2), ctx.has(3) ? &ctx.constant(3) : nullptr,
                      ctx.has(4) ? &ctx.constant(4) : nullptr);
  std::vector<int64_t> starts, ends, steps;
  for (const ops::SliceAxis& a : axes) {
    starts.push_back(a.size == 0 ? 0 : a.start);
    steps.push_back(a.size == 0 ? 1 : a.step);
    ends.push_back(a.size == 0 ? 0 : a.start + a.size * a.step);
  }
  return single(
      ctx.emit("prim.Slice", {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}}));
}

bool pad_value_constant(const RuleContext& ctx) {
  return !ctx.has(2) || ctx.is_constant(2);
}

// Negative pads crop first (prim.Slice), then prim.Pad adds the positive amounts.
std::vector<ValueId> pad(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  Shape s = ctx.shape_of(x);
  std::vector<ops::PadAxis> axes =
      ops::pad_axes(s, ctx.constant(1), ctx.has(3) ? &ctx.constant(3) : nullptr);
  size_t rank = s.size();
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    int64_t crop_b = std::max<int64_t>(-axes[d].begin, 0);
    int64_t crop_e = std::max<int64_t>(-axes[d].end, 0);
    if (crop_b > 0 || crop_e > 0) x = ctx.slice_axis(x, d, crop_b, s[d] - crop_b - crop_e);
    pads[d] = std::max<int64_t>(axes[d].begin, 0);
    pads[d + rank] = std::max<int64_t>(axes[d].end, 0);
  }
  std::string mode = attr_string(ctx.attrs(), "mode", "constant");
  bool padded = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (!padded) return single(x == ctx.in(0) ? ctx.ew("identity", {x}) : x);
  Attributes attrs = {{"pads", pads}, {"mode", mode}};
  if (mode == "constant" && ctx.has(2) && ctx.constant(2).numel() > 0)
    attrs["value"] = static_cast<float>(ctx.constant(2).get(0));
  return single(ctx.emit("prim.Pad", {x}, attrs));
}

// Pad's constant value must survive a float attribute exactly.
bool pad_guard(const RuleContext& ctx) {
  if (!pad_value_constant(ctx)) return false;
  if (!ctx.has(2) || ctx.constant(2).numel() == 0) return true;
  double v = ctx.constant(2).get(0);
  return static_cast<double>(static_cast<float>(v)) == v;
}

std::vector<ValueId> expand(RuleContext& ctx) {
  ValueId v = ctx.broadcast_to(ctx.in(0), ctx.out_type().shape);
  return single(v == ctx.in(0) ? ctx.ew("identity", {v}) : v);
}

std::vector<ValueId> tile(RuleContext& ctx) {
  return single(ctx.emit("prim.Tile", {ctx.in(0)}, {{"repeats", ctx.constant(1).to_ints()}}));
}

std::vector<ValueId> depth_to_space(RuleContext& ctx) {
  const Shape& s = ctx.shape_of(ctx.in(0));
  int64_t b = attr_int(ctx.attrs(), "blocksize", 1);
  int64_t c = s[1] / (b * b);
  bool dcr = attr_string(ctx.attrs(), "mode", "DCR") == "DCR";
  ValueId v = ctx.reshape(
      ctx.in(0), dcr ? Shape{s[0], b, b, c, s[2], s[3]} : Shape{s[0], c, b, b, s[2], s[3]});
  v = ctx.transpose(
      v, dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3});
  return single(ctx.reshape(v, ctx.out_type().shape));
}

std::vector<ValueId> space_to_depth(RuleContext& ctx) {
  const Shape& s = ctx.shape_of(ctx.in(0));
  int64_t b = attr_int(ctx.attrs(), "blocksize", 1);
  ValueId v = ctx.reshape(ctx.in(0), {s[0], s[1], s[2] / b, b, s[3] / b, b});
  v = ctx.transpose(v, {0, 3, 5, 1, 2, 4});
  return single(ctx.reshape(v, ctx.out_type().shape));
}

std::vector<ValueId> trilu(RuleContext& ctx) {
  const Shape& s = ctx.shape_of(ctx.in(0));
  bool upper = attr_int(ctx.attrs(), "upper", 1) != 0;
  int64_t k = ctx.has(1) ? ctx.constant(1).get_int(0) : 0;
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  Tensor mask(DType::boolean, {rows, cols});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask.set_int(i * cols + j, upper ? j - i >= k : j - i <= k);
  ValueId m = ctx.constant_value(mask);
  return single(ctx.ew("where", {m, ctx.in(0), ctx.scalar(0, ctx.dtype(ctx.in(0)))}));
}

// ---- samples ----

Graph shape_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  int64_t rank = static_cast<int64_t>(s.size());
  Arg x = Arg::input(DType::f32, s);
  if (op == "Reshape") {
    Shape target = {num_elements(s)};
    if (rank >= 2 && sample::coin(rng)) target = {0, -1};
    return sample::make("Reshape", {x, Arg::constant_of(sample::ints(target))});
  }
  if (op == "Flatten")
    return sample::make("Flatten", {x}, {{"axis", sample::integer(rng, -rank, rank)}});
  if (op == "Squeeze") {
    s[0] = 1;
    std::vector<Arg> args = {Arg::input(DType::f32, s)};
    if (sample::coin(rng)) args.push_back(Arg::constant_of(sample::ints({-rank})));
    return sample::make("Squeeze", args);
  }
  if (op == "Unsqueeze")
    return sample::make(
        "Unsqueeze", {x, Arg::constant_of(sample::ints({sample::integer(rng, -rank - 1, rank)}))});
  if (op == "Transpose") {
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    return sample::make("Transpose", {x}, {{"perm", perm}});
  }
  if (op == "Expand") {
    Shape small = sample::broadcastable(rng, s);
    return sample::make("Expand",
                        {Arg::input(DType::f32, small), Arg::constant_of(sample::ints(s))});
  }
  if (op == "Tile") {
    std::vector<int64_t> repeats;
    for (int64_t i = 0; i < rank; ++i) repeats.push_back(sample::integer(rng, 1, 3));
    return sample::make("Tile", {x, Arg::constant_of(sample::ints(repeats))});
  }
  // Trilu
  if (rank < 2) s.push_back(3);
  std::vector<Arg> args = {Arg::input(DType::f32, s)};
  if (sample::coin(rng))
    args.push_back(Arg::constant_of(Tensor::scalar(DType::i64, sample::integer(rng, -2, 2))));
  return sample::make("Trilu", args, {{"upper", sample::integer(rng, 0, 1)}});
}

Graph concat_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  int64_t axis = sample::axis(rng, static_cast<int64_t>(s.size()));
  int64_t a = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  std::vector<Arg> args;
  for (int64_t i = 0, n = sample::integer(rng, 1, 3); i < n; ++i) {
    s[a] = sample::integer(rng, 1, 3);
    args.push_back(Arg::input(DType::f32, s));
  }
  return sample::make("Concat", args, {{"axis", axis}});
}

Graph split_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  int64_t a = axis < 0 ? axis + rank : axis;
  std::vector<int64_t> sizes;
  for (int64_t i = 0, n = sample::integer(rng, 1, 3); i < n; ++i)
    sizes.push_back(sample::integer(rng, 1, 3));
  s[a] = 0;
  for (int64_t z : sizes) s[a] += z;
  return sample::make("Split", {Arg::input(DType::f32, s), Arg::constant_of(sample::ints(sizes))},
                      {{"axis", axis}}, static_cast<int>(sizes.size()));
}

Graph slice_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3, 6);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = sample::axis(rng, rank);
  int64_t step = sample::coin(rng) ? sample::integer(rng, 1, 2) : -sample::integer(rng, 1, 2);
  int64_t start = sample::integer(rng, -8, 8), end = sample::integer(rng, -8, 8);
  return sample::make(
      "Slice", {Arg::input(DType::f32, s), Arg::constant_of(sample::ints({start})),
                Arg::constant_of(sample::ints({end})), Arg::constant_of(sample::ints({axis})),
                Arg::constant_of(sample::ints({step}))});
}

Graph pad_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 3);
  for (int64_t& d : s) d += 2;
  int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> pads;
  for (int64_t i = 0; i < 2 * rank; ++i) pads.push_back(sample::integer(rng, -1, 2));
  std::string mode =
      std::vector<std::string>{"constant", "edge", "reflect"}[sample::integer(rng, 0, 2)];
  std::vector<Arg> args = {Arg::input(DType::f32, s), Arg::constant_of(sample::ints(pads))};
  if (mode == "constant" && sample::coin(rng))
    args.push_back(Arg::constant_of(Tensor::scalar(DType::f32, 1.5)));
  return sample::make("Pad", args, {{"mode", mode}});
}

Graph depth_sample(std::string_view op, Rng& rng) {
  int64_t b = sample::integer(rng, 1, 2);
  Shape s = {sample::integer(rng, 1, 2), sample::integer(rng, 1, 2), sample::integer(rng, 1, 3),
             sample::integer(rng, 1, 3)};
  Attributes attrs = {{"blocksize", b}};
  if (op == "DepthToSpace") {
    s[1] *= b * b;
    attrs["mode"] = std::string(sample::coin(rng) ? "DCR" : "CRD");
  } else {
    s[2] *= b;
    s[3] *= b;
  }
  return sample::make(std::string(op), {Arg::input(DType::f32, s)}, attrs);
}

}  // namespace

void add_layout_rules(RuleTable& rules) {
  for (std::string_view op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    rules.push_back({op, nullptr, to_out_shape, shape_sample});
  rules.push_back({"Transpose", nullptr, transpose, shape_sample});
  rules.push_back({"Expand", nullptr, expand, shape_sample});
  rules.push_back({"Tile", nullptr, tile, shape_sample});
  rules.push_back({"Trilu", nullptr, trilu, shape_sample});
  rules.push_back({"Concat", nullptr, concat, concat_sample});
  rules.push_back({"Split", nullptr, split, split_sample});
  rules.push_back({"Slice", nullptr, slice, slice_sample});
  rules.push_back({"Pad", pad_guard, pad, pad_sample, "pad value not a constant exact in float"});
  rules.push_back({"DepthToSpace", nullptr, depth_to_space, depth_sample});
  rules.push_back({"SpaceToDepth", nullptr, space_to_depth, depth_sample});
}

}  // namespace orch::fission
