// Effective parameters of Transpose, Slice and Pad after the spec's defaults, normalization and
// clamping. The shape rules and the reference kernels both use these, so they cannot disagree.
#pragma once

#include <vector>

#include "ir/attribute.h"
#include "ir/tensor.h"

namespace orch::ops {

/// Transpose's `perm` attribute (default: reversed dims), checked to be a permutation of `rank`.
std::vector<int64_t> transpose_perm(const Attributes& attrs, int64_t rank);

/// One input dim of a Slice: output coordinate o reads input coordinate start + o * step.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t size = 0;
};

/// One entry per dim of `shape` (dims not sliced read everything). `axes` and `steps` may be
/// null (absent inputs). Starts and ends are clamped exactly as the ONNX spec says.
std::vector<SliceAxis> slice_axes(const Shape& shape, const Tensor& starts, const Tensor& ends,
                                  const Tensor* axes, const Tensor* steps);

/// Pad amounts of one input dim; negative amounts crop.
struct PadAxis {
  int64_t begin = 0;
  int64_t end = 0;
};

/// One entry per dim of `shape` from Pad's `pads` and optional `axes` (opset 18) inputs.
std::vector<PadAxis> pad_axes(const Shape& shape, const Tensor& pads, const Tensor* axes);

/// The elements of a rank-0 or rank-1 integer tensor; `what` names it in errors.
std::vector<int64_t> int_list(const Tensor& t, std::string_view what);

}  // namespace orch::ops
