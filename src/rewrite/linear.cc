// Linear rules: a pointwise convolution (1x1 kernel, stride 1, no padding, one group) mixes the
// channels of each pixel alone, and a Resize mixes pixels with weights that do not depend on the
// channel, so the two commute; and a convolution over a channel concatenation is the sum of the
// convolutions of its parts. Segformer's decode head upsamples four feature maps to 1/4 of the
// image, concatenates them and mixes the 1024 channels with a pointwise convolution: half of the
// model's FLOPs, which run at the maps' own resolutions once the convolution moves before the
// upsampling, and compose with the per-pixel linear layers that made the maps. A convolution over
// a space-to-depth (YOLOX's Focus: four stride-2 slices concatenated along channels) is a
// strided convolution of the undivided image with the same FLOPs and no intermediate.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "rewrite/rule_util.h"

namespace orch::rewrite {
namespace {

bool all_ones(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

bool all_zeros(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// prim.Conv over a constant float weight of 1x1 kernels, stride 1, no padding, one group.
bool pointwise_conv(const MatchContext& ctx, const Node& conv) {
  if (conv.op != "prim.Conv" || conv.inputs.size() != 2) return false;
  const Tensor* w = ctx.constant(conv.inputs[1]);
  DType dt = ctx.type(conv.outputs[0]).dtype;
  if (w == nullptr || (dt != DType::f32 && dt != DType::f64)) return false;
  std::vector<int64_t> kernel(w->shape().begin() + 2, w->shape().end());
  return all_ones(kernel) && attr_int(conv.attrs, "group", 1) == 1 &&
         all_ones(attr_ints(conv.attrs, "strides", {})) &&
         all_zeros(attr_ints(conv.attrs, "pads", {}));
}

// The Resize producing `v` when it upsamples the spatial dims only (batch and channels kept, more
// output than input pixels), reads every output pixel from input pixels (no crop-and-resize
// extrapolation constant) and only `reader` reads it; else nullptr.
const Node* upsampling(const MatchContext& ctx, ValueId v, NodeId reader) {
  const Node* resize = ctx.producer_if(v, "prim.Resize");
  if (resize == nullptr || !ctx.only_used_by(v, reader) || resize->attrs.count("axes") != 0 ||
      attr_string(resize->attrs, "coordinate_transformation_mode", "half_pixel") ==
          "tf_crop_and_resize")
    return nullptr;
  const Shape& in = ctx.type(resize->inputs[0]).shape;
  const Shape& out = ctx.type(v).shape;
  if (in.size() < 3 || in[0] != out[0] || in[1] != out[1]) return nullptr;
  int64_t in_pixels = 1, out_pixels = 1;
  for (size_t d = 2; d < in.size(); ++d) in_pixels *= in[d], out_pixels *= out[d];
  return out_pixels > in_pixels ? resize : nullptr;
}

// Resize(Conv(x, w)) for conv(Resize(x), w): the Resize's attributes with M output channels.
Ref conv_then_resize(Patch& p, const Node& resize, const Node& conv, Ref w) {
  Ref mixed = p.op("prim.Conv", {p.value(resize.inputs[0]), w}, conv.attrs);
  Attributes attrs = resize.attrs;
  if (attrs.count("sizes") != 0) {
    std::vector<int64_t> sizes = attr_ints(attrs, "sizes");
    sizes[1] = p.shape(w)[0];
    attrs["sizes"] = sizes;
  }
  return p.op("prim.Resize", {mixed}, attrs);
}

// --- pointwise_conv_before_resize ------------------------------------------------------------

bool before_resize_guard(const MatchContext& ctx, NodeId n) {
  const Node& conv = ctx.node(n);
  return pointwise_conv(ctx, conv) && upsampling(ctx, conv.inputs[0], n) != nullptr;
}

void before_resize_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& conv = ctx.node(n);
  const Node& resize = *ctx.producer(conv.inputs[0]);
  p.replace(conv.outputs[0], conv_then_resize(p, resize, conv, p.value(conv.inputs[1])));
}

// A Resize of `x` ([1, C, h, w]) to a larger random size, in a random mode.
ValueId random_upsampling(Builder& b, std::mt19937& rng, ValueId x) {
  static const std::vector<std::string> modes = {"nearest", "linear", "cubic"};
  static const std::vector<std::string> coordinates = {"half_pixel", "asymmetric", "align_corners",
                                                       "pytorch_half_pixel"};
  Shape sizes = b.type(x).shape;
  sizes[2] += random_int(rng, 1, 4);
  sizes[3] += random_int(rng, 0, 4);
  return b.op("prim.Resize", {x},
              {{"mode", modes[random_int(rng, 0, 2)]},
               {"coordinate_transformation_mode", coordinates[random_int(rng, 0, 3)]},
               {"sizes", sizes}});
}

ValueId relu_input(Builder& b, const std::string& name, const Shape& shape) {
  return b.op("prim.Elementwise", {b.input(name, {DType::f32, shape})},
              {{"fn", std::string("relu")}});
}

Attributes pointwise_attrs() {
  return {{"strides", std::vector<int64_t>{1, 1}},
          {"dilations", std::vector<int64_t>{1, 1}},
          {"pads", std::vector<int64_t>{0, 0, 0, 0}}};
}

Graph before_resize_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int64_t c = random_int(rng, 1, 4), m = random_int(rng, 1, 4);
  ValueId x = relu_input(b, "x", {1, c, random_int(rng, 1, 4), random_int(rng, 1, 4)});
  ValueId w = random_constant(b, rng, {DType::f32, {m, c, 1, 1}});
  ValueId y = b.op("prim.Conv", {random_upsampling(b, rng, x), w}, pointwise_attrs());
  b.output(b.op("prim.Elementwise", {y}, {{"fn", std::string("neg")}}));
  return g;
}

// --- pointwise_conv_over_concat --------------------------------------------------------------

// The Concat along channels that only pointwise Conv `n` reads, with an upsampling part; or
// nullptr.
const Node* concat_of_upsamplings(const MatchContext& ctx, NodeId n) {
  const Node& conv = ctx.node(n);
  if (!pointwise_conv(ctx, conv)) return nullptr;
  const Node* concat = ctx.producer_if(conv.inputs[0], "prim.Concat");
  if (concat == nullptr || !ctx.only_used_by(conv.inputs[0], n)) return nullptr;
  int64_t rank = static_cast<int64_t>(ctx.type(conv.inputs[0]).shape.size());
  int64_t axis = attr_int(concat->attrs, "axis", 0);
  if ((axis < 0 ? axis + rank : axis) != 1) return nullptr;
  NodeId concat_id = ctx.graph().value(conv.inputs[0]).producer;
  for (ValueId part : concat->inputs)
    if (upsampling(ctx, part, concat_id) != nullptr) return concat;
  return nullptr;
}

bool over_concat_guard(const MatchContext& ctx, NodeId n) {
  return concat_of_upsamplings(ctx, n) != nullptr;
}

// w[:, begin:begin + count] (channels of the weight).
Tensor channels(const Tensor& w, int64_t begin, int64_t count) {
  auto one = [](int64_t v) { return Tensor::from_ints(DType::i64, {1}, std::vector<int64_t>{v}); };
  return evaluate("Slice", {}, {w, one(begin), one(begin + count), one(1)});
}

void over_concat_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& conv = ctx.node(n);
  const Node& concat = *concat_of_upsamplings(ctx, n);
  NodeId concat_id = ctx.graph().value(conv.inputs[0]).producer;
  const Tensor& w = *ctx.constant(conv.inputs[1]);
  Ref sum = 0;
  int64_t begin = 0;
  for (size_t i = 0; i < concat.inputs.size(); ++i) {
    ValueId part = concat.inputs[i];
    int64_t count = ctx.type(part).shape[1];
    Ref slice = p.constant(channels(w, begin, count));
    begin += count;
    const Node* resize = upsampling(ctx, part, concat_id);
    Ref term = resize != nullptr ? conv_then_resize(p, *resize, conv, slice)
                                 : p.op("prim.Conv", {p.value(part), slice}, conv.attrs);
    sum = i == 0 ? term : p.op("prim.Elementwise", {sum, term}, {{"fn", std::string("add")}});
  }
  p.replace(conv.outputs[0], sum);
}

Graph over_concat_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int64_t h = random_int(rng, 1, 3), w = random_int(rng, 1, 3);
  Shape out{1, 1, h + random_int(rng, 1, 3), w + random_int(rng, 0, 3)};
  std::vector<ValueId> parts;
  int64_t channels_in = 0;
  int64_t count = random_int(rng, 2, 4);
  for (int64_t i = 0; i < count; ++i) {
    Shape shape = out;
    shape[1] = random_int(rng, 1, 3);
    channels_in += shape[1];
    std::string name = fmt::format("x{}", i);
    if (i == 0 || random_int(rng, 0, 1) == 0) {
      ValueId x = relu_input(b, name, {1, shape[1], h, w});
      Attributes attrs = {{"mode", std::string(random_int(rng, 0, 1) ? "linear" : "nearest")},
                          {"sizes", shape}};
      parts.push_back(b.op("prim.Resize", {x}, attrs));
    } else {
      parts.push_back(relu_input(b, name, shape));
    }
  }
  std::swap(parts[0], parts[static_cast<size_t>(random_int(rng, 0, count - 1))]);
  ValueId cat = b.op("prim.Concat", parts, {{"axis", int64_t{1}}});
  ValueId weight =
      random_constant(b, rng, {DType::f32, {random_int(rng, 1, 4), channels_in, 1, 1}});
  ValueId y = b.op("prim.Conv", {cat, weight}, pointwise_attrs());
  b.output(b.op("prim.Elementwise", {y}, {{"fn", std::string("neg")}}));
  return g;
}

// --- pointwise_conv_of_affine_rows -----------------------------------------------------------

// The parts of Conv(Reshape(Transpose(MatMul(x, A) + b, [0, 2, 1]), [B, C, H, W]), W).
struct AffineRows {
  const Node* matmul = nullptr;
  const Tensor* a = nullptr;     // [.., K, C]
  const Tensor* bias = nullptr;  // [1, .., 1, C]
};

// A MatMul's constant weight, seen through the Broadcast over batch dims that fission adds when
// the batch is larger than 1; nullptr when it is not constant.
const Tensor* weight(const MatchContext& ctx, ValueId v) {
  if (const Node* broadcast = ctx.producer_if(v, "prim.Broadcast")) v = broadcast->inputs[0];
  return ctx.constant(v);
}

// The affine map of rows that pointwise Conv `n` reads in channels-first order, when each step
// is read by nothing else and composing the two constant maps saves FLOPs (K·C + C·M > K·M per
// row); else nullopt.
std::optional<AffineRows> affine_rows(const MatchContext& ctx, NodeId n) {
  const Node& conv = ctx.node(n);
  if (!pointwise_conv(ctx, conv) || ctx.type(conv.inputs[0]).shape.size() != 4) return {};
  ValueId r = conv.inputs[0];
  const Node* reshape = ctx.producer_if(r, "prim.Reshape");
  if (reshape == nullptr || !ctx.only_used_by(r, n)) return {};
  ValueId t = reshape->inputs[0];
  const Shape& rows_first = ctx.type(t).shape;
  const Shape& channels_first = ctx.type(r).shape;
  if (rows_first.size() != 3 || rows_first[0] != channels_first[0] ||
      rows_first[1] != channels_first[1])
    return {};
  const Node* transpose = ctx.producer_if(t, "prim.Transpose");
  if (transpose == nullptr || !ctx.only_used_by(t, ctx.graph().value(r).producer) ||
      attr_ints(transpose->attrs, "perm") != std::vector<int64_t>{0, 2, 1})
    return {};
  ValueId y = transpose->inputs[0];
  const Node* add = ctx.producer(y);
  if (add == nullptr || !is_ew(*add, "add") || add->inputs.size() != 2 ||
      !ctx.only_used_by(y, ctx.graph().value(t).producer))
    return {};
  NodeId add_id = ctx.graph().value(y).producer;
  for (int slot = 0; slot < 2; ++slot) {
    const Node* matmul = ctx.producer_if(add->inputs[slot], "prim.MatMul");
    const Node* broadcast = ctx.producer_if(add->inputs[1 - slot], "prim.Broadcast");
    if (matmul == nullptr || broadcast == nullptr || !ctx.only_used_by(add->inputs[slot], add_id))
      continue;
    const Tensor* a = weight(ctx, matmul->inputs[1]);
    const Tensor* bias = ctx.constant(broadcast->inputs[0]);
    if (a == nullptr || bias == nullptr || bias->rank() == 0 || a->rank() < 2) continue;
    int64_t k = a->shape()[a->rank() - 2], c = a->shape().back();
    int64_t m = ctx.constant(conv.inputs[1])->shape()[0];
    bool row = bias->shape().back() == c && bias->numel() == c;
    if (row && k * c + c * m > k * m) return AffineRows{matmul, a, bias};
  }
  return {};
}

bool affine_rows_guard(const MatchContext& ctx, NodeId n) {
  return affine_rows(ctx, n).has_value();
}

void affine_rows_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& conv = ctx.node(n);
  AffineRows rows = *affine_rows(ctx, n);
  const Tensor& w = *ctx.constant(conv.inputs[1]);
  int64_t m = w.shape()[0], c = w.shape()[1];
  Tensor wt = evaluate("Transpose", {{"perm", std::vector<int64_t>{1, 0}}}, {w.reshaped({m, c})});
  Ref composed = p.constant(evaluate("MatMul", {}, {*rows.a, wt}));
  Shape batched = p.shape(p.value(rows.matmul->inputs[1]));
  batched.back() = m;
  if (p.shape(composed) != batched)
    composed = p.op("prim.Broadcast", {composed}, {{"shape", batched}});
  Ref mixed = p.op("prim.MatMul", {p.value(rows.matmul->inputs[0]), composed});
  Ref bias = p.op("prim.Broadcast", {p.constant(evaluate("MatMul", {}, {*rows.bias, wt}))},
                  {{"shape", p.shape(mixed)}});
  Ref sum = p.op("prim.Elementwise", {mixed, bias}, {{"fn", std::string("add")}});
  Ref channels_first = p.op("prim.Transpose", {sum}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  p.replace(conv.outputs[0],
            p.op("prim.Reshape", {channels_first}, {{"shape", ctx.type(conv.outputs[0]).shape}}));
}

Graph affine_rows_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int64_t h = random_int(rng, 1, 3), w = random_int(rng, 1, 3);
  int64_t k = random_int(rng, 1, 4), m = random_int(rng, 1, 4), c = std::max(k, m);
  int64_t batch = random_int(rng, 1, 2);
  ValueId x = relu_input(b, "x", {batch, h * w, k});
  ValueId a = random_constant(b, rng, {DType::f32, {1, k, c}});
  if (batch > 1) a = b.op("prim.Broadcast", {a}, {{"shape", Shape{batch, k, c}}});
  ValueId y = b.op("prim.MatMul", {x, a});
  ValueId bias = b.op("prim.Broadcast", {random_constant(b, rng, {DType::f32, {1, 1, c}})},
                      {{"shape", b.type(y).shape}});
  bool swap = random_int(rng, 0, 1) == 0;
  ValueId sum = b.op("prim.Elementwise", swap ? std::vector{bias, y} : std::vector{y, bias},
                     {{"fn", std::string("add")}});
  ValueId t = b.op("prim.Transpose", {sum}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  ValueId r = b.op("prim.Reshape", {t}, {{"shape", Shape{batch, c, h, w}}});
  ValueId weight = random_constant(b, rng, {DType::f32, {m, c, 1, 1}});
  ValueId out = b.op("prim.Conv", {r, weight}, pointwise_attrs());
  b.output(b.op("prim.Elementwise", {out}, {{"fn", std::string("neg")}}));
  return g;
}

// --- strided_conv_of_space_to_depth ----------------------------------------------------------

// The parts of Conv(Concat(Slice_1(x), .., Slice_{s*s}(x), channels), W): each Slice takes every
// s-th row and column of the same 4-D x from its own offset (dy, dx) in [0, s)^2, all of
// batch and channels, and x's rows and columns are multiples of s.
struct SpaceToDepth {
  ValueId x = kNoValue;
  int64_t s = 0;
  std::vector<std::pair<int64_t, int64_t>> offsets;  // per part, in concat order
};

// The offset (dy, dx) of Slice `slice` over x when it is such a part of stride `s`.
std::optional<std::pair<int64_t, int64_t>> strided_offset(const MatchContext& ctx,
                                                          const Node& slice, int64_t s) {
  const Shape& in = ctx.type(slice.inputs[0]).shape;
  std::vector<int64_t> starts = attr_ints(slice.attrs, "starts", {});
  std::vector<int64_t> steps = attr_ints(slice.attrs, "steps", {});
  const Shape& out = ctx.type(slice.outputs[0]).shape;
  if (in.size() != 4 || starts.size() != 4 || steps != std::vector<int64_t>{1, 1, s, s} ||
      starts[0] != 0 || starts[1] != 0 || out[0] != in[0] || out[1] != in[1])
    return {};
  for (int d = 2; d < 4; ++d)
    if (in[d] % s != 0 || out[d] != in[d] / s || starts[d] < 0 || starts[d] >= s) return {};
  return std::pair{starts[2], starts[3]};
}

std::optional<SpaceToDepth> space_to_depth(const MatchContext& ctx, NodeId n) {
  const Node& conv = ctx.node(n);
  if (conv.op != "prim.Conv" || conv.inputs.size() != 2 ||
      ctx.constant(conv.inputs[1]) == nullptr || attr_int(conv.attrs, "group", 1) != 1 ||
      !all_ones(attr_ints(conv.attrs, "strides", {})) ||
      !all_ones(attr_ints(conv.attrs, "dilations", {1, 1})))
    return {};
  const Node* concat = ctx.producer_if(conv.inputs[0], "prim.Concat");
  if (concat == nullptr || !ctx.only_used_by(conv.inputs[0], n) ||
      attr_int(concat->attrs, "axis", 0) != 1)
    return {};
  SpaceToDepth split;
  for (int64_t s = 2; s * s <= static_cast<int64_t>(concat->inputs.size()); ++s)
    if (s * s == static_cast<int64_t>(concat->inputs.size())) split.s = s;
  if (split.s == 0) return {};
  for (ValueId part : concat->inputs) {
    const Node* slice = ctx.producer_if(part, "prim.Slice");
    if (slice == nullptr || (split.x != kNoValue && slice->inputs[0] != split.x)) return {};
    split.x = slice->inputs[0];
    auto offset = strided_offset(ctx, *slice, split.s);
    if (!offset ||
        std::find(split.offsets.begin(), split.offsets.end(), *offset) != split.offsets.end())
      return {};
    split.offsets.push_back(*offset);
  }
  return split;
}

bool space_to_depth_guard(const MatchContext& ctx, NodeId n) {
  return space_to_depth(ctx, n).has_value();
}

void space_to_depth_apply(const MatchContext& ctx, NodeId n, Patch& p) {
  const Node& conv = ctx.node(n);
  SpaceToDepth split = *space_to_depth(ctx, n);
  const Tensor& w = *ctx.constant(conv.inputs[1]);
  int64_t m = w.shape()[0], c = ctx.type(split.x).shape[1], kh = w.shape()[2], kw = w.shape()[3];
  int64_t s = split.s;
  // Tap (ky, kx) of part (dy, dx) reads x at s * (pixel + ky - pad) + dy: tap s*ky + dy of a
  // kernel s times as large, moved s pixels per output pixel, with s times the padding.
  Tensor strided(w.dtype(), {m, c, s * kh, s * kw});
  for (int64_t o = 0; o < m; ++o)
    for (size_t part = 0; part < split.offsets.size(); ++part)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            auto [dy, dx] = split.offsets[part];
            int64_t from =
                ((o * s * s * c + static_cast<int64_t>(part) * c + ci) * kh + ky) * kw + kx;
            int64_t to = ((o * c + ci) * s * kh + s * ky + dy) * s * kw + s * kx + dx;
            strided.set(to, w.get(from));
          }
  Attributes attrs = conv.attrs;
  std::vector<int64_t> pads = attr_ints(conv.attrs, "pads", {0, 0, 0, 0});
  for (int64_t& pad : pads) pad *= s;
  attrs["pads"] = pads;
  attrs["strides"] = std::vector<int64_t>{s, s};
  attrs["dilations"] = std::vector<int64_t>{1, 1};
  p.replace(conv.outputs[0],
            p.op("prim.Conv", {p.value(split.x), p.constant(std::move(strided))}, attrs));
}

Graph space_to_depth_sample(std::mt19937& rng) {
  Graph g;
  Builder b(g);
  int64_t s = random_int(rng, 2, 3), c = random_int(rng, 1, 3);
  int64_t k = random_int(rng, 1, 3);
  ValueId x = relu_input(b, "x", {1, c, s * random_int(rng, k, 3), s * random_int(rng, k, 3)});
  std::vector<std::pair<int64_t, int64_t>> offsets;
  for (int64_t dy = 0; dy < s; ++dy)
    for (int64_t dx = 0; dx < s; ++dx) offsets.push_back({dy, dx});
  std::shuffle(offsets.begin(), offsets.end(), rng);
  Shape shape = b.type(x).shape;  // a copy: the builder's values grow below
  std::vector<ValueId> parts;
  for (auto [dy, dx] : offsets)
    parts.push_back(b.op("prim.Slice", {x},
                         {{"starts", std::vector<int64_t>{0, 0, dy, dx}},
                          {"ends", std::vector<int64_t>{shape[0], shape[1], shape[2], shape[3]}},
                          {"steps", std::vector<int64_t>{1, 1, s, s}}}));
  ValueId cat = b.op("prim.Concat", parts, {{"axis", int64_t{1}}});
  ValueId weight = random_constant(b, rng, {DType::f32, {random_int(rng, 1, 4), s * s * c, k, k}});
  std::vector<int64_t> pads;
  for (int i = 0; i < 4; ++i) pads.push_back(random_int(rng, 0, k - 1));
  ValueId y = b.op("prim.Conv", {cat, weight},
                   {{"strides", std::vector<int64_t>{1, 1}},
                    {"dilations", std::vector<int64_t>{1, 1}},
                    {"pads", pads}});
  b.output(b.op("prim.Elementwise", {y}, {{"fn", std::string("neg")}}));
  return g;
}

}  // namespace

void add_linear_rules(RuleTable& rules) {
  rules.push_back({"pointwise_conv_before_resize", "linear",
                   "Conv(Resize(x), W) = Resize(Conv(x, W)) for a constant W of 1x1 kernels, "
                   "stride 1, no padding, one group, and a Resize that upsamples the spatial "
                   "dims only (any mode; not tf_crop_and_resize) read by nothing else: both are "
                   "linear and act on different axes; the Conv then runs on fewer pixels",
                   "prim.Conv", before_resize_guard, before_resize_apply, before_resize_sample,
                   true});
  rules.push_back({"pointwise_conv_over_concat", "linear",
                   "Conv(Concat(x1..xn, channels), W) = Conv(x1, W1) + ... + Conv(xn, Wn) with "
                   "Wi the channels of the constant pointwise W that xi fills, the Concat read by "
                   "nothing else; a part that is an upsampling Resize (as for "
                   "pointwise_conv_before_resize) is convolved before it: applied only where one "
                   "is, as the FLOPs then drop",
                   "prim.Conv", over_concat_guard, over_concat_apply, over_concat_sample});
  rules.push_back({"pointwise_conv_of_affine_rows", "linear",
                   "Conv(Reshape(Transpose(x·A + b, [0, 2, 1]), [B, C, H, W]), W) = "
                   "Reshape(Transpose(x·(A·Wt) + b·Wt, [0, 2, 1]), [B, M, H, W]) for constants A "
                   "[.., K, C], b (one row of C, broadcast) and pointwise W [M, C, 1, 1] (Wt its "
                   "[C, M] transpose), each step read by nothing else, where K·C + C·M > K·M: "
                   "two linear maps compose into one with fewer FLOPs per row",
                   "prim.Conv", affine_rows_guard, affine_rows_apply, affine_rows_sample, true});
  rules.push_back({"strided_conv_of_space_to_depth", "linear",
                   "Conv(Concat(Slice(x, offset (dy, dx), step s) for every (dy, dx) in [0, s)^2, "
                   "channels), W) = Conv(x, W', stride s, pads s times W's) for 4-D x whose rows "
                   "and columns are multiples of s, a constant W of stride 1, dilation 1, one "
                   "group, and the Concat read by nothing else: W'[o, c, s*ky + dy, s*kx + dx] is "
                   "the weight of channel c of part (dy, dx) at tap (ky, kx); same FLOPs, no "
                   "intermediate (YOLOX's Focus)",
                   "prim.Conv", space_to_depth_guard, space_to_depth_apply, space_to_depth_sample,
                   true});
}

}  // namespace orch::rewrite
