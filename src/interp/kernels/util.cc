#include "interp/kernels/util.h"

#include <algorithm>
#include <cmath>

namespace orch::interp {

BroadcastIndex::BroadcastIndex(const Shape& in_shape, const Shape& out_shape)
    : out_dims_(out_shape), in_strides_(out_shape.size(), 0) {
  std::vector<int64_t> strides = row_major_strides(in_shape);
  size_t offset = out_shape.size() - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i)
    in_strides_[offset + i] = in_shape[i] == 1 ? 0 : strides[i];
}

int64_t BroadcastIndex::operator()(int64_t out_flat) const {
  int64_t in_flat = 0;
  for (int i = static_cast<int>(out_dims_.size()) - 1; i >= 0; --i) {
    int64_t d = out_dims_[i];
    in_flat += (out_flat % d) * in_strides_[i];
    out_flat /= d;
  }
  return in_flat;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

int64_t ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + index[i];
  return flat;
}

void store_quantized(Tensor& y, int64_t i, double scaled, double zero_point) {
  double lo = y.dtype() == DType::u8 ? 0 : -128, hi = y.dtype() == DType::u8 ? 255 : 127;
  y.set(i, std::clamp(std::nearbyint(scaled) + zero_point, lo, hi));
}

}  // namespace orch::interp
