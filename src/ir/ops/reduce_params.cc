#include "ir/ops/reduce_params.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {

bool attr_flag(const Attributes& attrs, std::string_view name, bool fallback) {
  int64_t v = attr_int(attrs, name, fallback ? 1 : 0);
  check(v == 0 || v == 1, "attribute '{}' must be 0 or 1, got {}", name, v);
  return v == 1;
}

ReduceAxes reduce_axes(const Attributes& attrs, const Tensor* axes_input, int64_t rank) {
  ReduceAxes r;
  r.keepdims = attr_flag(attrs, "keepdims", true);
  bool noop_with_empty_axes = attr_flag(attrs, "noop_with_empty_axes", false);
  std::vector<int64_t> axes;
  if (axes_input != nullptr) {
    check(axes_input->dtype() == DType::i64, "axes must be i64, got {}",
          dtype_name(axes_input->dtype()));
    check(axes_input->rank() <= 1, "axes must be a 1-D tensor, got shape {}",
          format_shape(axes_input->shape()));
    axes = axes_input->to_ints();
  } else {
    axes = attr_ints(attrs, "axes");
  }
  if (axes.empty()) {
    r.noop = noop_with_empty_axes;
    if (!r.noop)
      for (int64_t d = 0; d < rank; ++d) r.axes.push_back(d);
    return r;
  }
  check(rank > 0, "a rank-0 input takes no axes, got {} of them", axes.size());
  r.axes = normalize_axes(axes, rank);
  std::sort(r.axes.begin(), r.axes.end());
  return r;
}

Shape reduce_keep_shape(const Shape& shape, const ReduceAxes& r) {
  Shape keep = shape;
  for (int64_t a : r.axes) keep[a] = 1;
  return keep;
}

Shape reduce_out_shape(const Shape& shape, const ReduceAxes& r) {
  if (r.keepdims) return reduce_keep_shape(shape, r);
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    if (!std::binary_search(r.axes.begin(), r.axes.end(), d)) out.push_back(shape[d]);
  return out;
}

AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  // Checked products: with a zero dim elsewhere, the dims on one side may multiply past int64.
  auto at = shape.begin() + axis;
  return {.outer = num_elements(Shape(shape.begin(), at)),
          .n = *at,
          .inner = num_elements(Shape(at + 1, shape.end()))};
}

}  // namespace orch::ops
