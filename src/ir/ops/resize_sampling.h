// Where Resize samples: each axis on its own, an output coordinate maps back to an input
// coordinate (coordinate_transformation_mode), which picks weighted input taps (mode). The
// reference kernel and the generators' tap tables (codegen/resize_taps.h) both read these.
#pragma once

#include <vector>

#include "ir/ops/indexing_resize.h"

namespace orch::ops {

/// One input coordinate an output coordinate reads, and its weight.
struct ResizeTap {
  int64_t index;
  double weight;
};

/// The input coordinate that output coordinate `x` of axis `a` samples.
double resize_source(const ResizeSpec& spec, const ResizeAxis& a, int64_t x);

/// The taps that sample input coordinate `x` of axis `a`: the nearest one with weight 1, or the
/// linear or cubic filter's taps of weight other than 0. Taps past the edges read the edge
/// element, as the ONNX reference pads in 'edge' mode.
std::vector<ResizeTap> resize_taps_at(const ResizeSpec& spec, const ResizeAxis& a, double x);

}  // namespace orch::ops
