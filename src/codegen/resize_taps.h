// prim.Resize as per-axis tap tables, shared by the Halide and CUDA generators. Each
// output coordinate of an axis reads `taps` input coordinates with weights, so the resize is a
// chain of one-axis weighted gathers, separable like the reference kernel's sum of products.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace orch::codegen {

/// The taps of one axis: index and weight of tap t of output coordinate x at [x * taps + t].
struct ResizeTaps {
  int64_t taps = 1;
  bool identity = false;  // every output coordinate reads itself with weight 1
  std::vector<int32_t> index;
  std::vector<float> weight;
};

/// Whether prim.Resize's sampling is a weighted sum (linear, cubic) rather than a copy.
bool resize_interpolates(const Attributes& attrs);

/// One entry per dim of the input; throws Unsupported for tf_crop_and_resize (no generator
/// samples crop boxes).
std::vector<ResizeTaps> resize_taps(const Attributes& attrs, const TensorType& input);

}  // namespace orch::codegen
