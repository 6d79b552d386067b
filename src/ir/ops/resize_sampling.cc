#include "ir/ops/resize_sampling.h"

#include <algorithm>
#include <cmath>

namespace orch::ops {
namespace {

int64_t clamp_index(int64_t i, int64_t in) {
  return std::clamp<int64_t>(i, 0, in - 1);
}

int64_t nearest_index(const ResizeSpec& spec, double x, int64_t in) {
  double floor = std::floor(x);
  double ratio = x - floor;
  int64_t i = static_cast<int64_t>(floor);
  if (ratio != 0) {
    bool up = false;
    switch (spec.nearest) {
      case ResizeNearest::RoundPreferFloor:
        up = ratio > 0.5;
        break;
      case ResizeNearest::RoundPreferCeil:
        up = ratio >= 0.5;
        break;
      case ResizeNearest::Floor:
        break;
      case ResizeNearest::Ceil:
        up = true;
        break;
    }
    i += up ? 1 : 0;
  }
  return clamp_index(i, in);
}

// The interpolation kernel at distance t: the triangle, or Keys' cubic with parameter a.
double filter(const ResizeSpec& spec, double t) {
  t = std::abs(t);
  if (spec.mode == ResizeMode::Linear) return std::max(0.0, 1 - t);
  double a = spec.cubic_coeff_a;
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// Linear and cubic taps around x. With antialias, a downscaling axis stretches the filter by
// 1 / scale so that more inputs contribute, and the weights are normalized.
std::vector<ResizeTap> filter_taps(const ResizeSpec& spec, const ResizeAxis& a, double x) {
  double radius = spec.mode == ResizeMode::Linear ? 1 : 2;
  double stretch = spec.antialias ? std::min(a.scale, 1.0) : 1.0;
  double floor = std::floor(x);
  double ratio = x - floor;
  int64_t first = static_cast<int64_t>(std::floor(-radius / stretch)) + 1;
  std::vector<ResizeTap> taps;
  for (int64_t i = first; i <= 1 - first; ++i)
    taps.push_back({static_cast<int64_t>(floor) + i,
                    filter(spec, stretch * (static_cast<double>(i) - ratio))});
  auto normalize = [&] {
    double sum = 0;
    for (const ResizeTap& t : taps) sum += t.weight;
    for (ResizeTap& t : taps) t.weight /= sum;
  };
  if (spec.antialias) normalize();
  if (spec.exclude_outside) {
    for (ResizeTap& t : taps)
      if (t.index < 0 || t.index >= a.in) t.weight = 0;
    normalize();
  }
  std::vector<ResizeTap> kept;
  for (ResizeTap t : taps)
    if (t.weight != 0) kept.push_back({clamp_index(t.index, a.in), t.weight});
  return kept;
}

}  // namespace

double resize_source(const ResizeSpec& spec, const ResizeAxis& a, int64_t x) {
  double xr = static_cast<double>(x);
  double in = static_cast<double>(a.in);
  switch (spec.coord) {
    case ResizeCoord::HalfPixel:
      return (xr + 0.5) / a.scale - 0.5;
    case ResizeCoord::HalfPixelSymmetric: {
      // Centres the sampled window when flooring shortened the output.
      double adjustment = static_cast<double>(a.out) / a.resized_length;
      return in / 2 * (1 - adjustment) + (xr + 0.5) / a.scale - 0.5;
    }
    case ResizeCoord::PytorchHalfPixel:
      return a.out > 1 ? (xr + 0.5) / a.scale - 0.5 : 0;
    case ResizeCoord::AlignCorners:
      // The unfloored output length, as the ONNX reference (and its test data) uses.
      return a.resized_length == 1 ? 0 : xr * (in - 1) / (a.resized_length - 1);
    case ResizeCoord::Asymmetric:
      return xr / a.scale;
    case ResizeCoord::TfHalfPixelForNn:
      return (xr + 0.5) / a.scale;
    case ResizeCoord::TfCropAndResize:
      if (a.out == 1) return 0.5 * (a.roi_start + a.roi_end) * (in - 1);
      return a.roi_start * (in - 1) +
             xr * (a.roi_end - a.roi_start) * (in - 1) / static_cast<double>(a.out - 1);
  }
  return 0;
}

std::vector<ResizeTap> resize_taps_at(const ResizeSpec& spec, const ResizeAxis& a, double x) {
  if (spec.mode == ResizeMode::Nearest) return {{nearest_index(spec, x, a.in), 1.0}};
  return filter_taps(spec, a, x);
}

}  // namespace orch::ops
