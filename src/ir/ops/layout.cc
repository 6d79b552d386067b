// Shape rules of the layout ops: they move or copy elements without computing on them.
#include <algorithm>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/layout_params.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

int64_t rank_of(const InferInput& in, size_t i) {
  return static_cast<int64_t>(in.type(i).shape.size());
}

// Product of dims [begin, end), checked: with a zero dim elsewhere, a shape's other dims may
// multiply past int64.
int64_t product(const Shape& s, size_t begin, size_t end) {
  return num_elements(
      Shape(s.begin() + static_cast<ptrdiff_t>(begin), s.begin() + static_cast<ptrdiff_t>(end)));
}

int64_t required_int(const Attributes& attrs, std::string_view name) {
  check(has_attr(attrs, name), "attribute '{}' is required", name);
  return attr_int(attrs, name, 0);
}

std::vector<TensorType> transpose(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  std::vector<int64_t> perm = transpose_perm(in.attrs, rank_of(in, 0));
  Shape out;
  for (int64_t p : perm) out.push_back(s[p]);
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> reshape(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  int64_t allowzero = attr_int(in.attrs, "allowzero", 0);
  check(allowzero == 0 || allowzero == 1, "allowzero must be 0 or 1, got {}", allowzero);
  Shape out = int_list(in.value(1), "shape");
  int64_t inferred = -1;
  // `if ... fail`, not check(): check's arguments are evaluated on every pass, and formatting
  // the shape each time made a shape of many dims quadratic (a fuzz_onnx_import timeout).
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (inferred >= 0) fail("shape {} has more than one -1", format_shape(out));
      inferred = static_cast<int64_t>(i);
    } else if (out[i] == 0 && allowzero == 0) {
      if (i >= s.size())
        fail("shape {} copies dim {} (0), but the input {} has rank {}", format_shape(out), i,
             format_shape(s), s.size());
      out[i] = s[i];
    } else if (out[i] < 0) {
      fail("shape {} has a negative dim", format_shape(out));
    }
  }
  int64_t total = num_elements(s);
  if (inferred >= 0) {
    check(allowzero == 0 || std::find(out.begin(), out.end(), 0) == out.end(),
          "shape {} has both 0 and -1 with allowzero=1", format_shape(out));
    out[inferred] = 1;
    int64_t known = num_elements(out);
    check(known != 0 && total % known == 0, "cannot infer the -1 of shape {} for {} elements",
          format_shape(out), total);
    out[inferred] = total / known;
  }
  check(num_elements(out) == total, "cannot reshape {} to {}", format_shape(s), format_shape(out));
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> flatten(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  int64_t rank = rank_of(in, 0);
  int64_t axis = attr_int(in.attrs, "axis", 1);
  check(axis >= -rank && axis <= rank, "axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  return one(in.type(0).dtype, {product(s, 0, axis), product(s, axis, s.size())});
}

std::vector<TensorType> squeeze(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  std::vector<bool> drop(s.size(), false);
  if (in.has(1)) {
    for (int64_t a : normalize_axes(int_list(in.value(1), "axes"), rank_of(in, 0))) {
      check(s[a] == 1, "cannot squeeze axis {} of size {}", a, s[a]);
      drop[a] = true;
    }
  } else {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> unsqueeze(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  std::vector<int64_t> axes = int_list(in.value(1), "axes");
  // Axes count in the output's rank, so -1 appends a trailing dim.
  auto out_rank = static_cast<int64_t>(s.size() + axes.size());
  Shape out(out_rank, 0);
  for (int64_t a : normalize_axes(axes, out_rank)) out[a] = 1;
  auto next = s.begin();
  for (int64_t& d : out)
    if (d == 0) d = *next++;
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> concat(const InferInput& in) {
  require_same_dtype(in);
  int64_t rank = rank_of(in, 0);
  check(rank >= 1, "inputs must have rank 1 or more");
  int64_t axis = normalize_axis(required_int(in.attrs, "axis"), rank);
  Shape out = in.type(0).shape;
  out[axis] = 0;
  for (size_t i = 0; i < in.types.size(); ++i) {
    const Shape& s = in.type(i).shape;
    bool same = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; same && d < rank; ++d) same = d == axis || s[d] == out[d];
    check(same, "input {} has shape {}, input 0 has {}: only axis {} may differ", i,
          format_shape(s), format_shape(in.type(0).shape), axis);
    out[axis] += s[axis];
  }
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> split(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  int64_t axis = normalize_axis(attr_int(in.attrs, "axis", 0), rank_of(in, 0));
  int64_t dim = s[axis];
  int64_t n = in.num_outputs;
  std::vector<int64_t> sizes;
  if (in.has(1)) {
    check(!has_attr(in.attrs, "num_outputs"), "give either the split input or num_outputs");
    sizes = int_list(in.value(1), "split");
    check(static_cast<int64_t>(sizes.size()) == n, "split has {} entries, the node has {} outputs",
          sizes.size(), n);
    int64_t sum = 0;
    for (int64_t v : sizes) {
      check(v >= 0, "split has a negative size {}", v);
      sum += v;
    }
    check(sum == dim, "split sizes add up to {}, axis {} has {}", sum, axis, dim);
  } else if (has_attr(in.attrs, "num_outputs")) {
    // Opset 18: chunks of ceil(dim / n), the last one smaller.
    check(attr_int(in.attrs, "num_outputs", 0) == n, "num_outputs is {}, the node has {} outputs",
          attr_int(in.attrs, "num_outputs", 0), n);
    int64_t chunk = (dim + n - 1) / n;
    check(dim - chunk * (n - 1) >= 0, "cannot split {} into {} chunks of {}", dim, n, chunk);
    sizes.assign(n, chunk);
    sizes.back() = dim - chunk * (n - 1);
  } else {
    check(dim % n == 0, "axis {} of size {} does not split into {} equal parts", axis, dim, n);
    sizes.assign(n, dim / n);
  }
  std::vector<TensorType> out;
  for (int64_t size : sizes) {
    Shape piece = s;
    piece[axis] = size;
    out.push_back({in.type(0).dtype, piece});
  }
  return out;
}

std::vector<TensorType> slice(const InferInput& in) {
  const Tensor* axes = in.has(3) ? &in.value(3) : nullptr;
  const Tensor* steps = in.has(4) ? &in.value(4) : nullptr;
  Shape out;
  for (const SliceAxis& a : slice_axes(in.type(0).shape, in.value(1), in.value(2), axes, steps))
    out.push_back(a.size);
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> pad(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  std::string mode = attr_string(in.attrs, "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    unsupported("pad mode '{}' is not supported (constant, reflect, edge)", mode);
  if (in.has(2)) {
    check(in.type(2).dtype == in.type(0).dtype, "constant_value is {}, data is {}",
          dtype_name(in.type(2).dtype), dtype_name(in.type(0).dtype));
    check(num_elements(in.type(2).shape) == 1, "constant_value must be a scalar, got shape {}",
          format_shape(in.type(2).shape));
  }
  std::vector<PadAxis> pads = pad_axes(s, in.value(1), in.has(3) ? &in.value(3) : nullptr);
  Shape out(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    // Negative pads crop before the positive ones pad.
    int64_t kept = s[d] - std::max<int64_t>(0, -pads[d].begin) - std::max<int64_t>(0, -pads[d].end);
    check(kept >= 0, "pads crop {} elements from axis {} of size {}", s[d] - kept, d, s[d]);
    out[d] = s[d] + pads[d].begin + pads[d].end;
    check(mode == "constant" || out[d] == kept || kept > 0,
          "{} padding of axis {} needs at least one element to repeat", mode, d);
  }
  return one(in.type(0).dtype, out);
}

std::vector<TensorType> expand(const InferInput& in) {
  std::vector<int64_t> shape = int_list(in.value(1), "shape");
  if (std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }))
    fail("shape {} has a negative dim", format_shape(shape));
  return one(in.type(0).dtype, broadcast_shapes(in.type(0).shape, shape));
}

std::vector<TensorType> tile(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  std::vector<int64_t> repeats = int_list(in.value(1), "repeats");
  check(repeats.size() == s.size(), "repeats has {} entries, the input has rank {}", repeats.size(),
        s.size());
  Shape out(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    check(repeats[d] >= 0, "repeats[{}] is negative", d);
    check(repeats[d] == 0 || s[d] <= (int64_t{1} << 62) / repeats[d],
          "repeats[{}] = {} makes dim {} overflow", d, repeats[d], s[d]);
    out[d] = s[d] * repeats[d];
  }
  return one(in.type(0).dtype, out);
}

int64_t blocksize(const InferInput& in) {
  require_rank(in, 0, 4);
  int64_t b = required_int(in.attrs, "blocksize");
  check(b > 0, "blocksize must be positive, got {}", b);
  return b;
}

std::vector<TensorType> depth_to_space(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  int64_t b = blocksize(in);
  std::string mode = attr_string(in.attrs, "mode", "DCR");
  check(mode == "DCR" || mode == "CRD", "mode must be DCR or CRD, got '{}'", mode);
  int64_t area = size_in_range(__int128{b} * b, "blocksize^2");
  check(s[1] % area == 0, "channels {} are not a multiple of blocksize^2 = {}", s[1], area);
  return one(in.type(0).dtype, {s[0], s[1] / area, size_in_range(__int128{s[2]} * b, "height"),
                                size_in_range(__int128{s[3]} * b, "width")});
}

std::vector<TensorType> space_to_depth(const InferInput& in) {
  const Shape& s = in.type(0).shape;
  int64_t b = blocksize(in);
  check(s[2] % b == 0 && s[3] % b == 0, "height {} and width {} must be multiples of blocksize {}",
        s[2], s[3], b);
  int64_t area = size_in_range(__int128{b} * b, "blocksize^2");
  return one(in.type(0).dtype,
             {s[0], size_in_range(__int128{s[1]} * area, "channels"), s[2] / b, s[3] / b});
}

std::vector<TensorType> trilu(const InferInput& in) {
  check(rank_of(in, 0) >= 2, "input must have rank 2 or more, got {}",
        format_shape(in.type(0).shape));
  int64_t upper = attr_int(in.attrs, "upper", 1);
  check(upper == 0 || upper == 1, "upper must be 0 or 1, got {}", upper);
  if (in.has(1))
    check(int_list(in.value(1), "k").size() == 1, "k must hold one value, got shape {}",
          format_shape(in.type(1).shape));
  return one(in.type(0).dtype, in.type(0).shape);
}

}  // namespace

void add_layout_ops(std::vector<OpSchema>& table) {
  table.insert(
      table.end(),
      {
          {.name = "Transpose", .infer = transpose},
          {.name = "Reshape",
           .min_inputs = 2,
           .max_inputs = 2,
           .infer = reshape,
           .constant_inputs = {1}},
          {.name = "Flatten", .infer = flatten},
          {.name = "Squeeze", .max_inputs = 2, .infer = squeeze, .constant_inputs = {1}},
          {.name = "Unsqueeze",
           .min_inputs = 2,
           .max_inputs = 2,
           .infer = unsqueeze,
           .constant_inputs = {1}},
          {.name = "Concat", .max_inputs = kVariadic, .infer = concat},
          {.name = "Split",
           .max_inputs = 2,
           .max_outputs = kVariadic,
           .infer = split,
           .constant_inputs = {1}},
          {.name = "Slice",
           .min_inputs = 3,
           .max_inputs = 5,
           .infer = slice,
           .constant_inputs = {1, 2, 3, 4}},
          {.name = "Pad",
           .min_inputs = 2,
           .max_inputs = 4,
           .infer = pad,
           .constant_inputs = {1, 3}},
          {.name = "Expand",
           .min_inputs = 2,
           .max_inputs = 2,
           .infer = expand,
           .constant_inputs = {1}},
          {.name = "Tile", .min_inputs = 2, .max_inputs = 2, .infer = tile, .constant_inputs = {1}},
          {.name = "DepthToSpace", .infer = depth_to_space},
          {.name = "SpaceToDepth", .infer = space_to_depth},
          {.name = "Trilu", .max_inputs = 2, .infer = trilu, .constant_inputs = {1}},
      });
}

}  // namespace orch::ops
