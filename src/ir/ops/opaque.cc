// Shape rules of the opaque ops (kept whole, never fused): TopK; RNN, GRU and LSTM live in
// opaque_rnn.cc.
#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/opaque_rnn.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// X [..., D, ...], constant K [1] -> values and i64 indices [..., K, ...] along `axis`.
std::vector<TensorType> top_k(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_dtype(x.dtype,
                {DType::u8, DType::u16, DType::u32, DType::u64, DType::i8, DType::i16, DType::i32,
                 DType::i64, DType::f16, DType::f32, DType::f64},
                "TopK input");
  check(!x.shape.empty(), "TopK input must have rank at least 1");
  const Tensor& k = in.value(1);
  check(k.dtype() == DType::i64 && k.numel() == 1, "TopK K must be a single i64, got {}{}",
        dtype_name(k.dtype()), format_shape(k.shape()));
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", -1), x.shape.size());
  int64_t count = k.get_int(0);
  check(count >= 0 && count <= x.shape[axis], "TopK K = {} is outside [0, {}] for axis {} of {}",
        count, x.shape[axis], axis, format_shape(x.shape));
  Shape out = x.shape;
  out[axis] = count;
  return {{x.dtype, out}, {DType::i64, out}};
}

}  // namespace

void add_opaque_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "TopK",
                   .min_inputs = 2,
                   .max_inputs = 2,
                   .min_outputs = 2,
                   .max_outputs = 2,
                   .infer = top_k,
                   .constant_inputs = {1},
                   .category = Category::Opaque});
  add_opaque_rnn_ops(table);
}

}  // namespace orch::ops
