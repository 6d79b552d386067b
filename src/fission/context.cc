// RuleContext: the helpers rules build primitives with.
#include <algorithm>

#include "fission/rule.h"
#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::fission {

int64_t onnx_code(DType t) {
  static constexpr int64_t kCodes[] = {1, 11, 10, 16, 3, 2, 5, 4, 6, 12, 7, 13, 9};
  return kCodes[static_cast<int>(t)];
}

RuleContext::RuleContext(const Graph& source, NodeId node, Graph& target,
                         std::vector<ValueId> inputs)
    : source_(source), node_(node), target_(target), inputs_(std::move(inputs)) {}

const Tensor& RuleContext::constant(size_t i) const {
  check(is_constant(i), "input {} must be a constant", i);
  return target_.value(in(i)).constant;
}

bool RuleContext::is_constant(size_t i) const {
  return has(i) && target_.value(in(i)).is_constant();
}

const TensorType& RuleContext::out_type(size_t i) const {
  return source_.value(node().outputs.at(i)).type;
}

bool RuleContext::output_used(size_t i) const {
  if (consumers_.empty()) consumers_ = source_.consumers();
  ValueId v = node().outputs.at(i);
  const auto& outs = source_.outputs();
  return !consumers_[v].empty() || std::find(outs.begin(), outs.end(), v) != outs.end();
}

ValueId RuleContext::emit(const std::string& op, std::vector<ValueId> inputs, Attributes attrs) {
  Builder b(target_);
  return b.op(op, std::move(inputs), std::move(attrs),
              target_.fresh_name(fmt::format("fission.{}", op.substr(op.find('.') + 1))));
}

ValueId RuleContext::constant_value(Tensor t) {
  return target_.add_constant(target_.fresh_name("fission.c"), std::move(t));
}

ValueId RuleContext::scalar(double v, DType dtype) {
  return constant_value(Tensor::scalar(dtype, v));
}

ValueId RuleContext::broadcast_to(ValueId v, const Shape& shape) {
  Shape s = shape_of(v);
  if (s == shape) return v;
  check(s.size() <= shape.size(), "cannot broadcast {} to {}", format_shape(s),
        format_shape(shape));
  if (s.size() < shape.size()) {
    Shape padded(shape.size() - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    v = reshape(v, padded);
    s = padded;
  }
  if (s == shape) return v;
  return emit("prim.Broadcast", {v}, {{"shape", shape}});
}

ValueId RuleContext::ew(const std::string& fn, std::vector<ValueId> inputs, Attributes extra) {
  Shape out;
  for (ValueId v : inputs) out = ops::broadcast_shapes(out, shape_of(v));
  for (ValueId& v : inputs) {
    const Shape& s = shape_of(v);
    if (s.empty() || s == out) continue;
    v = num_elements(s) == 1 ? reshape(v, {}) : broadcast_to(v, out);
  }
  extra["fn"] = fn;
  return emit("prim.Elementwise", std::move(inputs), std::move(extra));
}

ValueId RuleContext::reshape(ValueId v, const Shape& shape) {
  if (shape_of(v) == shape) return v;
  return emit("prim.Reshape", {v}, {{"shape", shape}});
}

ValueId RuleContext::transpose(ValueId v, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  return emit("prim.Transpose", {v}, {{"perm", perm}});
}

ValueId RuleContext::reduce(const std::string& kind, ValueId v, std::vector<int64_t> axes) {
  if (axes.empty()) return v;
  return emit("prim.Reduce", {v}, {{"kind", kind}, {"axes", axes}});
}

ValueId RuleContext::mean(ValueId v, const std::vector<int64_t>& axes) {
  int64_t rank = static_cast<int64_t>(shape_of(v).size());
  int64_t n = 1;
  for (int64_t a : ops::normalize_axes(axes, rank)) n *= shape_of(v)[a];
  ValueId sum = reduce("sum", v, axes);
  return ew("mul", {sum, scalar(1.0 / static_cast<double>(n), dtype(v))});
}

ValueId RuleContext::cast(ValueId v, DType to) {
  if (dtype(v) == to) return v;
  return emit("prim.Elementwise", {v}, {{"fn", std::string("cast")}, {"to", onnx_code(to)}});
}

ValueId RuleContext::slice_axis(ValueId v, int64_t axis, int64_t start, int64_t count,
                                int64_t step) {
  const Shape& s = shape_of(v);
  axis = ops::normalize_axis(axis, static_cast<int64_t>(s.size()));
  if (start == 0 && step == 1 && count == s[axis]) return v;
  std::vector<int64_t> starts(s.size(), 0), ends = s, steps(s.size(), 1);
  starts[axis] = start;
  ends[axis] = start + count * step;
  steps[axis] = step;
  return emit("prim.Slice", {v}, {{"starts", starts}, {"ends", ends}, {"steps", steps}});
}

}  // namespace orch::fission
