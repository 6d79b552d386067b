// Resize's reference kernel. Each axis is sampled on its own: an output coordinate maps back to
// an input coordinate (coordinate_transformation_mode), which picks weighted input taps (mode);
// an output element is the sum over the product of its axes' taps. Taps past the edges repeat
// the edge element, as the ONNX reference pads in 'edge' mode.
#include "interp/kernels/indexing_resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "ir/ops/indexing_resize.h"

namespace orch::interp {
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

// The taps of every output coordinate along one axis; `outside` marks coordinates that
// tf_crop_and_resize maps outside the input (they take extrapolation_value).
struct AxisTaps {
  std::vector<std::vector<Tap>> taps;
  std::vector<bool> outside;
};

// The input coordinate that output coordinate `x` samples.
double original_coordinate(const ResizeSpec& spec, const ResizeAxis& a, int64_t x) {
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
    if (t.weight != 0) kept.push_back({clamp_index(t.index, a.in), t.weight});
  return kept;
}

AxisTaps axis_taps(const ResizeSpec& spec, const ResizeAxis& a) {
  AxisTaps result;
  for (int64_t x = 0; x < a.out; ++x) {
    double xo = original_coordinate(spec, a, x);
    bool outside = spec.coord == ResizeCoord::TfCropAndResize &&
                   (xo < 0 || xo > static_cast<double>(a.in - 1));
    result.outside.push_back(outside);
    if (spec.mode == ResizeMode::Nearest)
      result.taps.push_back({{nearest_index(spec, xo, a.in), 1.0}});
    else
      result.taps.push_back(filter_taps(spec, a, xo));
  }
  return result;
}

// Sum over the product of the taps of axes [axis, rank) at output position `pos`.
double sample(const std::vector<double>& x, const std::vector<AxisTaps>& axes,
              const std::vector<int64_t>& strides, const std::vector<int64_t>& pos, size_t axis,
              int64_t offset) {
  if (axis == axes.size()) return x[offset];
  double sum = 0;
  for (const Tap& t : axes[axis].taps[pos[axis]])
    sum += t.weight * sample(x, axes, strides, pos, axis + 1, offset + t.index * strides[axis]);
  return sum;
}

void resize(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  auto optional = [&](size_t i) {
    return i < args.inputs.size() && args.inputs[i].defined() ? &args.inputs[i] : nullptr;
  };
  ResizeSpec spec = ops::resize_spec(args.attrs, x.shape(), optional(1), optional(2), optional(3));
  check(spec.out_shape() == out.shape(), "output is {}, the inputs give {}",
        format_shape(out.shape()), format_shape(spec.out_shape()));
  if (out.numel() == 0) return;
  std::vector<AxisTaps> axes;
  for (const ResizeAxis& a : spec.axes) axes.push_back(axis_taps(spec, a));
  std::vector<int64_t> strides = row_major_strides(x.shape());
  std::vector<double> values;
  if (spec.mode != ResizeMode::Nearest) values = x.to_doubles();
  size_t es = dtype_size(x.dtype());

  std::vector<int64_t> pos(out.rank(), 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    bool outside = false;
    for (size_t d = 0; d < pos.size(); ++d) outside = outside || axes[d].outside[pos[d]];
    if (outside) {
      out.set(i, spec.extrapolation_value);
    } else if (spec.mode == ResizeMode::Nearest) {
      int64_t from = 0;
      for (size_t d = 0; d < pos.size(); ++d) from += axes[d].taps[pos[d]][0].index * strides[d];
      std::memcpy(out.mutable_bytes() + i * es, x.bytes() + from * es, es);
    } else {
      out.set(i, sample(values, axes, strides, pos, 0, 0));
    }
    // Advance the output position, last axis fastest.
    for (int d = out.rank() - 1; d >= 0 && ++pos[d] == out.shape()[d]; --d) pos[d] = 0;
  }
}

}  // namespace

void add_indexing_resize_kernels(KernelTable& table) {
  table.push_back({"Resize", resize});
}

}  // namespace orch::interp
