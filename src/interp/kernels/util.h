// Index helpers shared by the reference kernels.
#pragma once

#include <vector>

#include "ir/tensor.h"

namespace orch::interp {

/// Maps a flat index of `out_shape` to the flat index of an input of `in_shape` broadcast to it
/// (numpy rules: dims aligned from the right, size-1 dims repeat).
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& in_shape, const Shape& out_shape);
  int64_t operator()(int64_t out_flat) const;

 private:
  std::vector<int64_t> out_dims_;
  std::vector<int64_t> in_strides_;  // 0 along broadcast dims
};

/// Multi-index of flat index `flat` in `shape` (row-major).
std::vector<int64_t> unravel(int64_t flat, const Shape& shape);
/// Flat index of `index` in `shape` (row-major).
int64_t ravel(const std::vector<int64_t>& index, const Shape& shape);

/// Stores `scaled` rounded half to even, plus `zero_point`, saturated to y's 8-bit type (u8 or
/// i8): how QuantizeLinear and the QLinear ops quantize.
void store_quantized(Tensor& y, int64_t i, double scaled, double zero_point);

}  // namespace orch::interp
