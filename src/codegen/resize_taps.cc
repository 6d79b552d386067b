// prim.Resize's tap tables, from the sampling the reference kernel reads too
// (ir/ops/resize_sampling.h): coordinate transform, then nearest index or filter taps.
#include "codegen/resize_taps.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ir/ops/indexing_resize.h"
#include "ir/ops/prim.h"
#include "ir/ops/resize_sampling.h"

namespace orch::codegen {
namespace {

using ops::ResizeAxis;
using ops::ResizeCoord;
using ops::ResizeSpec;

ResizeSpec spec_of(const Attributes& attrs, const TensorType& input) {
  std::vector<TensorType> types{input};
  prim::OnnxForm form = prim::onnx_form("prim.Resize", attrs, types);
  auto arg = [&](size_t i) {
    const Tensor& t = form.args[i].constant;
    return t.defined() ? &t : nullptr;
  };
  return ops::resize_spec(form.attrs, input.shape, arg(1), arg(2), arg(3));
}

// Whether tap k of `t` fits the periodic form with `shift` and `base` at every x it weighs.
bool fits(const ResizeTaps& t, int64_t k, int64_t in, int64_t out, int64_t period, int64_t step,
          int64_t shift, int64_t base) {
  for (int64_t x = 0; x < out; ++x) {
    if (t.weight[x * t.taps + k] == 0) continue;
    int64_t i = std::clamp<int64_t>(step * ((x + shift) / period) + base, 0, in - 1);
    if (i != t.index[x * t.taps + k]) return false;
  }
  return true;
}

}  // namespace

std::optional<PeriodicTaps> periodic_taps(const ResizeTaps& t, int64_t in, int64_t out,
                                          int64_t max_period) {
  int64_t g = std::gcd(in, out);
  PeriodicTaps p{.period = out / g, .step = in / g};
  if (p.period > max_period) return std::nullopt;
  for (int64_t k = 0; k < t.taps; ++k) {
    // The base comes from a coordinate read unclamped; each shift is then checked everywhere.
    int64_t probe = -1;
    for (int64_t x = 0; x < out && probe < 0; ++x) {
      int64_t i = t.index[x * t.taps + k];
      if (t.weight[x * t.taps + k] != 0 && i > 0 && i < in - 1) probe = x;
    }
    if (probe < 0) return std::nullopt;
    bool found = false;
    for (int64_t shift = 0; shift < p.period && !found; ++shift) {
      int64_t base = t.index[probe * t.taps + k] - p.step * ((probe + shift) / p.period);
      if (!fits(t, k, in, out, p.period, p.step, shift, base)) continue;
      p.shift.push_back(shift);
      p.base.push_back(base);
      found = true;
    }
    if (!found) return std::nullopt;
    for (int64_t r = 0; r < p.period; ++r) {
      float w = t.weight[r * t.taps + k];
      for (int64_t x = r; x < out; x += p.period)
        if (t.weight[x * t.taps + k] != w) return std::nullopt;
      p.weight.push_back(w);
    }
  }
  return p;
}

bool resize_interpolates(const Attributes& attrs) {
  return attr_string(attrs, "mode", "nearest") != "nearest";
}

std::vector<ResizeTaps> resize_taps(const Attributes& attrs, const TensorType& input) {
  ResizeSpec spec = spec_of(attrs, input);
  if (spec.coord == ResizeCoord::TfCropAndResize)
    unsupported("prim.Resize with tf_crop_and_resize is not generated");
  std::vector<ResizeTaps> axes;
  for (const ResizeAxis& a : spec.axes) {
    std::vector<std::vector<ops::ResizeTap>> per_x;
    for (int64_t x = 0; x < a.out; ++x) {
      per_x.push_back(ops::resize_taps_at(spec, a, ops::resize_source(spec, a, x)));
    }
    ResizeTaps t;
    for (const auto& taps : per_x) t.taps = std::max<int64_t>(t.taps, taps.size());
    t.identity = a.in == a.out;
    for (int64_t x = 0; x < a.out; ++x) {
      const std::vector<ops::ResizeTap>& taps = per_x[x];
      t.identity = t.identity && taps.size() == 1 && taps[0].index == x && taps[0].weight == 1;
      for (int64_t i = 0; i < t.taps; ++i) {
        // Missing taps read element 0 with weight 0.
        bool has = i < static_cast<int64_t>(taps.size());
        t.index.push_back(has ? static_cast<int32_t>(taps[i].index) : 0);
        t.weight.push_back(has ? static_cast<float>(taps[i].weight) : 0.0f);
      }
    }
    axes.push_back(std::move(t));
  }
  return axes;
}

}  // namespace orch::codegen
