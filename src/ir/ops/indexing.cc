// Shape rules of the indexing ops: Gather, GatherElements, GatherND, ScatterElements, ScatterND,
// GridSample (Resize, which shares the family, is in indexing_resize.cc).
#include <algorithm>
#include <string>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/indexing_resize.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

void require_index_dtype(const InferInput& in, size_t i) {
  require_dtype(in.type(i).dtype, {DType::i32, DType::i64}, fmt::format("indices (input {})", i));
}

// Checks the `reduction` attribute of the scatter ops.
void check_reduction(const InferInput& in) {
  std::string r = attr_string(in.attrs, "reduction", "none");
  check(r == "none" || r == "add" || r == "mul" || r == "max" || r == "min",
        "reduction '{}' is not one of none, add, mul, max, min", r);
}

// out = data.shape[:axis] + indices.shape + data.shape[axis+1:].
std::vector<TensorType> gather(const InferInput& in) {
  const Shape& data = in.type(0).shape;
  const Shape& indices = in.type(1).shape;
  require_index_dtype(in, 1);
  check(!data.empty(), "data must have rank >= 1");
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 0), static_cast<int64_t>(data.size()));
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return one(in.type(0).dtype, out);
}

// Indices of GatherElements/ScatterElements: the rank of data, and no larger than data off the
// axis (those dims index data directly).
int64_t check_element_indices(const InferInput& in) {
  const Shape& data = in.type(0).shape;
  const Shape& indices = in.type(1).shape;
  require_index_dtype(in, 1);
  check(!data.empty(), "data must have rank >= 1");
  check(indices.size() == data.size(), "indices {} must have the rank of data {}",
        format_shape(indices), format_shape(data));
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 0), static_cast<int64_t>(data.size()));
  for (size_t d = 0; d < data.size(); ++d)
    check(static_cast<int64_t>(d) == axis || indices[d] <= data[d],
          "indices {} exceed data {} along axis {}", format_shape(indices), format_shape(data), d);
  return axis;
}

std::vector<TensorType> gather_elements(const InferInput& in) {
  check_element_indices(in);
  return one(in.type(0).dtype, in.type(1).shape);
}

std::vector<TensorType> scatter_elements(const InferInput& in) {
  check_element_indices(in);
  check_reduction(in);
  check(in.type(2).shape == in.type(1).shape, "updates {} must have the shape of indices {}",
        format_shape(in.type(2).shape), format_shape(in.type(1).shape));
  check(in.type(2).dtype == in.type(0).dtype, "updates are {}, data is {}",
        dtype_name(in.type(2).dtype), dtype_name(in.type(0).dtype));
  return one(in.type(0).dtype, in.type(0).shape);
}

// out = indices.shape[:-1] + data.shape[batch_dims + k:], k = indices.shape[-1].
std::vector<TensorType> gather_nd(const InferInput& in) {
  const Shape& data = in.type(0).shape;
  const Shape& indices = in.type(1).shape;
  require_index_dtype(in, 1);
  int64_t r = static_cast<int64_t>(data.size());
  int64_t q = static_cast<int64_t>(indices.size());
  int64_t b = attr_int(in.attrs, "batch_dims", 0);
  check(r >= 1 && q >= 1, "data {} and indices {} must have rank >= 1", format_shape(data),
        format_shape(indices));
  check(b >= 0 && b < std::min(q, r), "batch_dims {} must be in [0, {})", b, std::min(q, r));
  for (int64_t d = 0; d < b; ++d)
    check(indices[d] == data[d], "batch dim {} differs: indices {}, data {}", d,
          format_shape(indices), format_shape(data));
  int64_t k = indices.back();
  check(k >= 1 && k <= r - b, "indices.shape[-1] = {} must be in [1, {}]", k, r - b);
  Shape out(indices.begin(), indices.end() - 1);
  out.insert(out.end(), data.begin() + b + k, data.end());
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> scatter_nd(const InferInput& in) {
  const Shape& data = in.type(0).shape;
  const Shape& indices = in.type(1).shape;
  require_index_dtype(in, 1);
  check_reduction(in);
  int64_t r = static_cast<int64_t>(data.size());
  check(r >= 1 && !indices.empty(), "data {} and indices {} must have rank >= 1",
        format_shape(data), format_shape(indices));
  int64_t k = indices.back();
  check(k >= 1 && k <= r, "indices.shape[-1] = {} must be in [1, {}]", k, r);
  Shape expected(indices.begin(), indices.end() - 1);
  expected.insert(expected.end(), data.begin() + k, data.end());
  check(in.type(2).shape == expected, "updates {} must have shape {}",
        format_shape(in.type(2).shape), format_shape(expected));
  check(in.type(2).dtype == in.type(0).dtype, "updates are {}, data is {}",
        dtype_name(in.type(2).dtype), dtype_name(in.type(0).dtype));
  return one(in.type(0).dtype, data);
}

// GridSample in its opset-16 form, 4-D only: X [N, C, H_in, W_in] sampled at the points of
// grid [N, H_out, W_out, 2] gives [N, C, H_out, W_out].
std::vector<TensorType> grid_sample(const InferInput& in) {
  const TensorType& x = in.type(0);
  const TensorType& grid = in.type(1);
  require_float(x.dtype, "X");
  require_float(grid.dtype, "grid");
  check(x.shape.size() == 4, "X {} must be 4-D [N, C, H_in, W_in]", format_shape(x.shape));
  check(grid.shape.size() == 4 && grid.shape[3] == 2, "grid {} must be [N, H_out, W_out, 2]",
        format_shape(grid.shape));
  check(grid.shape[0] == x.shape[0], "grid {} and X {} differ in N", format_shape(grid.shape),
        format_shape(x.shape));
  // Every padding mode reads some pixel of the plane, so it must have one.
  check(x.shape[2] > 0 && x.shape[3] > 0, "X {} has an empty image plane", format_shape(x.shape));
  std::string mode = attr_string(in.attrs, "mode", "bilinear");
  check(mode == "bilinear" || mode == "nearest" || mode == "bicubic",
        "mode '{}' is not one of bilinear, nearest, bicubic", mode);
  std::string padding = attr_string(in.attrs, "padding_mode", "zeros");
  check(padding == "zeros" || padding == "border" || padding == "reflection",
        "padding_mode '{}' is not one of zeros, border, reflection", padding);
  int64_t align_corners = attr_int(in.attrs, "align_corners", 0);
  check(align_corners == 0 || align_corners == 1, "align_corners must be 0 or 1, got {}",
        align_corners);
  return one(x.dtype, {x.shape[0], x.shape[1], grid.shape[1], grid.shape[2]});
}

}  // namespace

void add_indexing_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "Gather", .min_inputs = 2, .max_inputs = 2, .infer = gather});
  table.push_back(
      {.name = "GatherElements", .min_inputs = 2, .max_inputs = 2, .infer = gather_elements});
  table.push_back({.name = "GatherND", .min_inputs = 2, .max_inputs = 2, .infer = gather_nd});
  table.push_back(
      {.name = "ScatterElements", .min_inputs = 3, .max_inputs = 3, .infer = scatter_elements});
  table.push_back({.name = "ScatterND", .min_inputs = 3, .max_inputs = 3, .infer = scatter_nd});
  table.push_back({.name = "GridSample", .min_inputs = 2, .max_inputs = 2, .infer = grid_sample});
  add_indexing_resize_ops(table);
}

}  // namespace orch::ops
