// Window geometry padded to exactly three spatial dims, so that the Conv, ConvTranspose and
// pooling kernels are one loop nest for 1-D, 2-D and 3-D inputs.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "ir/ops/linear_window.h"

namespace orch::interp {

/// An ops::Window with leading unit dims added (size 1, kernel 1, stride 1, no padding).
struct Window3 {
  std::array<int64_t, 3> in, kernel, strides, dilations, pad_begin, pad_end, out;

  explicit Window3(const ops::Window& w) {
    size_t lead = 3 - w.in.size();
    auto fill = [&](std::array<int64_t, 3>& dst, const std::vector<int64_t>& src, int64_t unit) {
      for (size_t i = 0; i < 3; ++i) dst[i] = i < lead ? unit : src[i - lead];
    };
    fill(in, w.in, 1);
    fill(kernel, w.kernel, 1);
    fill(strides, w.strides, 1);
    fill(dilations, w.dilations, 1);
    fill(pad_begin, w.pad_begin, 0);
    fill(pad_end, w.pad_end, 0);
    fill(out, w.out, 1);
  }
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// The range [lo, hi) of i in [0, count) with 0 <= i * stride + offset < limit.
inline std::pair<int64_t, int64_t> valid_range(int64_t count, int64_t limit, int64_t stride,
                                               int64_t offset) {
  int64_t lo = std::max<int64_t>(0, -floor_div(offset, stride));
  int64_t hi = std::min<int64_t>(count, floor_div(limit - 1 - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

}  // namespace orch::interp
