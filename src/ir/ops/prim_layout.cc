// Layout primitives: they move elements without arithmetic. Each output coordinate reads an
// input coordinate given by an affine map (Transpose, Slice, Concat, Pad, Tile, Reshape via
// floordiv/mod), or a whole dimension where the index is data (Gather) or non-affine (Resize,
// reflect/edge padding).
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/ops/indexing_resize.h"
#include "ir/ops/layout_params.h"
#include "ir/ops/prim_parts.h"
#include "ir/ops/shape_util.h"

namespace orch::prim {
namespace {

std::vector<IndexExpr> identity_dims(size_t rank) {
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < rank; ++d) dims.push_back(axis(d));
  return dims;
}

IndexMap single(std::vector<IndexExpr> dims) {
  IndexMap map;
  map.inputs.push_back(std::move(dims));
  return map;
}

OnnxForm transpose_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"Transpose", {{"perm", required_ints(attrs, "perm")}}, {{0, {}}}};
}

IndexMap transpose_map(const Attributes& attrs, std::span<const TensorType> inputs,
                       const TensorType&) {
  std::vector<int64_t> perm = ops::transpose_perm(attrs, inputs[0].shape.size());
  std::vector<IndexExpr> dims(perm.size(), IndexExpr::constant(0));
  for (size_t i = 0; i < perm.size(); ++i) dims[perm[i]] = axis(i);
  return single(std::move(dims));
}

OnnxForm reshape_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  std::vector<int64_t> shape = required_ints(attrs, "shape");
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    fail("shape {} has a negative dim", format_shape(shape));
  check(num_elements(shape) == num_elements(inputs[0].shape),
        "shape {} has {} elements, the input {} has {}", format_shape(shape), num_elements(shape),
        format_shape(inputs[0].shape), num_elements(inputs[0].shape));
  return {"Reshape", {{"allowzero", int64_t{1}}}, {{0, {}}, {-1, int_tensor(shape)}}};
}

// Input dim j = (flat output index floordiv input stride j) mod input dim j.
IndexMap reshape_map(const Attributes&, std::span<const TensorType> inputs,
                     const TensorType& output) {
  std::vector<int64_t> out_strides = row_major_strides(output.shape);
  IndexExpr flat = IndexExpr::constant(0);
  for (size_t i = 0; i < output.shape.size(); ++i) flat = flat + axis(i) * out_strides[i];
  const Shape& in = inputs[0].shape;
  std::vector<int64_t> in_strides = row_major_strides(in);
  std::vector<IndexExpr> dims;
  for (size_t j = 0; j < in.size(); ++j) {
    IndexExpr e = IndexExpr::floordiv(flat, std::max<int64_t>(in_strides[j], 1));
    dims.push_back(j == 0 ? e : IndexExpr::mod(e, std::max<int64_t>(in[j], 1)));
  }
  return single(std::move(dims));
}

// prim.Slice reads start + o*step along each dim for o < ceil((end - start) / step); unlike
// ONNX Slice, starts/ends are literal coordinates (never from the end) and cover every dim.
struct PrimSlice {
  std::vector<int64_t> starts, steps, sizes;
};

PrimSlice prim_slice(const Attributes& attrs, const Shape& in) {
  PrimSlice s{required_ints(attrs, "starts"), required_ints(attrs, "steps"), {}};
  std::vector<int64_t> ends = required_ints(attrs, "ends");
  check(s.starts.size() == in.size() && ends.size() == in.size() && s.steps.size() == in.size(),
        "starts, ends and steps need one entry per dim ({})", in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t step = s.steps[d];
    check(step != 0, "steps must not be 0");
    int64_t span = ends[d] - s.starts[d];
    int64_t size = step > 0 ? (span + step - 1) / step : (-span + -step - 1) / -step;
    size = std::max<int64_t>(size, 0);
    if (size > 0) {
      int64_t last = s.starts[d] + (size - 1) * step;
      check(std::min(s.starts[d], last) >= 0 && std::max(s.starts[d], last) < in[d],
            "dim {}: slice {}:{}:{} reads outside [0, {})", d, s.starts[d], ends[d], step, in[d]);
    }
    s.sizes.push_back(size);
  }
  return s;
}

OnnxForm slice_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  const Shape& in = inputs[0].shape;
  PrimSlice s = prim_slice(attrs, in);
  std::vector<int64_t> axes, starts, ends;
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t end = s.starts[d] + s.sizes[d] * s.steps[d];
    // ONNX reads a negative end from the back; -(dim + 1) clamps to "before element 0".
    if (end < 0) end = -(in[d] + 1);
    axes.push_back(static_cast<int64_t>(d));
    starts.push_back(s.sizes[d] == 0 ? 0 : s.starts[d]);
    ends.push_back(s.sizes[d] == 0 ? 0 : end);
  }
  std::vector<int64_t> steps = s.steps;
  for (size_t d = 0; d < in.size(); ++d)
    if (s.sizes[d] == 0) steps[d] = 1;
  return {"Slice",
          {},
          {{0, {}},
           {-1, int_tensor(starts)},
           {-1, int_tensor(ends)},
           {-1, int_tensor(axes)},
           {-1, int_tensor(steps)}}};
}

IndexMap slice_map(const Attributes& attrs, std::span<const TensorType> inputs, const TensorType&) {
  PrimSlice s = prim_slice(attrs, inputs[0].shape);
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < s.starts.size(); ++d) dims.push_back(axis(d) * s.steps[d] + s.starts[d]);
  return single(std::move(dims));
}

OnnxForm concat_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  check(has_attr(attrs, "axis"), "attribute 'axis' is required");
  OnnxForm form{"Concat", {{"axis", attr_int(attrs, "axis", 0)}}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) form.args.push_back({static_cast<int>(i), {}});
  return form;
}

IndexMap concat_map(const Attributes& attrs, std::span<const TensorType> inputs,
                    const TensorType& output) {
  int64_t ax = ops::normalize_axis(attr_int(attrs, "axis", 0), output.shape.size());
  IndexMap map;
  int64_t offset = 0;
  for (const TensorType& t : inputs) {
    std::vector<IndexExpr> dims = identity_dims(t.shape.size());
    dims[ax] = axis(ax) - offset;
    offset += t.shape[ax];
    map.inputs.push_back(std::move(dims));
  }
  return map;
}

std::string pad_mode(const Attributes& attrs) {
  std::string mode = attr_string(attrs, "mode", "constant");
  check(mode == "constant" || mode == "edge" || mode == "reflect",
        "mode must be constant, edge or reflect, got '{}'", mode);
  return mode;
}

OnnxForm pad_form(const Attributes& attrs, std::span<const TensorType> inputs) {
  std::vector<int64_t> pads = required_ints(attrs, "pads");
  check(pads.size() == 2 * inputs[0].shape.size(), "pads needs {} entries, got {}",
        2 * inputs[0].shape.size(), pads.size());
  for (int64_t p : pads) check(p >= 0, "pads must not be negative (crop with prim.Slice)");
  std::string mode = pad_mode(attrs);
  OnnxForm form{"Pad", {{"mode", mode}}, {{0, {}}, {-1, int_tensor(pads)}}};
  if (mode == "constant")
    form.args.push_back({-1, Tensor::scalar(inputs[0].dtype, attr_float(attrs, "value", 0.0f))});
  return form;
}

// Output coordinate o reads x = o - pad_begin when inside [0, n); outside, edge padding reads the
// nearest end, clamp(x) = (|x| - |x - (n-1)| + n-1) / 2, and reflect padding the mirror image,
// (n-1) - |(n-1) - |x||, which holds while the pads are shorter than n. Over an interior box both
// give back x's interval exactly; a box at an edge gets a superset.
IndexMap pad_map(const Attributes& attrs, std::span<const TensorType> inputs, const TensorType&) {
  std::vector<int64_t> pads = required_ints(attrs, "pads");
  const Shape& shape = inputs[0].shape;
  size_t rank = shape.size();
  std::string mode = pad_mode(attrs);
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < rank; ++d) {
    IndexExpr x = axis(d) - pads[d];
    int64_t last = shape[d] - 1;
    bool padded = pads[d] != 0 || pads[d + rank] != 0;
    bool reflects = pads[d] <= last && pads[d + rank] <= last;
    using E = IndexExpr;
    if (!padded || mode == "constant")
      dims.push_back(x);
    else if (mode == "edge")
      dims.push_back(E::floordiv(E::abs(x) + E::abs(x - last) * -1 + last, 2));
    else if (reflects)
      dims.push_back(E::abs(E::abs(x) * -1 + last) * -1 + last);
    else
      dims.push_back(E::whole());
  }
  return single(std::move(dims));
}

OnnxForm gather_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"Gather", {{"axis", attr_int(attrs, "axis", 0)}}, {{0, {}}, {1, {}}}};
}

// Output [pre..., indices dims..., post...]: the gathered axis is data-dependent (whole).
IndexMap gather_map(const Attributes& attrs, std::span<const TensorType> inputs,
                    const TensorType&) {
  size_t rank = inputs[0].shape.size();
  size_t q = inputs[1].shape.size();
  size_t ax = ops::normalize_axis(attr_int(attrs, "axis", 0), rank);
  IndexMap map;
  std::vector<IndexExpr> data;
  for (size_t d = 0; d < rank; ++d)
    data.push_back(d < ax ? axis(d) : d == ax ? IndexExpr::whole() : axis(d - 1 + q));
  map.inputs.push_back(std::move(data));
  std::vector<IndexExpr> indices;
  for (size_t j = 0; j < q; ++j) indices.push_back(axis(ax + j));
  map.inputs.push_back(std::move(indices));
  return map;
}

OnnxForm gather_elements_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"GatherElements", {{"axis", attr_int(attrs, "axis", 0)}}, {{0, {}}, {1, {}}}};
}

// Output coordinates are the indices' coordinates; along `axis` the data index is data.
IndexMap gather_elements_map(const Attributes& attrs, std::span<const TensorType> inputs,
                             const TensorType&) {
  size_t rank = inputs[0].shape.size();
  size_t ax = ops::normalize_axis(attr_int(attrs, "axis", 0), rank);
  IndexMap map;
  std::vector<IndexExpr> data = identity_dims(rank);
  data[ax] = IndexExpr::whole();
  map.inputs.push_back(std::move(data));
  map.inputs.push_back(identity_dims(rank));
  return map;
}

OnnxForm tile_form(const Attributes& attrs, std::span<const TensorType>) {
  return {"Tile", {}, {{0, {}}, {-1, int_tensor(required_ints(attrs, "repeats"))}}};
}

IndexMap tile_map(const Attributes&, std::span<const TensorType> inputs, const TensorType&) {
  std::vector<IndexExpr> dims;
  for (size_t d = 0; d < inputs[0].shape.size(); ++d)
    dims.push_back(IndexExpr::mod(axis(d), std::max<int64_t>(inputs[0].shape[d], 1)));
  return single(std::move(dims));
}

// prim.Resize is ONNX Resize with roi/scales/sizes as float/int attributes.
OnnxForm resize_form(const Attributes& attrs, std::span<const TensorType>) {
  OnnxForm form{"Resize", {}, {{0, {}}, {}, {}, {}}};
  for (const auto& [key, value] : attrs) {
    if (key == "roi" || key == "scales") {
      std::vector<float> v = attr_floats(attrs, key);
      std::vector<double> d(v.begin(), v.end());
      form.args[key == "roi" ? 1 : 2].constant =
          Tensor::from_doubles(DType::f32, {static_cast<int64_t>(v.size())}, d);
    } else if (key == "sizes") {
      form.args[3].constant = int_tensor(attr_ints(attrs, key));
    } else {
      form.attrs[key] = value;
    }
  }
  check(form.args[2].constant.defined() != form.args[3].constant.defined(),
        "exactly one of 'scales' and 'sizes' is required");
  return form;
}

// The sampled coordinate of output o along one axis is x(o) = o*a + b (ResizeAxis and the
// coordinate mode give a and b); nearest reads round(x), linear floor(x) and floor(x)+1, cubic
// floor(x)-1 .. floor(x)+2. The map is floordiv(o*P + B, Q) + t - 2 with P/Q ~ a, B/Q ~ b
// (Q = 2^20) and a reduce axis t in [0, 5]: a margin covering every mode's taps and the
// rational rounding. Antialiased downsampling (a filter wider than 4 taps) and axes longer
// than 2^19 read the whole dimension.
constexpr int64_t kResizeQ = int64_t{1} << 20;

IndexMap resize_map(const Attributes& attrs, std::span<const TensorType> inputs,
                    const TensorType&) {
  OnnxForm form = resize_form(attrs, inputs);
  auto arg = [&](int i) {
    return form.args[i].constant.defined() ? &form.args[i].constant : nullptr;
  };
  ops::ResizeSpec spec = ops::resize_spec(form.attrs, inputs[0].shape, arg(1), arg(2), arg(3));
  IndexMap map{{6}, {{}}};
  IndexExpr tap = axis(inputs[0].shape.size());
  for (size_t d = 0; d < spec.axes.size(); ++d) {
    const ops::ResizeAxis& r = spec.axes[d];
    double in = static_cast<double>(r.in);
    double a = 1 / r.scale, b = 0;
    switch (spec.coord) {
      case ops::ResizeCoord::HalfPixel:
        b = 0.5 / r.scale - 0.5;
        break;
      case ops::ResizeCoord::HalfPixelSymmetric:
        b = in / 2 * (1 - static_cast<double>(r.out) / r.resized_length) + 0.5 / r.scale - 0.5;
        break;
      case ops::ResizeCoord::PytorchHalfPixel:
        b = r.out > 1 ? 0.5 / r.scale - 0.5 : 0;
        a = r.out > 1 ? a : 0;
        break;
      case ops::ResizeCoord::AlignCorners:
        a = r.resized_length == 1 ? 0 : (in - 1) / (r.resized_length - 1);
        break;
      case ops::ResizeCoord::Asymmetric:
        break;
      case ops::ResizeCoord::TfHalfPixelForNn:
        b = 0.5 / r.scale;
        break;
      case ops::ResizeCoord::TfCropAndResize:
        a = r.out == 1 ? 0 : (r.roi_end - r.roi_start) * (in - 1) / static_cast<double>(r.out - 1);
        b = r.out == 1 ? 0.5 * (r.roi_start + r.roi_end) * (in - 1) : r.roi_start * (in - 1);
        break;
    }
    bool wide = spec.antialias && r.scale < 1;
    if (wide || r.out >= kResizeQ / 2 || !std::isfinite(a) || !std::isfinite(b)) {
      map.inputs[0].push_back(IndexExpr::whole());
    } else if (spec.mode == ops::ResizeMode::Nearest && a == 1 && b == 0) {
      map.inputs[0].push_back(axis(d));
    } else {
      auto p = static_cast<int64_t>(std::llround(a * kResizeQ));
      auto c = static_cast<int64_t>(std::floor(b * kResizeQ));
      map.inputs[0].push_back(IndexExpr::floordiv(axis(d) * p + c, kResizeQ) + tap - 2);
    }
  }
  return map;
}

}  // namespace

void add_layout_prims(std::vector<OpSchema>& table, FormTable& forms) {
  auto add = [&](std::string_view name, int min_inputs, int max_inputs, InferFn infer,
                 OnnxFormFn form, IndexMapFn map) {
    table.push_back({.name = name,
                     .min_inputs = min_inputs,
                     .max_inputs = max_inputs,
                     .infer = infer,
                     .category = Category::Layout,
                     .index_map = map});
    forms.emplace_back(name, form);
  };
  add("prim.Transpose", 1, 1, infer_via<transpose_form>, transpose_form, transpose_map);
  add("prim.Reshape", 1, 1, infer_via<reshape_form>, reshape_form, reshape_map);
  add("prim.Slice", 1, 1, infer_via<slice_form>, slice_form, slice_map);
  add("prim.Concat", 1, kVariadic, infer_via<concat_form>, concat_form, concat_map);
  add("prim.Pad", 1, 1, infer_via<pad_form>, pad_form, pad_map);
  add("prim.Gather", 2, 2, infer_via<gather_form>, gather_form, gather_map);
  add("prim.GatherElements", 2, 2, infer_via<gather_elements_form>, gather_elements_form,
      gather_elements_map);
  add("prim.Tile", 1, 1, infer_via<tile_form>, tile_form, tile_map);
  add("prim.Resize", 1, 1, infer_via<resize_form>, resize_form, resize_map);
}

}  // namespace orch::prim
