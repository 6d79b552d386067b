// The opset-normalization rules. Each rule is (op, first opset where the op has the form orch
// reads, rewrite): it applies to nodes of models whose default-domain opset is below that
// version. Rules apply in table order, so a node may go through several (e.g. the generic
// `consumed_inputs` removal, then its own).
#include "frontend/opset_upgrade.h"

#include <onnx/onnx_pb.h>

#include <optional>

#include "ir/error.h"

namespace orch::frontend {
namespace {

// A rewrite in progress: the node, and new nodes that go before or after it.
struct Rewrite {
  OnnxNode& node;
  int opset;
  UpgradeContext& ctx;
  std::vector<OnnxNode> before;
  std::vector<OnnxNode> after;
};

using RewriteFn = void (*)(Rewrite&);

struct UpgradeRule {
  std::string_view op;  // "*" matches every op
  int until;            // applies when the model's opset is below this
  RewriteFn rewrite;
};

std::optional<AttrValue> take_attr(OnnxNode& node, std::string_view name) {
  auto it = node.attrs.find(name);
  if (it == node.attrs.end()) return std::nullopt;
  AttrValue value = std::move(it->second);
  node.attrs.erase(it);
  return value;
}

// The type of input `slot`: rules run before the op's schema checks the arity, so a node
// missing the input must be an error here, not an index past the end of its inputs.
const TensorType& input_type(const Rewrite& r, size_t slot) {
  check(slot < r.node.inputs.size(), "{} needs input {}", r.node.op, slot);
  return r.ctx.type_of(r.node.inputs[slot]);
}

void set_input(OnnxNode& node, size_t slot, std::string name) {
  if (node.inputs.size() <= slot) node.inputs.resize(slot + 1);
  node.inputs[slot] = std::move(name);
}

std::string ints_constant(Rewrite& r, const std::vector<int64_t>& values, std::string_view base) {
  return r.ctx.add_constant(
      Tensor::from_ints(DType::i64, {static_cast<int64_t>(values.size())}, values), base);
}

// A rank-0 constant of `dtype` holding `value` (Clip bounds, Pad's value).
std::string scalar_constant(Rewrite& r, DType dtype, double value, std::string_view base) {
  return r.ctx.add_constant(Tensor::scalar(dtype, value), base);
}

// A Reshape of `input` to `shape`, run before the node; returns the reshaped value's name.
std::string reshape_before(Rewrite& r, const std::string& input, const Shape& shape) {
  std::string out = r.ctx.fresh_name(input + "_reshaped");
  r.before.push_back({"Reshape", "", {input, ints_constant(r, shape, "shape")}, {out}, {}});
  return out;
}

// Moves an ints attribute (axes, split, starts...) to an i64 input slot.
void ints_attr_to_input(Rewrite& r, std::string_view attr, size_t slot) {
  std::optional<AttrValue> value = take_attr(r.node, attr);
  if (!value) return;
  const auto* ints = std::get_if<std::vector<int64_t>>(&*value);
  check(ints != nullptr, "attribute '{}' must be a list of ints", attr);
  set_input(r.node, slot, ints_constant(r, *ints, attr));
}

void drop_consumed_inputs(Rewrite& r) {
  take_attr(r.node, "consumed_inputs");
}

void axes_to_input(Rewrite& r) {
  ints_attr_to_input(r, "axes", 1);
}

void split_to_input(Rewrite& r) {
  ints_attr_to_input(r, "split", 1);
}

void slice_attrs_to_inputs(Rewrite& r) {
  check(has_attr(r.node.attrs, "starts") && has_attr(r.node.attrs, "ends"),
        "Slice needs 'starts' and 'ends'");
  ints_attr_to_input(r, "starts", 1);
  ints_attr_to_input(r, "ends", 2);
  ints_attr_to_input(r, "axes", 3);
}

void reshape_attr_to_input(Rewrite& r) {
  ints_attr_to_input(r, "shape", 1);
}

void topk_attr_to_input(Rewrite& r) {
  std::vector<int64_t> k = {attr_int(r.node.attrs, "k", -1)};
  check(k[0] >= 0, "TopK needs a non-negative 'k'");
  take_attr(r.node, "k");
  set_input(r.node, 1, ints_constant(r, k, "k"));
}

void pad_attrs_to_inputs(Rewrite& r) {
  // Opset 1 called the pads `paddings`.
  if (has_attr(r.node.attrs, "paddings")) {
    r.node.attrs["pads"] = *take_attr(r.node, "paddings");
  }
  check(has_attr(r.node.attrs, "pads"), "Pad needs 'pads'");
  ints_attr_to_input(r, "pads", 1);
  if (std::optional<AttrValue> value = take_attr(r.node, "value")) {
    const auto* v = std::get_if<float>(&*value);
    check(v != nullptr, "attribute 'value' must be a float");
    DType dtype = input_type(r, 0).dtype;
    set_input(r.node, 2, scalar_constant(r, dtype, *v, "pad_value"));
  }
}

void clip_attrs_to_inputs(Rewrite& r) {
  DType dtype = input_type(r, 0).dtype;
  if (has_attr(r.node.attrs, "min"))
    set_input(r.node, 1, scalar_constant(r, dtype, attr_float(r.node.attrs, "min", 0), "min"));
  if (has_attr(r.node.attrs, "max"))
    set_input(r.node, 2, scalar_constant(r, dtype, attr_float(r.node.attrs, "max", 0), "max"));
  take_attr(r.node, "min");
  take_attr(r.node, "max");
}

// Before opset 13, Softmax-like ops saw the input as 2-D: [prod(dims[:axis]), prod(dims[axis:])].
void coerced_softmax(Rewrite& r) {
  const Shape shape = input_type(r, 0).shape;
  auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = attr_int(r.node.attrs, "axis", 1);
  check(axis >= -rank && axis < std::max<int64_t>(rank, 1), "axis {} is out of range for rank {}",
        axis, rank);
  if (axis < 0) axis += rank;
  r.node.attrs["axis"] = int64_t{-1};
  if (axis >= rank - 1) return;
  check(!r.node.outputs.empty(), "{} needs an output", r.node.op);
  Shape flat(shape.begin(), shape.begin() + axis);
  flat.push_back(num_elements(Shape(shape.begin() + axis, shape.end())));
  r.node.inputs[0] = reshape_before(r, r.node.inputs[0], flat);
  std::string result = r.node.outputs[0];
  r.node.outputs[0] = r.ctx.fresh_name(result + "_flat");
  r.after.push_back(
      {"Reshape", "", {r.node.outputs[0], ints_constant(r, shape, "shape")}, {result}, {}});
}

// Before opset 7, binary ops broadcast only with broadcast=1, aligning B at `axis` of A.
void legacy_broadcast(Rewrite& r) {
  int64_t broadcast = attr_int(r.node.attrs, "broadcast", 0);
  std::optional<AttrValue> axis_attr = take_attr(r.node, "axis");
  take_attr(r.node, "broadcast");
  if (broadcast == 0 || r.node.inputs.size() < 2) return;
  auto rank_a = static_cast<int64_t>(input_type(r, 0).shape.size());
  Shape b = input_type(r, 1).shape;
  auto rank_b = static_cast<int64_t>(b.size());
  int64_t axis = rank_a - rank_b;
  if (axis_attr) {
    const auto* a = std::get_if<int64_t>(&*axis_attr);
    check(a != nullptr, "attribute 'axis' must be an int");
    axis = *a < 0 ? *a + rank_a : *a;
  }
  int64_t trailing = rank_a - axis - rank_b;
  check(axis >= 0 && trailing >= 0, "broadcast axis {} does not fit ranks {} and {}", axis, rank_a,
        rank_b);
  if (trailing == 0) return;
  b.insert(b.end(), trailing, 1);
  r.node.inputs[1] = reshape_before(r, r.node.inputs[1], b);
}

void drop_broadcast(Rewrite& r) {
  take_attr(r.node, "broadcast");
}

// Before opset 7, PRelu's 1-D slope applied along the channel dim (1), not the last.
void prelu_channel_slope(Rewrite& r) {
  Shape x = input_type(r, 0).shape;
  Shape slope = input_type(r, 1).shape;
  if (slope.size() != 1 || slope[0] == 1 || x.size() < 3) return;
  Shape per_channel(x.size() - 1, 1);
  per_channel[0] = slope[0];
  r.node.inputs[1] = reshape_before(r, r.node.inputs[1], per_channel);
}

// Drops trailing outputs that nothing reads; an extra output in use is an error.
void drop_unused_outputs(Rewrite& r, size_t keep, std::string_view why) {
  for (size_t i = keep; i < r.node.outputs.size(); ++i)
    if (!r.node.outputs[i].empty() && r.ctx.is_used(r.node.outputs[i]))
      unsupported("output {} ('{}') is used: {}", i, r.node.outputs[i], why);
  if (r.node.outputs.size() > keep) r.node.outputs.resize(keep);
}

void batchnorm_legacy(Rewrite& r) {
  take_attr(r.node, "is_test");
  if (attr_int(r.node.attrs, "spatial", 1) != 1) unsupported("spatial=0 is not supported");
  take_attr(r.node, "spatial");
  drop_unused_outputs(r, 1, "training-mode BatchNormalization is not supported");
}

void dropout_legacy(Rewrite& r) {
  take_attr(r.node, "is_test");
  take_attr(r.node, "ratio");
  // Before opset 10 the mask had the data's type, not bool.
  if (r.opset < 10) drop_unused_outputs(r, 1, "the pre-opset-10 Dropout mask is not supported");
}

// Upsample and Resize-10 take (X, scales) and map output pixel i to input i / scale, rounded
// down: Resize's asymmetric mode.
void resize_from_scales(Rewrite& r) {
  check(r.node.inputs.size() == 2, "{} needs scales", r.node.op);
  std::string mode = attr_string(r.node.attrs, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear")
    unsupported("{} mode '{}' is not supported", r.node.op, mode);
  r.node.op = "Resize";
  r.node.attrs["mode"] = std::string(mode == "nearest" ? "nearest" : "linear");
  r.node.inputs = {r.node.inputs[0], "", r.node.inputs[1]};
  r.node.attrs["coordinate_transformation_mode"] = std::string("asymmetric");
  if (mode == "nearest") r.node.attrs["nearest_mode"] = std::string("floor");
}

void upsample_to_resize(Rewrite& r) {
  if (r.opset < 7) unsupported("Upsample before opset 7 is not supported");
  // Opset 7 gave the scales as an attribute, opset 9 as an input.
  if (std::optional<AttrValue> scales = take_attr(r.node, "scales")) {
    const auto* s = std::get_if<std::vector<float>>(&*scales);
    check(s != nullptr, "attribute 'scales' must be a list of floats");
    std::vector<double> values(s->begin(), s->end());
    auto n = static_cast<int64_t>(values.size());
    set_input(r.node, 1,
              r.ctx.add_constant(Tensor::from_doubles(DType::f32, {n}, values), "scales"));
  }
  resize_from_scales(r);
}

// Opsets 11 and 12 required roi and scales; an empty tensor meant "not given".
void resize_empty_inputs_absent(Rewrite& r) {
  for (size_t slot : {1, 2})
    if (slot < r.node.inputs.size() && !r.node.inputs[slot].empty()) {
      const Tensor* t = r.ctx.constant_of(r.node.inputs[slot]);
      if (t != nullptr && t->numel() == 0) r.node.inputs[slot] = "";
    }
}

void scatter_to_scatter_elements(Rewrite& r) {
  r.node.op = "ScatterElements";
}

// Opset 1 wrote Cast's target type as a string ("FLOAT").
void cast_string_to(Rewrite& r) {
  const auto* to = std::get_if<std::string>(&r.node.attrs["to"]);
  if (to == nullptr) return;
  onnx::TensorProto::DataType type = onnx::TensorProto::UNDEFINED;
  check(onnx::TensorProto::DataType_Parse(*to, &type), "Cast to unknown type '{}'", *to);
  r.node.attrs["to"] = static_cast<int64_t>(type);
}

void concat_default_axis(Rewrite& r) {
  if (!has_attr(r.node.attrs, "axis")) r.node.attrs["axis"] = int64_t{1};
}

// Opset 1 gave LpPool's p as a float.
void lp_pool_int_p(Rewrite& r) {
  if (const auto* p = std::get_if<float>(&r.node.attrs["p"])) {
    if (*p != static_cast<float>(static_cast<int64_t>(*p)))
      unsupported("non-integer p {} is not supported", *p);
    r.node.attrs["p"] = static_cast<int64_t>(*p);
  }
}

// Before opset 7 the recurrent ops had `output_sequence`; whether Y is wanted now shows in
// the node's outputs alone.
void drop_output_sequence(Rewrite& r) {
  take_attr(r.node, "output_sequence");
}

void reject_tile_1(Rewrite& r) {
  unsupported("the 3-input Tile of opset 1 is not supported");
}

constexpr UpgradeRule kRules[] = {
    {"*", 6, drop_consumed_inputs},
    {"Add", 7, legacy_broadcast},
    {"Sub", 7, legacy_broadcast},
    {"Mul", 7, legacy_broadcast},
    {"Div", 7, legacy_broadcast},
    {"Pow", 7, legacy_broadcast},
    {"And", 7, legacy_broadcast},
    {"Or", 7, legacy_broadcast},
    {"Xor", 7, legacy_broadcast},
    {"Equal", 7, legacy_broadcast},
    {"Greater", 7, legacy_broadcast},
    {"Less", 7, legacy_broadcast},
    {"Gemm", 7, drop_broadcast},
    {"PRelu", 7, prelu_channel_slope},
    {"BatchNormalization", 14, batchnorm_legacy},
    {"Dropout", 12, dropout_legacy},
    {"Squeeze", 13, axes_to_input},
    {"Unsqueeze", 13, axes_to_input},
    {"ReduceSum", 13, axes_to_input},
    {"Split", 13, split_to_input},
    {"Slice", 10, slice_attrs_to_inputs},
    {"Pad", 11, pad_attrs_to_inputs},
    {"Clip", 11, clip_attrs_to_inputs},
    {"TopK", 10, topk_attr_to_input},
    {"Reshape", 5, reshape_attr_to_input},
    {"Softmax", 13, coerced_softmax},
    {"LogSoftmax", 13, coerced_softmax},
    {"Hardmax", 13, coerced_softmax},
    {"Upsample", kTargetOpset + 1, upsample_to_resize},
    {"Resize", 11, resize_from_scales},
    {"Resize", 13, resize_empty_inputs_absent},
    {"Scatter", kTargetOpset + 1, scatter_to_scatter_elements},
    {"Cast", 6, cast_string_to},
    {"Concat", 4, concat_default_axis},
    {"LpPool", 2, lp_pool_int_p},
    {"GlobalLpPool", 2, lp_pool_int_p},
    {"RNN", 7, drop_output_sequence},
    {"GRU", 7, drop_output_sequence},
    {"LSTM", 7, drop_output_sequence},
    {"Tile", 6, reject_tile_1},
};

// Ops whose opset-17 name differs.
struct Rename {
  std::string_view from;
  std::string_view to;
};
constexpr Rename kRenames[] = {{"Upsample", "Resize"}, {"Scatter", "ScatterElements"}};

}  // namespace

std::vector<OnnxNode> upgrade_node(OnnxNode node, int opset, UpgradeContext& ctx) {
  Rewrite r{node, opset, ctx, {}, {}};
  // Match on the original op: a rename (Upsample -> Resize) must not trigger the new op's rules.
  const std::string op = node.op;
  for (const UpgradeRule& rule : kRules)
    if ((rule.op == "*" || rule.op == op) && opset < rule.until) rule.rewrite(r);
  std::vector<OnnxNode> result = std::move(r.before);
  result.push_back(std::move(node));
  for (OnnxNode& n : r.after) result.push_back(std::move(n));
  return result;
}

std::string_view upgraded_op_name(std::string_view op) {
  for (const Rename& rename : kRenames)
    if (rename.from == op) return rename.to;
  return op;
}

}  // namespace orch::frontend
