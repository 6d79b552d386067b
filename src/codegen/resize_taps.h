// prim.Resize as per-axis tap tables, shared by the Halide and CUDA generators. Each
// output coordinate of an axis reads `taps` input coordinates with weights, so the resize is a
// chain of one-axis weighted gathers, separable like the reference kernel's sum of products.
#pragma once

#include <cstdint>
#include <optional>
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

/// An axis whose taps repeat with the ratio of its sizes, out / in = period / step in lowest
/// terms: tap k of output coordinate x reads
///   clamp(step * floor((x + shift[k]) / period) + base[k], 0, in - 1)
/// with weight weight[k * period + x % period]. Integer upsampling (period 2, 4, ..., step 1)
/// and downsampling (period 1) have this form; a generator can then index with affine
/// arithmetic instead of gathering through the tables.
struct PeriodicTaps {
  int64_t period = 1;
  int64_t step = 1;
  std::vector<int64_t> shift;
  std::vector<int64_t> base;
  std::vector<float> weight;
};

/// The longest period the generators index in the periodic form: its weights are picked by a
/// chain of selects, one per distinct weight.
constexpr int64_t kMaxResizePeriod = 8;

/// The periodic form of `taps` (an axis of `in` -> `out` coordinates) when every tap of weight
/// other than 0 fits it and the period is at most `max_period`; nullopt otherwise.
std::optional<PeriodicTaps> periodic_taps(const ResizeTaps& taps, int64_t in, int64_t out,
                                          int64_t max_period);

/// Whether prim.Resize's sampling is a weighted sum (linear, cubic) rather than a copy.
bool resize_interpolates(const Attributes& attrs);

/// One entry per dim of the input; throws Unsupported for tf_crop_and_resize (no generator
/// samples crop boxes).
std::vector<ResizeTaps> resize_taps(const Attributes& attrs, const TensorType& input);

}  // namespace orch::codegen
