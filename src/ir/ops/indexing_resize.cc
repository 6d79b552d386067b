// Resize: decoding of its attributes and constant inputs, and its shape rule.
#include "ir/ops/indexing_resize.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// An output size computed in floating point, as an int64: a huge scale or size must be an
// error, not an undefined conversion (2^62 is a tensor's limit on elements anyway).
int64_t output_size(double size, std::string_view what, size_t i) {
  check(size >= 0 && size < 0x1p62, "{}[{}] gives output size {}, out of range", what, i, size);
  return static_cast<int64_t>(size);
}

// Maps a string attribute onto an enum through a table; unknown values are errors.
template <typename E, size_t N>
E parse_choice(const Attributes& attrs, std::string_view name, std::string_view fallback,
               const std::pair<std::string_view, E> (&choices)[N]) {
  std::string value = attr_string(attrs, name, std::string(fallback));
  std::string known;
  for (const auto& [text, e] : choices) {
    if (text == value) return e;
    known += known.empty() ? std::string(text) : ", " + std::string(text);
  }
  fail("{} '{}' is not one of {}", name, value, known);
}

constexpr std::pair<std::string_view, ResizeMode> kModes[] = {
    {"nearest", ResizeMode::Nearest}, {"linear", ResizeMode::Linear}, {"cubic", ResizeMode::Cubic}};
constexpr std::pair<std::string_view, ResizeCoord> kCoords[] = {
    {"half_pixel", ResizeCoord::HalfPixel},
    {"half_pixel_symmetric", ResizeCoord::HalfPixelSymmetric},
    {"pytorch_half_pixel", ResizeCoord::PytorchHalfPixel},
    {"align_corners", ResizeCoord::AlignCorners},
    {"asymmetric", ResizeCoord::Asymmetric},
    {"tf_crop_and_resize", ResizeCoord::TfCropAndResize},
    {"tf_half_pixel_for_nn", ResizeCoord::TfHalfPixelForNn}};
constexpr std::pair<std::string_view, ResizeNearest> kNearest[] = {
    {"round_prefer_floor", ResizeNearest::RoundPreferFloor},
    {"round_prefer_ceil", ResizeNearest::RoundPreferCeil},
    {"floor", ResizeNearest::Floor},
    {"ceil", ResizeNearest::Ceil}};

bool present(const Tensor* t) {
  return t != nullptr && t->defined() && t->numel() > 0;
}

// Output sizes from `sizes`, possibly scaled uniformly to keep the aspect ratio (opset 18).
void apply_sizes(ResizeSpec& spec, const std::vector<int64_t>& axes, const Tensor& sizes,
                 const std::string& policy) {
  check(is_integer(sizes.dtype()), "sizes must be an integer tensor, got {}",
        dtype_name(sizes.dtype()));
  std::vector<int64_t> values = sizes.to_ints();
  for (size_t i = 0; i < axes.size(); ++i) {
    check(values[i] >= 0, "sizes[{}] = {} is negative", i, values[i]);
    check(values[i] == 0 || spec.axes[axes[i]].in > 0, "sizes[{}] = {} resizes an empty axis", i,
          values[i]);
  }
  if (policy == "stretch") {
    for (size_t i = 0; i < axes.size(); ++i) {
      ResizeAxis& a = spec.axes[axes[i]];
      a.out = values[i];
      a.scale = a.in > 0 ? static_cast<double>(a.out) / static_cast<double>(a.in) : 1.0;
      a.resized_length = static_cast<double>(a.out);
    }
    return;
  }
  check(policy == "not_larger" || policy == "not_smaller",
        "keep_aspect_ratio_policy '{}' is not one of stretch, not_larger, not_smaller", policy);
  double scale = policy == "not_larger" ? INFINITY : 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    double s = static_cast<double>(values[i]) / static_cast<double>(spec.axes[axes[i]].in);
    scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    ResizeAxis& a = spec.axes[axes[i]];
    a.scale = scale;
    a.resized_length = static_cast<double>(a.in) * scale;
    // The spec rounds halfway cases up.
    a.out = output_size(std::floor(a.resized_length + 0.5), "sizes", i);
  }
}

// Output sizes from `scales`: floor(in * scale), with the roi's extent for tf_crop_and_resize.
void apply_scales(ResizeSpec& spec, const std::vector<int64_t>& axes, const Tensor& scales) {
  require_float(scales.dtype(), "scales");
  std::vector<double> values = scales.to_doubles();
  for (size_t i = 0; i < axes.size(); ++i) {
    check(values[i] > 0, "scales[{}] = {} must be positive", i, values[i]);
    ResizeAxis& a = spec.axes[axes[i]];
    a.scale = values[i];
    a.resized_length = static_cast<double>(a.in) * a.scale;
    float extent = spec.coord == ResizeCoord::TfCropAndResize
                       ? static_cast<float>(a.roi_end - a.roi_start)
                       : 1.0f;
    // Single precision, as ONNX Runtime computes it: 10 * 0.7f gives 7, not 6.
    a.out = output_size(
        std::floor(static_cast<float>(a.in) * extent * static_cast<float>(values[i])), "scales", i);
  }
}

std::vector<TensorType> resize(const InferInput& in) {
  const TensorType& x = in.type(0);
  auto constant = [&](size_t i) { return in.has(i) ? &in.value(i) : nullptr; };
  ResizeSpec spec = resize_spec(in.attrs, x.shape, constant(1), constant(2), constant(3));
  check(spec.mode == ResizeMode::Nearest || is_float(x.dtype),
        "mode 'linear' and 'cubic' need a floating-point input, got {}", dtype_name(x.dtype));
  return one(x.dtype, spec.out_shape());
}

}  // namespace

Shape ResizeSpec::out_shape() const {
  Shape out;
  for (const ResizeAxis& a : axes) out.push_back(a.out);
  return out;
}

ResizeSpec resize_spec(const Attributes& attrs, const Shape& x, const Tensor* roi,
                       const Tensor* scales, const Tensor* sizes) {
  ResizeSpec spec;
  spec.mode = parse_choice(attrs, "mode", "nearest", kModes);
  spec.coord = parse_choice(attrs, "coordinate_transformation_mode", "half_pixel", kCoords);
  spec.nearest = parse_choice(attrs, "nearest_mode", "round_prefer_floor", kNearest);
  spec.cubic_coeff_a = attr_float(attrs, "cubic_coeff_a", -0.75f);
  spec.extrapolation_value = attr_float(attrs, "extrapolation_value", 0.0f);
  int64_t exclude_outside = attr_int(attrs, "exclude_outside", 0);
  check(exclude_outside == 0 || exclude_outside == 1, "exclude_outside must be 0 or 1, got {}",
        exclude_outside);
  spec.exclude_outside = exclude_outside == 1;
  int64_t antialias = attr_int(attrs, "antialias", 0);
  check(antialias == 0 || antialias == 1, "antialias must be 0 or 1, got {}", antialias);
  spec.antialias = antialias == 1;
  std::string policy = attr_string(attrs, "keep_aspect_ratio_policy", "stretch");

  int64_t rank = static_cast<int64_t>(x.size());
  check(rank >= 1, "X must have rank >= 1");
  std::vector<int64_t> axes(rank);
  for (int64_t i = 0; i < rank; ++i) axes[i] = i;
  if (has_attr(attrs, "axes")) axes = normalize_axes(attr_ints(attrs, "axes"), rank);
  int64_t n = static_cast<int64_t>(axes.size());
  for (int64_t d : x) spec.axes.push_back({.in = d, .out = d});

  if (present(roi) && spec.coord == ResizeCoord::TfCropAndResize) {
    require_float(roi->dtype(), "roi");
    check(roi->numel() == 2 * n, "roi has {} values, expected {} (starts then ends)", roi->numel(),
          2 * n);
    std::vector<double> values = roi->to_doubles();
    for (int64_t i = 0; i < n; ++i) {
      spec.axes[axes[i]].roi_start = values[i];
      spec.axes[axes[i]].roi_end = values[n + i];
    }
  }
  bool has_scales = present(scales);
  bool has_sizes = present(sizes);
  check(has_scales != has_sizes, "exactly one of scales and sizes must be given, got {}",
        has_scales ? "both" : "neither");
  const Tensor& given = has_scales ? *scales : *sizes;
  check(given.rank() == 1 && given.numel() == n, "{} has shape {}, expected [{}]",
        has_scales ? "scales" : "sizes", format_shape(given.shape()), n);
  if (has_scales) {
    check(policy == "stretch" || policy == "not_larger" || policy == "not_smaller",
          "keep_aspect_ratio_policy '{}' is not one of stretch, not_larger, not_smaller", policy);
    apply_scales(spec, axes, *scales);
  } else {
    apply_sizes(spec, axes, *sizes, policy);
  }
  return spec;
}

void add_indexing_resize_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "Resize",
                   .min_inputs = 1,
                   .max_inputs = 4,
                   .infer = resize,
                   .constant_inputs = {1, 2, 3}});
}

}  // namespace orch::ops
