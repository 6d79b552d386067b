// Shape rules of the normalization ops: the softmax family (along one axis), the
// mean/variance normalizations, LpNormalization and LRN. Every output but LayerNormalization's
// statistics has the input's type.
#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

int64_t rank_of(const InferInput& in, size_t i) {
  return static_cast<int64_t>(in.type(i).shape.size());
}

// Softmax, LogSoftmax, Hardmax (opset 13: along `axis` only) and LpNormalization.
std::vector<TensorType> along_axis_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "input");
  normalize_axis(attr_int(in.attrs, "axis", -1), rank_of(in, 0));
  return one(x.dtype, x.shape);
}

std::vector<TensorType> lp_norm_shape(const InferInput& in) {
  int64_t p = attr_int(in.attrs, "p", 2);
  check(p == 1 || p == 2, "p must be 1 or 2, got {}", p);
  return along_axis_shape(in);
}

// Throws unless input `i` is a float tensor of shape [n]; `what` names it.
void require_vector(const InferInput& in, size_t i, int64_t n, std::string_view what) {
  require_float(in.type(i).dtype, what);
  check(in.type(i).shape == Shape{n}, "{} must have shape [{}], got {}", what, n,
        format_shape(in.type(i).shape));
}

// The channel count of an [N, C, D1, ...] input.
int64_t channels(const InferInput& in) {
  require_float(in.type(0).dtype, "input");
  check(rank_of(in, 0) >= 2, "input must have shape [N, C, ...], got {}",
        format_shape(in.type(0).shape));
  return in.type(0).shape[1];
}

// The dtype of LayerNormalization's Mean and InvStdDev outputs; stash_type is an ONNX
// TensorProto data type code.
DType stash_dtype(const Attributes& attrs) {
  int64_t stash = attr_int(attrs, "stash_type", 1);
  if (stash != 1) unsupported("stash_type {} is not supported (only 1, float32)", stash);
  return DType::f32;
}

std::vector<TensorType> layer_norm_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "X");
  require_same_dtype(in);
  int64_t rank = rank_of(in, 0);
  int64_t axis = attr_int(in.attrs, "axis", -1);
  check(axis >= -rank && axis <= rank, "axis {} is out of range [{}, {}]", axis, -rank, rank);
  if (axis < 0) axis += rank;
  for (size_t i = 1; i < 3; ++i)
    if (in.has(i))
      check(broadcast_shapes(in.type(i).shape, x.shape) == x.shape,
            "input {} of shape {} does not broadcast to X's shape {}", i,
            format_shape(in.type(i).shape), format_shape(x.shape));
  DType stash = stash_dtype(in.attrs);
  Shape stats = x.shape;
  for (int64_t d = axis; d < rank; ++d) stats[d] = 1;
  std::vector<TensorType> out = {x};
  for (int i = 1; i < in.num_outputs; ++i) out.push_back({stash, stats});
  return out;
}

std::vector<TensorType> instance_norm_shape(const InferInput& in) {
  int64_t c = channels(in);
  require_vector(in, 1, c, "scale");
  require_vector(in, 2, c, "B");
  require_same_dtype(in);
  return one(in.type(0).dtype, in.type(0).shape);
}

// Inference form: one output. Training form (training_mode=1): the batch statistics normalize,
// and the running mean and variance come out as outputs 1 and 2.
std::vector<TensorType> batch_norm_shape(const InferInput& in) {
  bool training = attr_int(in.attrs, "training_mode", 0) != 0;
  check(training || in.num_outputs == 1,
        "running_mean and running_var exist only in training mode");
  int64_t c = channels(in);
  require_vector(in, 1, c, "scale");
  require_vector(in, 2, c, "B");
  require_vector(in, 3, c, "input_mean");
  require_vector(in, 4, c, "input_var");
  std::vector<TensorType> out = {in.type(0)};
  for (int i = 1; i < in.num_outputs; ++i) out.push_back(in.type(2 + i));
  return out;
}

// scale and bias may have shape [C] (opset 21) or [num_groups] (opset 18); the two agree when
// C == num_groups, so either is read unambiguously.
std::vector<TensorType> group_norm_shape(const InferInput& in) {
  int64_t c = channels(in);
  check(has_attr(in.attrs, "num_groups"), "attribute 'num_groups' is required");
  int64_t groups = attr_int(in.attrs, "num_groups", 0);
  check(groups >= 1 && c % groups == 0, "num_groups {} must divide the channel count {}", groups,
        c);
  stash_dtype(in.attrs);
  for (size_t i = 1; i < 3; ++i) {
    const Shape& s = in.type(i).shape;
    check(s == Shape{c} || s == Shape{groups},
          "input {} must have shape [{}] (channels) or [{}] (groups), got {}", i, c, groups,
          format_shape(s));
  }
  require_same_dtype(in);
  return one(in.type(0).dtype, in.type(0).shape);
}

std::vector<TensorType> mvn_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "input");
  normalize_axes(attr_ints(in.attrs, "axes", {0, 2, 3}), rank_of(in, 0));
  return one(x.dtype, x.shape);
}

// alpha, beta and bias may be any floats; size, the channel window, is required and positive.
std::vector<TensorType> lrn_shape(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "X");
  check(rank_of(in, 0) >= 3, "X must have shape [N, C, D1, ...] (rank >= 3), got {}",
        format_shape(x.shape));
  check(has_attr(in.attrs, "size"), "attribute 'size' is required");
  int64_t size = attr_int(in.attrs, "size", 0);
  check(size >= 1, "size must be positive, got {}", size);
  return one(x.dtype, x.shape);
}

}  // namespace

void add_normalization_ops(std::vector<OpSchema>& table) {
  for (std::string_view op : {"Softmax", "LogSoftmax", "Hardmax"})
    table.push_back({.name = op, .infer = along_axis_shape});
  table.push_back({.name = "LpNormalization", .infer = lp_norm_shape});
  table.push_back({.name = "LayerNormalization",
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .max_outputs = 3,
                   .infer = layer_norm_shape});
  table.push_back({.name = "InstanceNormalization",
                   .min_inputs = 3,
                   .max_inputs = 3,
                   .infer = instance_norm_shape});
  table.push_back({.name = "BatchNormalization",
                   .min_inputs = 5,
                   .max_inputs = 5,
                   .max_outputs = 3,
                   .infer = batch_norm_shape});
  table.push_back(
      {.name = "GroupNormalization", .min_inputs = 3, .max_inputs = 3, .infer = group_norm_shape});
  table.push_back({.name = "MeanVarianceNormalization", .infer = mvn_shape});
  table.push_back({.name = "LRN", .infer = lrn_shape});
}

}  // namespace orch::ops
