#include "ir/ops/layout_params.h"

#include <algorithm>
#include <numeric>

#include <fmt/ranges.h>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// std::clamp is undefined when lo > hi, which happens for a negative step over a zero-size dim.
int64_t clamp_to(int64_t v, int64_t lo, int64_t hi) {
  return std::min(std::max(v, lo), hi);
}

std::vector<int64_t> all_axes(int64_t count) {
  std::vector<int64_t> axes(count);
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}

}  // namespace

std::vector<int64_t> int_list(const Tensor& t, std::string_view what) {
  check(is_integer(t.dtype()), "{} must be an integer tensor, got {}", what, dtype_name(t.dtype()));
  check(t.rank() <= 1, "{} must be 1-D, got shape {}", what, format_shape(t.shape()));
  return t.to_ints();
}

std::vector<int64_t> transpose_perm(const Attributes& attrs, int64_t rank) {
  std::vector<int64_t> perm = attr_ints(attrs, "perm", {});
  if (!has_attr(attrs, "perm")) {
    perm = all_axes(rank);
    std::reverse(perm.begin(), perm.end());
  }
  check(static_cast<int64_t>(perm.size()) == rank, "perm has {} entries, the input has rank {}",
        perm.size(), rank);
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    check(p >= 0 && p < rank && !seen[p], "perm [{}] is not a permutation of {} axes",
          fmt::join(perm, ","), rank);
    seen[p] = true;
  }
  return perm;
}

std::vector<SliceAxis> slice_axes(const Shape& shape, const Tensor& starts, const Tensor& ends,
                                  const Tensor* axes, const Tensor* steps) {
  auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> b = int_list(starts, "starts");
  std::vector<int64_t> e = int_list(ends, "ends");
  auto n = static_cast<int64_t>(b.size());
  check(static_cast<int64_t>(e.size()) == n, "starts has {} entries, ends has {}", n, e.size());
  std::vector<int64_t> ax = axes ? int_list(*axes, "axes") : all_axes(n);
  check(static_cast<int64_t>(ax.size()) == n, "starts has {} entries, axes has {}", n, ax.size());
  ax = normalize_axes(ax, rank);
  std::vector<int64_t> st = steps ? int_list(*steps, "steps") : std::vector<int64_t>(n, 1);
  check(static_cast<int64_t>(st.size()) == n, "starts has {} entries, steps has {}", n, st.size());

  std::vector<SliceAxis> out(rank);
  for (int64_t d = 0; d < rank; ++d) out[d] = {0, 1, shape[d]};
  for (int64_t i = 0; i < n; ++i) {
    int64_t dim = shape[ax[i]];
    int64_t step = st[i];
    check(step != 0, "steps[{}] is 0", i);
    int64_t start = b[i] < 0 ? b[i] + dim : b[i];
    int64_t end = e[i] < 0 ? e[i] + dim : e[i];
    // Negative steps may stop one before the first element, hence end's lower bound of -1.
    start = step > 0 ? clamp_to(start, 0, dim) : clamp_to(start, 0, dim - 1);
    end = step > 0 ? clamp_to(end, 0, dim) : clamp_to(end, -1, dim - 1);
    int64_t span = step > 0 ? end - start : start - end;
    int64_t stride = step > 0 ? step : -step;
    out[ax[i]] = {start, step, span > 0 ? (span + stride - 1) / stride : 0};
  }
  return out;
}

std::vector<PadAxis> pad_axes(const Shape& shape, const Tensor& pads, const Tensor* axes) {
  auto rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> p = int_list(pads, "pads");
  std::vector<int64_t> ax = axes ? normalize_axes(int_list(*axes, "axes"), rank) : all_axes(rank);
  auto n = static_cast<int64_t>(ax.size());
  check(static_cast<int64_t>(p.size()) == 2 * n, "pads has {} entries, expected {} (2 per axis)",
        p.size(), 2 * n);
  std::vector<PadAxis> out(rank);
  for (int64_t i = 0; i < n; ++i) out[ax[i]] = {p[i], p[i + n]};
  return out;
}

}  // namespace orch::ops
