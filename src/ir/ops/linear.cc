// Shape rules of the linear ops: MatMul, Gemm, Einsum, Conv, ConvTranspose.
#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/linear_einsum.h"
#include "ir/ops/linear_shapes.h"
#include "ir/ops/linear_window.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

constexpr std::initializer_list<DType> kMatMulTypes = {DType::f16,  DType::f32, DType::f64,
                                                       DType::bf16, DType::u32, DType::u64,
                                                       DType::i32,  DType::i64};

// Checks X [N, C, ...], W of X's rank and kernel_shape; returns W's kernel dims.
std::vector<int64_t> conv_kernel(const Attributes& attrs, const Shape& x, const Shape& w) {
  check(x.size() >= 3, "X must have rank at least 3, got {}", format_shape(x));
  check(w.size() == x.size(), "W {} must have the rank of X {}", format_shape(w), format_shape(x));
  check(attr_int(attrs, "group", 1) >= 1, "group must be positive");
  std::vector<int64_t> kernel = spatial_dims(w);
  if (has_attr(attrs, "kernel_shape"))
    check(attr_ints(attrs, "kernel_shape") == kernel,
          "kernel_shape {} differs from the weights' spatial dims {}",
          format_shape(attr_ints(attrs, "kernel_shape")), format_shape(kernel));
  return kernel;
}

std::vector<TensorType> matmul(const InferInput& in) {
  require_same_dtype(in);
  require_dtype(in.type(0).dtype, kMatMulTypes, "MatMul input");
  return one(in.type(0).dtype, matmul_shape(in.type(0).shape, in.type(1).shape));
}

std::vector<TensorType> gemm(const InferInput& in) {
  require_same_dtype(in);
  require_dtype(in.type(0).dtype, kMatMulTypes, "Gemm input");
  require_rank(in, 0, 2);
  require_rank(in, 1, 2);
  const Shape& a = in.type(0).shape;
  const Shape& b = in.type(1).shape;
  bool ta = attr_int(in.attrs, "transA", 0) != 0, tb = attr_int(in.attrs, "transB", 0) != 0;
  int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
  int64_t kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  check(k == kb, "Gemm inner dims differ: A' has {}, B' has {}", k, kb);
  Shape out = {m, n};
  if (in.has(2))
    check(broadcast_shapes(in.type(2).shape, out) == out, "Gemm C {} does not broadcast to {}",
          format_shape(in.type(2).shape), format_shape(out));
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> einsum(const InferInput& in) {
  require_same_dtype(in);
  require_dtype(in.type(0).dtype,
                {DType::u8, DType::u16, DType::u32, DType::u64, DType::i8, DType::i16, DType::i32,
                 DType::i64, DType::f16, DType::f32, DType::f64},
                "Einsum input");
  check(has_attr(in.attrs, "equation"), "Einsum needs an 'equation'");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < in.types.size(); ++i) shapes.push_back(in.type(i).shape);
  EinsumSpec spec = parse_einsum(attr_string(in.attrs, "equation", ""), shapes);
  Shape out;
  for (int label : spec.output) out.push_back(spec.sizes[label]);
  return one(in.type(0).dtype, out);
}

void check_bias(const InferInput& in, int64_t channels) {
  if (in.has(2))
    check(in.type(2).shape == Shape{channels}, "bias must have shape [{}], got {}", channels,
          format_shape(in.type(2).shape));
}

std::vector<TensorType> conv(const InferInput& in) {
  require_same_dtype(in);
  require_float(in.type(0).dtype, "Conv input");
  Shape out = conv_shape(in.attrs, in.type(0).shape, in.type(1).shape);
  check_bias(in, out[1]);
  return one(in.type(0).dtype, out);
}

// X [N, C, D...], W [C, M/group, K...] -> [N, M, O...].
std::vector<TensorType> conv_transpose(const InferInput& in) {
  require_same_dtype(in);
  require_float(in.type(0).dtype, "ConvTranspose input");
  const Shape& x = in.type(0).shape;
  const Shape& w = in.type(1).shape;
  std::vector<int64_t> kernel = conv_kernel(in.attrs, x, w);
  int64_t group = attr_int(in.attrs, "group", 1);
  check(x[1] == w[0], "X has {} channels, W has {}", x[1], w[0]);
  check(w[0] % group == 0, "{} input channels are not a multiple of group {}", w[0], group);
  int64_t channels = size_in_range(__int128{w[1]} * group, "W's dim 1 x group");
  check_bias(in, channels);
  Window win = transposed_window(in.attrs, spatial_dims(x), kernel);
  Shape out = {x[0], channels};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return one(in.type(0).dtype, out);
}

}  // namespace

Shape matmul_shape(const Shape& a_in, const Shape& b_in) {
  Shape a = a_in, b = b_in;
  check(!a.empty() && !b.empty(), "MatMul inputs must have rank at least 1, got {} and {}",
        format_shape(a), format_shape(b));
  // numpy: a 1-D A is a row, a 1-D B a column, and that dim is dropped from the result.
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  check(a.back() == b[b.size() - 2], "MatMul inner dims differ: {} and {}", format_shape(a_in),
        format_shape(b_in));
  Shape out = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return out;
}

// X [N, C, D...], W [M, C/group, K...] -> [N, M, O...].
Shape conv_shape(const Attributes& attrs, const Shape& x, const Shape& w) {
  std::vector<int64_t> kernel = conv_kernel(attrs, x, w);
  int64_t group = attr_int(attrs, "group", 1);
  check(x[1] == __int128{w[1]} * group, "X has {} channels, W expects {} x group {}", x[1], w[1],
        group);
  check(w[0] % group == 0, "{} output channels are not a multiple of group {}", w[0], group);
  Window win = forward_window(attrs, spatial_dims(x), kernel, false);
  Shape out = {x[0], w[0]};
  out.insert(out.end(), win.out.begin(), win.out.end());
  return out;
}

void add_linear_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "MatMul", .min_inputs = 2, .max_inputs = 2, .infer = matmul});
  table.push_back({.name = "Gemm", .min_inputs = 2, .max_inputs = 3, .infer = gemm});
  table.push_back({.name = "Einsum", .min_inputs = 1, .max_inputs = kVariadic, .infer = einsum});
  table.push_back({.name = "Conv", .min_inputs = 2, .max_inputs = 3, .infer = conv});
  table.push_back(
      {.name = "ConvTranspose", .min_inputs = 2, .max_inputs = 3, .infer = conv_transpose});
  add_linear_quant_ops(table);
}

}  // namespace orch::ops
