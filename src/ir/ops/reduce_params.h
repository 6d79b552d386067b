// Effective axes of the Reduce* ops after the spec's defaults (empty axes = all dims, or a no-op
// with noop_with_empty_axes), and the axis geometry of the ops that work along one axis. The
// shape rules and the reference kernels (reductions and normalizations) both use these, so they
// cannot disagree.
#pragma once

#include <vector>

#include "ir/attribute.h"
#include "ir/tensor.h"

namespace orch::ops {

/// What a Reduce* node reduces.
struct ReduceAxes {
  /// Normalized, ascending; may be empty for a rank-0 input (each element is its own set).
  std::vector<int64_t> axes;
  /// Axes were empty and noop_with_empty_axes=1: the op copies its input unchanged.
  bool noop = false;
  bool keepdims = true;
};

/// Reads `axes` from `axes_input` (ReduceSum's input 1; null when absent) or else from the
/// `axes` attribute, plus keepdims and noop_with_empty_axes. Throws on bad values.
ReduceAxes reduce_axes(const Attributes& attrs, const Tensor* axes_input, int64_t rank);

/// `shape` with every reduced dim set to 1 (the output shape under keepdims=1).
Shape reduce_keep_shape(const Shape& shape, const ReduceAxes& r);

/// The output shape: reduce_keep_shape, with the reduced dims dropped when keepdims=0.
Shape reduce_out_shape(const Shape& shape, const ReduceAxes& r);

/// `shape` split around one axis: element (o, k, j) is at flat index (o * n + k) * inner + j.
struct AxisSplit {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};
/// `axis` in [0, rank), as normalize_axis returns it.
AxisSplit split_at_axis(const Shape& shape, int64_t axis);

/// A 0/1 attribute (keepdims, exclusive, ...); throws naming it on any other value.
bool attr_flag(const Attributes& attrs, std::string_view name, bool fallback);

}  // namespace orch::ops
