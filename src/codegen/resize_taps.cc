// prim.Resize's tap tables, computed as the reference kernel computes them (interp/kernels/
// indexing_resize.cc): coordinate transform, then nearest index or filter taps, edges clamped.
#include "codegen/resize_taps.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/error.h"
#include "ir/ops/indexing_resize.h"
#include "ir/ops/prim.h"

namespace orch::codegen {
namespace {

using ops::ResizeAxis;
using ops::ResizeCoord;
using ops::ResizeMode;
using ops::ResizeNearest;
using ops::ResizeSpec;

struct Tap {
  int64_t index;
  double weight;
};

double original_coordinate(const ResizeSpec& spec, const ResizeAxis& a, int64_t x) {
  double xr = static_cast<double>(x);
  double in = static_cast<double>(a.in);
  switch (spec.coord) {
    case ResizeCoord::HalfPixel:
      return (xr + 0.5) / a.scale - 0.5;
    case ResizeCoord::HalfPixelSymmetric: {
      double adjustment = static_cast<double>(a.out) / a.resized_length;
      return in / 2 * (1 - adjustment) + (xr + 0.5) / a.scale - 0.5;
    }
    case ResizeCoord::PytorchHalfPixel:
      return a.out > 1 ? (xr + 0.5) / a.scale - 0.5 : 0;
    case ResizeCoord::AlignCorners:
      return a.resized_length == 1 ? 0 : xr * (in - 1) / (a.resized_length - 1);
    case ResizeCoord::Asymmetric:
      return xr / a.scale;
    case ResizeCoord::TfHalfPixelForNn:
      return (xr + 0.5) / a.scale;
    case ResizeCoord::TfCropAndResize:
      break;
  }
  unsupported("prim.Resize with tf_crop_and_resize is not generated");
}

int64_t nearest_index(const ResizeSpec& spec, double x, int64_t in) {
  double floor = std::floor(x);
  double ratio = x - floor;
  int64_t i = static_cast<int64_t>(floor);
  if (ratio != 0) {
    bool up = spec.nearest == ResizeNearest::RoundPreferFloor ? ratio > 0.5
              : spec.nearest == ResizeNearest::RoundPreferCeil
                  ? ratio >= 0.5
                  : spec.nearest == ResizeNearest::Ceil;
    i += up ? 1 : 0;
  }
  return std::clamp<int64_t>(i, 0, in - 1);
}

double filter(const ResizeSpec& spec, double t) {
  t = std::abs(t);
  if (spec.mode == ResizeMode::Linear) return std::max(0.0, 1 - t);
  double a = spec.cubic_coeff_a;
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

std::vector<Tap> filter_taps(const ResizeSpec& spec, const ResizeAxis& a, double x) {
  double radius = spec.mode == ResizeMode::Linear ? 1 : 2;
  double stretch = spec.antialias ? std::min(a.scale, 1.0) : 1.0;
  double floor = std::floor(x);
  double ratio = x - floor;
  int64_t first = static_cast<int64_t>(std::floor(-radius / stretch)) + 1;
  std::vector<Tap> taps;
  for (int64_t i = first; i <= 1 - first; ++i)
    taps.push_back({static_cast<int64_t>(floor) + i,
                    filter(spec, stretch * (static_cast<double>(i) - ratio))});
  auto normalize = [&] {
    double sum = 0;
    for (const Tap& t : taps) sum += t.weight;
    for (Tap& t : taps) t.weight /= sum;
  };
  if (spec.antialias) normalize();
  if (spec.exclude_outside) {
    for (Tap& t : taps)
      if (t.index < 0 || t.index >= a.in) t.weight = 0;
    normalize();
  }
  std::vector<Tap> kept;
  for (Tap t : taps)
    if (t.weight != 0) kept.push_back({std::clamp<int64_t>(t.index, 0, a.in - 1), t.weight});
  return kept;
}

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
    std::vector<std::vector<Tap>> per_x;
    for (int64_t x = 0; x < a.out; ++x) {
      double xo = original_coordinate(spec, a, x);
      if (spec.mode == ResizeMode::Nearest)
        per_x.push_back({{nearest_index(spec, xo, a.in), 1.0}});
      else
        per_x.push_back(filter_taps(spec, a, xo));
    }
    ResizeTaps t;
    for (const auto& taps : per_x) t.taps = std::max<int64_t>(t.taps, taps.size());
    t.identity = a.in == a.out;
    for (int64_t x = 0; x < a.out; ++x) {
      const std::vector<Tap>& taps = per_x[x];
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
