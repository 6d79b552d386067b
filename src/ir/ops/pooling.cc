// Shape rules of the pooling ops: windowed (MaxPool, AveragePool, LpPool), global ones and
// RoiAlign.
#include <algorithm>
#include <string>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/linear_window.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

void check_input(const InferInput& in) {
  const Shape& x = in.type(0).shape;
  check(x.size() >= 3, "pooling input must have rank at least 3 (N, C, spatial...), got {}",
        format_shape(x));
}

// X [N, C, D...] -> [N, C, O...], O from kernel_shape, strides, pads, dilations, ceil_mode.
Shape windowed_shape(const InferInput& in) {
  check_input(in);
  const Shape& x = in.type(0).shape;
  check(has_attr(in.attrs, "kernel_shape"), "'kernel_shape' is required");
  int64_t ceil_mode = attr_int(in.attrs, "ceil_mode", 0);
  check(ceil_mode == 0 || ceil_mode == 1, "ceil_mode must be 0 or 1, got {}", ceil_mode);
  Window w = forward_window(in.attrs, spatial_dims(x), attr_ints(in.attrs, "kernel_shape"),
                            ceil_mode != 0);
  Shape out = {x[0], x[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

std::vector<TensorType> max_pool(const InferInput& in) {
  require_dtype(in.type(0).dtype, {DType::f16, DType::f32, DType::f64, DType::i8, DType::u8},
                "MaxPool input");
  int64_t order = attr_int(in.attrs, "storage_order", 0);
  check(order == 0 || order == 1, "storage_order must be 0 or 1, got {}", order);
  Shape out = windowed_shape(in);
  std::vector<TensorType> types = one(in.type(0).dtype, out);
  if (in.num_outputs == 2) types.push_back({DType::i64, out});
  return types;
}

std::vector<TensorType> average_pool(const InferInput& in) {
  require_float(in.type(0).dtype, "AveragePool input");
  int64_t include = attr_int(in.attrs, "count_include_pad", 0);
  check(include == 0 || include == 1, "count_include_pad must be 0 or 1, got {}", include);
  return one(in.type(0).dtype, windowed_shape(in));
}

std::vector<TensorType> lp_pool(const InferInput& in) {
  require_float(in.type(0).dtype, "LpPool input");
  check(attr_int(in.attrs, "p", 2) >= 1, "p must be positive, got {}", attr_int(in.attrs, "p", 2));
  return one(in.type(0).dtype, windowed_shape(in));
}

// X [N, C, D...] -> [N, C, 1...].
std::vector<TensorType> global_pool(const InferInput& in) {
  require_float(in.type(0).dtype, "global pooling input");
  check_input(in);
  if (has_attr(in.attrs, "p"))
    check(attr_int(in.attrs, "p", 2) >= 1, "p must be positive, got {}",
          attr_int(in.attrs, "p", 2));
  Shape out = in.type(0).shape;
  std::fill(out.begin() + 2, out.end(), 1);
  return one(in.type(0).dtype, out);
}

// X [N, C, D...] and i64 indices I of X's shape -> [N, C, O...]: O from the window (the inverse
// of MaxPool's size rule), or from the constant output_shape when that is at least as large.
std::vector<TensorType> max_unpool(const InferInput& in) {
  require_float(in.type(0).dtype, "MaxUnpool input");
  check_input(in);
  const Shape& x = in.type(0).shape;
  check(in.type(1).dtype == DType::i64 && in.type(1).shape == x,
        "MaxUnpool indices must be i64{}, got {}{}", format_shape(x), dtype_name(in.type(1).dtype),
        format_shape(in.type(1).shape));
  check(has_attr(in.attrs, "kernel_shape"), "'kernel_shape' is required");
  check(!has_attr(in.attrs, "dilations") && !has_attr(in.attrs, "auto_pad"),
        "MaxUnpool takes no dilations or auto_pad");
  Window w = forward_window(in.attrs, spatial_dims(x), attr_ints(in.attrs, "kernel_shape"), false);
  Shape out = {x[0], x[1]};
  for (size_t i = 0; i < w.in.size(); ++i)
    out.push_back(size_in_range(
        __int128{w.in[i] - 1} * w.strides[i] + w.kernel[i] - w.pad_begin[i] - w.pad_end[i],
        "unpooled spatial dim"));
  if (in.has(2)) {
    std::vector<int64_t> given = in.value(2).to_ints();
    check(given.size() == x.size(), "MaxUnpool output_shape has {} values, X has rank {}",
          given.size(), x.size());
    for (size_t i = 0; i < out.size(); ++i)
      check(i < 2 ? given[i] == out[i] : given[i] >= out[i],
            "MaxUnpool output_shape {} must keep N and C and cover the unpooled shape {}",
            format_shape(given), format_shape(out));
    out = given;
  }
  return one(in.type(0).dtype, out);
}

// X [N, C, H, W], rois [R, 4] of X's dtype, i64 batch_indices [R] -> [R, C, output_height,
// output_width].
std::vector<TensorType> roi_align(const InferInput& in) {
  const TensorType& x = in.type(0);
  require_float(x.dtype, "RoiAlign input");
  check(x.shape.size() == 4, "RoiAlign input must be [N, C, H, W], got {}", format_shape(x.shape));
  // Every sample reads a pixel, even one outside the image (with weight 0).
  check(x.shape[2] > 0 && x.shape[3] > 0, "RoiAlign input {} has an empty image",
        format_shape(x.shape));
  const TensorType& rois = in.type(1);
  check(rois.dtype == x.dtype, "RoiAlign rois must be {} like the input, got {}",
        dtype_name(x.dtype), dtype_name(rois.dtype));
  check(rois.shape.size() == 2 && rois.shape[1] == 4, "RoiAlign rois must be [num_rois, 4], got {}",
        format_shape(rois.shape));
  const TensorType& batch = in.type(2);
  check(batch.dtype == DType::i64, "RoiAlign batch_indices must be i64, got {}",
        dtype_name(batch.dtype));
  check(batch.shape == Shape{rois.shape[0]}, "RoiAlign batch_indices must be [{}], got {}",
        rois.shape[0], format_shape(batch.shape));
  std::string mode = attr_string(in.attrs, "mode", "avg");
  check(mode == "avg" || mode == "max", "RoiAlign mode must be 'avg' or 'max', got '{}'", mode);
  std::string transform = attr_string(in.attrs, "coordinate_transformation_mode", "half_pixel");
  check(transform == "half_pixel" || transform == "output_half_pixel",
        "RoiAlign coordinate_transformation_mode must be 'half_pixel' or 'output_half_pixel', "
        "got '{}'",
        transform);
  int64_t height = attr_int(in.attrs, "output_height", 1);
  int64_t width = attr_int(in.attrs, "output_width", 1);
  check(height > 0 && width > 0,
        "RoiAlign output_height and output_width must be positive, got {} "
        "and {}",
        height, width);
  int64_t ratio = attr_int(in.attrs, "sampling_ratio", 0);
  check(ratio >= 0, "RoiAlign sampling_ratio must not be negative, got {}", ratio);
  return one(x.dtype, {rois.shape[0], x.shape[1], height, width});
}

}  // namespace

void add_pooling_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "MaxPool", .max_outputs = 2, .infer = max_pool});
  table.push_back({.name = "AveragePool", .infer = average_pool});
  table.push_back({.name = "LpPool", .infer = lp_pool});
  table.push_back({.name = "MaxUnpool",
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .infer = max_unpool,
                   .constant_inputs = {2}});
  for (std::string_view op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
    table.push_back({.name = op, .infer = global_pool});
  table.push_back({.name = "RoiAlign", .min_inputs = 3, .max_inputs = 3, .infer = roi_align});
}

}  // namespace orch::ops
