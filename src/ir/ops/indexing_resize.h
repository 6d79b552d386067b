// Resize's parameters, decoded once from its attributes and constant inputs. The shape rule and
// the reference kernel both use them, so the output shape and the sampling agree by construction.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace orch::ops {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class ResizeCoord {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfCropAndResize,
  TfHalfPixelForNn,  // opset 11-12 only; kept so that older models import unchanged
};
enum class ResizeNearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

/// One axis of X: how its output coordinates map back to input coordinates.
struct ResizeAxis {
  int64_t in = 1;
  int64_t out = 1;
  /// The scale the coordinate transform divides by (out / in when `sizes` is given).
  double scale = 1;
  /// The output length before flooring (in * scale), which align_corners and
  /// half_pixel_symmetric use.
  double resized_length = 1;
  /// The normalized region of interest, used by tf_crop_and_resize.
  double roi_start = 0;
  double roi_end = 1;
};

/// Everything Resize's kernel needs, with every attribute validated.
struct ResizeSpec {
  ResizeMode mode = ResizeMode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  bool antialias = false;
  /// One entry per dimension of X.
  std::vector<ResizeAxis> axes;

  Shape out_shape() const;
};

/// Decodes Resize (opsets 11-19) on an input of shape `x`; `roi`, `scales`, `sizes` are nullptr
/// or empty when absent. Throws an Error naming the offending attribute or input.
ResizeSpec resize_spec(const Attributes& attrs, const Shape& x, const Tensor* roi,
                       const Tensor* scales, const Tensor* sizes);

/// Registers Resize (called from add_indexing_ops).
void add_indexing_resize_ops(std::vector<OpSchema>& table);

}  // namespace orch::ops
