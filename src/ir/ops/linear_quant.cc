// Shape rules of the integer and quantized linear ops: MatMulInteger, ConvInteger (int32
// results) and QLinearMatMul, QLinearConv (8-bit results with a scale and zero point).
#include "ir/error.h"
#include "ir/ops/linear_shapes.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

void require_8bit(const InferInput& in, size_t i, std::string_view what) {
  require_dtype(in.type(i).dtype, {DType::i8, DType::u8}, what);
}

// A zero point or scale of a MatMul operand: its dtype, and a shape that broadcasts to the
// operand; a vector of several values for a per-row parameter (A's, y's) is [M, 1].
void check_param(const InferInput& in, size_t i, std::string_view name, DType dtype,
                 const Shape& operand, bool per_row) {
  if (!in.has(i)) return;
  check(in.type(i).dtype == dtype, "{} must be {}, got {}", name, dtype_name(dtype),
        dtype_name(in.type(i).dtype));
  Shape shape = in.type(i).shape;
  if (per_row && shape.size() == 1 && shape[0] > 1) shape = {shape[0], 1};
  check(broadcast_shapes(shape, operand) == operand, "{} {} does not broadcast to {}", name,
        format_shape(in.type(i).shape), format_shape(operand));
}

// A Conv quantization parameter: one value, or (for the weights) one per output channel.
void check_conv_param(const InferInput& in, size_t i, std::string_view name, DType dtype,
                      int64_t channels) {
  if (!in.has(i)) return;
  check(in.type(i).dtype == dtype, "{} must be {}, got {}", name, dtype_name(dtype),
        dtype_name(in.type(i).dtype));
  int64_t n = num_elements(in.type(i).shape);
  check(in.type(i).shape.size() <= 1 && (n == 1 || n == channels), "{} must be a scalar{}, got {}",
        name, channels > 1 ? fmt::format(" or have {} values", channels) : "",
        format_shape(in.type(i).shape));
}

// A, B, optional a_zero_point, b_zero_point -> i32.
std::vector<TensorType> matmul_integer(const InferInput& in) {
  require_8bit(in, 0, "MatMulInteger A");
  require_8bit(in, 1, "MatMulInteger B");
  const Shape& a = in.type(0).shape;
  const Shape& b = in.type(1).shape;
  check_param(in, 2, "a_zero_point", in.type(0).dtype, a, true);
  check_param(in, 3, "b_zero_point", in.type(1).dtype, b, false);
  return one(DType::i32, matmul_shape(a, b));
}

// x, w, optional x_zero_point (one value), w_zero_point (one or per output channel) -> i32.
std::vector<TensorType> conv_integer(const InferInput& in) {
  require_8bit(in, 0, "ConvInteger x");
  require_8bit(in, 1, "ConvInteger w");
  Shape out = conv_shape(in.attrs, in.type(0).shape, in.type(1).shape);
  check_conv_param(in, 2, "x_zero_point", in.type(0).dtype, 1);
  check_conv_param(in, 3, "w_zero_point", in.type(1).dtype, out[1]);
  return one(DType::i32, out);
}

// a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point -> y_zero_point's
// dtype.
std::vector<TensorType> qlinear_matmul(const InferInput& in) {
  require_8bit(in, 0, "QLinearMatMul a");
  require_8bit(in, 3, "QLinearMatMul b");
  require_8bit(in, 7, "QLinearMatMul y_zero_point");
  const Shape& a = in.type(0).shape;
  const Shape& b = in.type(3).shape;
  Shape out = matmul_shape(a, b);
  check_param(in, 1, "a_scale", DType::f32, a, true);
  check_param(in, 2, "a_zero_point", in.type(0).dtype, a, true);
  check_param(in, 4, "b_scale", DType::f32, b, false);
  check_param(in, 5, "b_zero_point", in.type(3).dtype, b, false);
  check_param(in, 6, "y_scale", DType::f32, out, true);
  check_param(in, 7, "y_zero_point", in.type(7).dtype, out, true);
  return one(in.type(7).dtype, out);
}

// x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, optional i32 bias
// -> y_zero_point's dtype.
std::vector<TensorType> qlinear_conv(const InferInput& in) {
  require_8bit(in, 0, "QLinearConv x");
  require_8bit(in, 3, "QLinearConv w");
  require_8bit(in, 7, "QLinearConv y_zero_point");
  Shape out = conv_shape(in.attrs, in.type(0).shape, in.type(3).shape);
  check_conv_param(in, 1, "x_scale", DType::f32, 1);
  check_conv_param(in, 2, "x_zero_point", in.type(0).dtype, 1);
  check_conv_param(in, 4, "w_scale", DType::f32, out[1]);
  check_conv_param(in, 5, "w_zero_point", in.type(3).dtype, out[1]);
  check_conv_param(in, 6, "y_scale", DType::f32, 1);
  check_conv_param(in, 7, "y_zero_point", in.type(7).dtype, 1);
  if (in.has(8)) {
    check(in.type(8).dtype == DType::i32, "QLinearConv bias must be i32, got {}",
          dtype_name(in.type(8).dtype));
    check(in.type(8).shape == Shape{out[1]}, "bias must have shape [{}], got {}", out[1],
          format_shape(in.type(8).shape));
  }
  return one(in.type(7).dtype, out);
}

}  // namespace

void add_linear_quant_ops(std::vector<OpSchema>& table) {
  table.push_back(
      {.name = "MatMulInteger", .min_inputs = 2, .max_inputs = 4, .infer = matmul_integer});
  table.push_back({.name = "ConvInteger", .min_inputs = 2, .max_inputs = 4, .infer = conv_integer});
  table.push_back(
      {.name = "QLinearMatMul", .min_inputs = 8, .max_inputs = 8, .infer = qlinear_matmul});
  table.push_back({.name = "QLinearConv", .min_inputs = 8, .max_inputs = 9, .infer = qlinear_conv});
}

}  // namespace orch::ops
