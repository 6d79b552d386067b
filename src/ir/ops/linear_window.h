// Sliding-window geometry shared by the shape rules and kernels of Conv, ConvTranspose and the
// pools: attributes (kernel, strides, dilations, pads, auto_pad) resolved into explicit pads and
// output sizes, one entry per spatial dim.
#pragma once

#include <vector>

#include "ir/attribute.h"

namespace orch::ops {

/// A window over the spatial dims of an [N, C, D1, ..., Dk] tensor. All vectors have k entries.
struct Window {
  std::vector<int64_t> in;      // input spatial dims
  std::vector<int64_t> kernel;  // window size (before dilation)
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;  // auto_pad resolved
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;  // output spatial dims
};

/// Geometry of a forward window (Conv, MaxPool, AveragePool, LpPool). `ceil_mode` rounds the
/// output size up (pools); a last window starting inside the end padding is dropped.
Window forward_window(const Attributes& attrs, const std::vector<int64_t>& in,
                      const std::vector<int64_t>& kernel, bool ceil_mode);

/// Geometry of ConvTranspose: `out` honours output_shape, output_padding and auto_pad.
Window transposed_window(const Attributes& attrs, const std::vector<int64_t>& in,
                         const std::vector<int64_t>& kernel);

/// The spatial dims of `shape` (everything after N and C).
std::vector<int64_t> spatial_dims(const std::vector<int64_t>& shape);

}  // namespace orch::ops
