// Shape rules of the generator ops: outputs made from shapes, attributes or constant scalars.
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/layout_params.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// A scalar (or one-element) input; `what` names it in errors.
void require_scalar(const InferInput& in, size_t i, std::string_view what) {
  check(num_elements(in.type(i).shape) == 1, "{} must be a scalar, got shape {}", what,
        format_shape(in.type(i).shape));
}

std::vector<TensorType> shape(const InferInput& in) {
  auto rank = static_cast<int64_t>(in.type(0).shape.size());
  // Out-of-range start and end clamp to [0, rank].
  auto clamp_axis = [rank](int64_t a) {
    return std::min(std::max(a < 0 ? a + rank : a, int64_t{0}), rank);
  };
  int64_t start = clamp_axis(attr_int(in.attrs, "start", 0));
  int64_t end = clamp_axis(attr_int(in.attrs, "end", rank));
  return one(DType::i64, {std::max<int64_t>(end - start, 0)});
}

std::vector<TensorType> size(const InferInput& in) {
  return one(DType::i64, {});
}

std::vector<TensorType> constant_of_shape(const InferInput& in) {
  const Tensor& dims = in.value(0);
  check(dims.dtype() == DType::i64, "the shape input must be i64, got {}",
        dtype_name(dims.dtype()));
  Shape out = int_list(dims, "the shape input");
  if (std::any_of(out.begin(), out.end(), [](int64_t d) { return d < 0; }))
    fail("shape {} has a negative dim", format_shape(out));
  const Tensor* value = attr_tensor(in.attrs, "value");
  if (!value) return one(DType::f32, out);
  check(value->numel() == 1, "value must hold one element, got shape {}",
        format_shape(value->shape()));
  return one(value->dtype(), out);
}

// Element count of Range: max(ceil((limit - start) / delta), 0), exact for integers.
int64_t range_count(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (is_float(start.dtype())) {
    check(delta.get(0) != 0, "delta is 0");
    double n = std::ceil((limit.get(0) - start.get(0)) / delta.get(0));
    check(std::isfinite(n), "range from {} to {} by {} is not finite", start.get(0), limit.get(0),
          delta.get(0));
    // Beyond 2^62 the cast to int64 is undefined; no tensor gets anywhere near that size.
    check(n < 0x1p62, "range from {} to {} by {} has {} elements", start.get(0), limit.get(0),
          delta.get(0), n);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  // In 128 bits, so that neither the span nor negating it (or delta) can overflow.
  __int128 span = static_cast<__int128>(limit.get_int(0)) - start.get_int(0);
  __int128 step = delta.get_int(0);
  check(step != 0, "delta is 0");
  if (step < 0) {
    span = -span;
    step = -step;
  }
  __int128 n = span > 0 ? (span - 1) / step + 1 : 0;
  check(n < (__int128{1} << 62), "range from {} to {} by {} has more than 2^62 elements",
        start.get_int(0), limit.get_int(0), delta.get_int(0));
  return static_cast<int64_t>(n);
}

std::vector<TensorType> range(const InferInput& in) {
  require_same_dtype(in);
  DType t = in.type(0).dtype;
  check(t != DType::boolean, "inputs must be numeric, got bool");
  require_scalar(in, 0, "start");
  require_scalar(in, 1, "limit");
  require_scalar(in, 2, "delta");
  return one(t, {range_count(in.value(0), in.value(1), in.value(2))});
}

std::vector<TensorType> eye_like(const InferInput& in) {
  require_rank(in, 0, 2);
  DType t = has_attr(in.attrs, "dtype")
                ? dtype_from_onnx(attr_int(in.attrs, "dtype", 1), "EyeLike dtype")
                : in.type(0).dtype;
  return one(t, in.type(0).shape);
}

std::vector<TensorType> one_hot(const InferInput& in) {
  const Shape& indices = in.type(0).shape;
  check(in.type(0).dtype != DType::boolean, "indices must be numeric, got bool");
  require_scalar(in, 1, "depth");
  check(in.type(1).dtype != DType::boolean, "depth must be numeric, got bool");
  // Float depths are truncated, as they are when indices are floats.
  int64_t depth = in.value(1).get_int(0);
  check(depth > 0, "depth must be positive, got {}", depth);
  check(num_elements(in.type(2).shape) == 2 && in.type(2).shape.size() == 1,
        "values must be [off, on], got shape {}", format_shape(in.type(2).shape));
  auto rank = static_cast<int64_t>(indices.size());
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", -1), rank + 1);
  Shape out = indices;
  out.insert(out.begin() + axis, depth);
  return one(in.type(2).dtype, out);
}

// HannWindow, HammingWindow, BlackmanWindow: a constant integer scalar size -> [size] of
// output_datatype (f32 by default).
std::vector<TensorType> window(const InferInput& in) {
  require_dtype(in.type(0).dtype, {DType::i32, DType::i64}, "the window size");
  require_scalar(in, 0, "the window size");
  int64_t size = in.value(0).get_int(0);
  check(size >= 0, "the window size must not be negative, got {}", size);
  int64_t periodic = attr_int(in.attrs, "periodic", 1);
  check(periodic == 0 || periodic == 1, "periodic must be 0 or 1, got {}", periodic);
  DType t = dtype_from_onnx(attr_int(in.attrs, "output_datatype", 1), "output_datatype");
  check(t != DType::boolean, "output_datatype must be numeric, got bool");
  return one(t, {size});
}

// MelWeightMatrix: constant integer scalars num_mel_bins, dft_length, sample_rate and float
// scalars lower_edge_hertz, upper_edge_hertz -> [dft_length / 2 + 1, num_mel_bins] of
// output_datatype (f32 by default).
std::vector<TensorType> mel_weight_matrix(const InferInput& in) {
  const char* names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                         "upper_edge_hertz"};
  for (size_t i = 0; i < 5; ++i) require_scalar(in, i, names[i]);
  for (size_t i = 0; i < 3; ++i)
    require_dtype(in.type(i).dtype, {DType::i32, DType::i64}, names[i]);
  for (size_t i = 3; i < 5; ++i) require_float(in.type(i).dtype, names[i]);
  int64_t bins = in.value(0).get_int(0), dft_length = in.value(1).get_int(0);
  check(bins > 0, "num_mel_bins must be positive, got {}", bins);
  check(dft_length > 0, "dft_length must be positive, got {}", dft_length);
  check(in.value(2).get_int(0) > 0, "sample_rate must be positive, got {}", in.value(2).get_int(0));
  double lower = in.value(3).get(0), upper = in.value(4).get(0);
  check(lower >= 0 && lower <= upper,
        "the edges must satisfy 0 <= lower_edge_hertz <= upper_edge_hertz, got {} and {}", lower,
        upper);
  DType t = dtype_from_onnx(attr_int(in.attrs, "output_datatype", 1), "output_datatype");
  check(t != DType::boolean, "output_datatype must be numeric, got bool");
  return one(t, {dft_length / 2 + 1, bins});
}

std::vector<TensorType> constant(const InferInput& in) {
  for (std::string_view name : {"sparse_value", "value_string", "value_strings"})
    if (has_attr(in.attrs, name)) unsupported("attribute '{}' is not supported", name);
  int given = 0;
  for (std::string_view name : {"value", "value_float", "value_floats", "value_int", "value_ints"})
    given += has_attr(in.attrs, name) ? 1 : 0;
  check(given == 1, "exactly one value attribute must be given, got {}", given);
  if (const Tensor* value = attr_tensor(in.attrs, "value"))
    return one(value->dtype(), value->shape());
  if (has_attr(in.attrs, "value_float")) return one(DType::f32, {});
  if (has_attr(in.attrs, "value_int")) return one(DType::i64, {});
  if (has_attr(in.attrs, "value_floats"))
    return one(DType::f32, {static_cast<int64_t>(attr_floats(in.attrs, "value_floats").size())});
  return one(DType::i64, {static_cast<int64_t>(attr_ints(in.attrs, "value_ints").size())});
}

}  // namespace

void add_generator_ops(std::vector<OpSchema>& table) {
  table.insert(table.end(),
               {
                   {.name = "Shape", .infer = shape},
                   {.name = "Size", .infer = size},
                   {.name = "ConstantOfShape", .infer = constant_of_shape, .constant_inputs = {0}},
                   {.name = "Range",
                    .min_inputs = 3,
                    .max_inputs = 3,
                    .infer = range,
                    .constant_inputs = {0, 1, 2}},
                   {.name = "EyeLike", .infer = eye_like},
                   {.name = "OneHot",
                    .min_inputs = 3,
                    .max_inputs = 3,
                    .infer = one_hot,
                    .constant_inputs = {1}},
                   {.name = "Constant", .min_inputs = 0, .max_inputs = 0, .infer = constant},
                   {.name = "HannWindow", .infer = window, .constant_inputs = {0}},
                   {.name = "HammingWindow", .infer = window, .constant_inputs = {0}},
                   {.name = "BlackmanWindow", .infer = window, .constant_inputs = {0}},
                   {.name = "MelWeightMatrix",
                    .min_inputs = 5,
                    .max_inputs = 5,
                    .infer = mel_weight_matrix,
                    .constant_inputs = {0, 1, 2, 3, 4}},
               });
}

}  // namespace orch::ops
