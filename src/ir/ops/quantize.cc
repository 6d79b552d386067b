// Shape rules of the linear quantization ops (opset 13): QuantizeLinear (float or int32 to
// 8-bit), DequantizeLinear (8-bit or int32 to f32) and DynamicQuantizeLinear. A scale and zero
// point are one value (per tensor) or a vector along `axis` (per axis).
#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// Scale (input 1) and optional zero point (input 2) of x (input 0): one value, or one per
// element of x's dim `axis`; the zero point of the scale's shape and of dtype `zero_dtype`.
void check_params(const InferInput& in, DType zero_dtype) {
  const Shape& x = in.type(0).shape;
  const Shape& scale = in.type(1).shape;
  require_dtype(in.type(1).dtype, {DType::f32}, "scale");
  if (num_elements(scale) != 1) {
    check(scale.size() == 1, "the scale must be a scalar or a vector, got {}", format_shape(scale));
    int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 1), static_cast<int64_t>(x.size()));
    check(scale[0] == x[static_cast<size_t>(axis)],
          "a per-axis scale must have one value per element of axis {} of {}, got {}", axis,
          format_shape(x), format_shape(scale));
  }
  if (!in.has(2)) return;
  check(in.type(2).dtype == zero_dtype, "the zero point must be {}, got {}", dtype_name(zero_dtype),
        dtype_name(in.type(2).dtype));
  check(num_elements(in.type(2).shape) == num_elements(scale),
        "the zero point {} and the scale {} differ in size", format_shape(in.type(2).shape),
        format_shape(scale));
}

// x (f32 or i32), y_scale, optional y_zero_point (u8 or i8; u8 when absent) -> the zero point's
// dtype.
std::vector<TensorType> quantize_linear(const InferInput& in) {
  require_dtype(in.type(0).dtype, {DType::f32, DType::i32}, "QuantizeLinear x");
  DType y = in.has(2) ? in.type(2).dtype : DType::u8;
  require_dtype(y, {DType::u8, DType::i8}, "QuantizeLinear y_zero_point");
  check_params(in, y);
  return one(y, in.type(0).shape);
}

// x (u8, i8 or i32), x_scale, optional x_zero_point (x's dtype; none or zero for i32) -> f32.
std::vector<TensorType> dequantize_linear(const InferInput& in) {
  require_dtype(in.type(0).dtype, {DType::u8, DType::i8, DType::i32}, "DequantizeLinear x");
  check_params(in, in.type(0).dtype);
  return one(DType::f32, in.type(0).shape);
}

// x (f32) -> y (u8, x's shape), y_scale (f32) and y_zero_point (u8), both scalars.
std::vector<TensorType> dynamic_quantize_linear(const InferInput& in) {
  require_dtype(in.type(0).dtype, {DType::f32}, "DynamicQuantizeLinear x");
  return {{DType::u8, in.type(0).shape}, {DType::f32, {}}, {DType::u8, {}}};
}

}  // namespace

void add_quantize_ops(std::vector<OpSchema>& table) {
  table.push_back(
      {.name = "QuantizeLinear", .min_inputs = 2, .max_inputs = 3, .infer = quantize_linear});
  table.push_back(
      {.name = "DequantizeLinear", .min_inputs = 2, .max_inputs = 3, .infer = dequantize_linear});
  table.push_back({.name = "DynamicQuantizeLinear",
                   .min_outputs = 3,
                   .max_outputs = 3,
                   .infer = dynamic_quantize_linear});
}

}  // namespace orch::ops
