// Reference kernels of the layout ops. Every kernel copies whole elements as raw bytes, so each
// dtype (f16, u64, bool, ...) moves exactly.
//
// Most of them are one gather: for each output dim, a table gives the input element offset that
// each output coordinate reads (or kOutside for padding); an output element reads the sum of its
// coordinates' offsets. Transpose permutes strides, Slice scales them, Expand zeroes them, Tile
// wraps them, Pad reflects or clamps them, DepthToSpace transposes a 6-D view.
#include <algorithm>
#include <cstring>

#include "interp/kernels/families.h"
#include "ir/error.h"
#include "ir/ops/layout_params.h"

namespace orch::interp {
namespace {

// Offsets are sums of non-negative terms, so -1 is free to mark a padded coordinate.
constexpr int64_t kOutside = -1;
using AxisOffsets = std::vector<std::vector<int64_t>>;

// Fills `out` in row-major order over the tables' sizes. `fill` is one element's bytes for
// padded positions; nullptr leaves them zero.
void gather(const Tensor& in, Tensor& out, const AxisOffsets& tables,
            const std::byte* fill = nullptr) {
  int64_t count = 1;
  for (const auto& t : tables) count *= static_cast<int64_t>(t.size());
  check(count == out.numel(), "gather covers {} elements, the output has {}", count, out.numel());
  if (count == 0) return;
  size_t es = dtype_size(in.dtype());
  const std::byte* src = in.bytes();
  std::byte* dst = out.mutable_bytes();
  if (tables.empty()) {
    std::memcpy(dst, src, es);
    return;
  }
  const std::vector<int64_t>& last = tables.back();
  auto inner = static_cast<int64_t>(last.size());
  std::vector<size_t> index(tables.size() - 1, 0);
  for (int64_t n = 0; n < count; n += inner) {
    int64_t base = 0;
    bool outside = false;
    for (size_t d = 0; d < index.size(); ++d) {
      int64_t v = tables[d][index[d]];
      outside = outside || v == kOutside;
      base += v;
    }
    for (int64_t j = 0; j < inner; ++j) {
      std::byte* to = dst + (n + j) * es;
      if (outside || last[j] == kOutside) {
        if (fill) std::memcpy(to, fill, es);
      } else {
        std::memcpy(to, src + (base + last[j]) * es, es);
      }
    }
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < tables[d].size()) break;
      index[d] = 0;
    }
  }
}

// Coordinate o reads (start + o * step) * stride.
std::vector<int64_t> strided(int64_t size, int64_t stride, int64_t start = 0, int64_t step = 1) {
  std::vector<int64_t> t(size);
  for (int64_t o = 0; o < size; ++o) t[o] = (start + o * step) * stride;
  return t;
}

// Tables that read a row-major tensor of shape `view` transposed by `perm`.
AxisOffsets permuted(const Shape& view, const std::vector<int64_t>& perm) {
  std::vector<int64_t> strides = row_major_strides(view);
  AxisOffsets tables;
  for (int64_t p : perm) tables.push_back(strided(view[p], strides[p]));
  return tables;
}

void transpose(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  gather(in, args.outputs[0], permuted(in.shape(), ops::transpose_perm(args.attrs, in.rank())));
}

// Reshape, Flatten, Squeeze, Unsqueeze: same elements in the same order, new shape.
void copy_all(KernelArgs& args) {
  std::memcpy(args.outputs[0].mutable_bytes(), args.inputs[0].bytes(), args.inputs[0].nbytes());
}

// Bytes of the dims after `axis`, and the count of blocks before it.
std::pair<int64_t, int64_t> outer_inner(const Shape& s, int64_t axis, DType dtype) {
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= s[d];
  int64_t inner = static_cast<int64_t>(dtype_size(dtype));
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  return {outer, inner};
}

void concat(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  int64_t axis = attr_int(args.attrs, "axis", 0);
  if (axis < 0) axis += out.rank();
  auto [outer, inner] = outer_inner(out.shape(), axis, out.dtype());
  std::byte* dst = out.mutable_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& in : args.inputs) {
      int64_t block = in.shape()[axis] * inner;
      std::memcpy(dst, in.bytes() + o * block, block);
      dst += block;
    }
  }
}

void split(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  int64_t axis = attr_int(args.attrs, "axis", 0);
  if (axis < 0) axis += in.rank();
  auto [outer, inner] = outer_inner(in.shape(), axis, in.dtype());
  int64_t in_block = in.shape()[axis] * inner;
  int64_t offset = 0;
  for (Tensor& out : args.outputs) {
    int64_t block = out.shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.mutable_bytes() + o * block, in.bytes() + o * in_block + offset, block);
    offset += block;
  }
}

void slice(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  auto optional = [&](size_t i) {
    return i < args.inputs.size() && args.inputs[i].defined() ? &args.inputs[i] : nullptr;
  };
  std::vector<ops::SliceAxis> axes =
      ops::slice_axes(in.shape(), args.inputs[1], args.inputs[2], optional(3), optional(4));
  std::vector<int64_t> strides = row_major_strides(in.shape());
  AxisOffsets tables;
  for (size_t d = 0; d < axes.size(); ++d)
    tables.push_back(strided(axes[d].size, strides[d], axes[d].start, axes[d].step));
  gather(in, args.outputs[0], tables);
}

// Position p in [0, size) after mirroring at both ends without repeating the edge (numpy's
// "reflect"); the pattern has period 2 * (size - 1).
int64_t reflect(int64_t p, int64_t size) {
  if (size == 1) return 0;
  int64_t period = 2 * (size - 1);
  int64_t m = ((p % period) + period) % period;
  return m < size ? m : period - m;
}

void pad(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  Tensor& out = args.outputs[0];
  bool has_value = args.inputs.size() > 2 && args.inputs[2].defined();
  const Tensor* axes =
      args.inputs.size() > 3 && args.inputs[3].defined() ? &args.inputs[3] : nullptr;
  std::vector<ops::PadAxis> pads = ops::pad_axes(in.shape(), args.inputs[1], axes);
  std::string mode = attr_string(args.attrs, "mode", "constant");
  std::vector<int64_t> strides = row_major_strides(in.shape());
  AxisOffsets tables;
  for (int d = 0; d < in.rank(); ++d) {
    // Negative pads crop first; the remaining `kept` elements are then padded.
    int64_t crop = std::max<int64_t>(0, -pads[d].begin);
    int64_t kept = in.shape()[d] - crop - std::max<int64_t>(0, -pads[d].end);
    int64_t before = std::max<int64_t>(0, pads[d].begin);
    std::vector<int64_t> t(out.shape()[d]);
    for (int64_t o = 0; o < out.shape()[d]; ++o) {
      int64_t p = o - before;
      if (p < 0 || p >= kept) {
        if (mode == "constant") {
          t[o] = kOutside;
          continue;
        }
        p = mode == "edge" ? std::clamp<int64_t>(p, 0, kept - 1) : reflect(p, kept);
      }
      t[o] = (p + crop) * strides[d];
    }
    tables.push_back(std::move(t));
  }
  gather(in, out, tables, has_value ? args.inputs[2].bytes() : nullptr);
}

void expand(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  const Shape& out = args.outputs[0].shape();
  std::vector<int64_t> strides = row_major_strides(in.shape());
  size_t lead = out.size() - in.shape().size();
  AxisOffsets tables;
  for (size_t d = 0; d < out.size(); ++d) {
    bool repeated = d < lead || in.shape()[d - lead] == 1;
    tables.push_back(repeated ? std::vector<int64_t>(out[d], 0)
                              : strided(out[d], strides[d - lead]));
  }
  gather(in, args.outputs[0], tables);
}

void tile(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  const Shape& out = args.outputs[0].shape();
  std::vector<int64_t> strides = row_major_strides(in.shape());
  AxisOffsets tables;
  for (size_t d = 0; d < out.size(); ++d) {
    std::vector<int64_t> t(out[d]);
    for (int64_t o = 0; o < out[d]; ++o) t[o] = (o % in.shape()[d]) * strides[d];
    tables.push_back(std::move(t));
  }
  gather(in, args.outputs[0], tables);
}

// DepthToSpace and SpaceToDepth are a reshape to 6-D, a transpose and a reshape (as the spec
// defines them).
void depth_to_space(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  const Shape& s = in.shape();
  int64_t b = attr_int(args.attrs, "blocksize", 1);
  int64_t c = s[1] / (b * b);
  bool dcr = attr_string(args.attrs, "mode", "DCR") == "DCR";
  AxisOffsets tables = dcr ? permuted({s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2})
                           : permuted({s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3});
  gather(in, args.outputs[0], tables);
}

void space_to_depth(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  const Shape& s = in.shape();
  int64_t b = attr_int(args.attrs, "blocksize", 1);
  gather(in, args.outputs[0], permuted({s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4}));
}

void trilu(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  Tensor& out = args.outputs[0];
  bool upper = attr_int(args.attrs, "upper", 1) != 0;
  int64_t k = args.inputs.size() > 1 && args.inputs[1].defined() ? args.inputs[1].get_int(0) : 0;
  int64_t rows = in.shape()[in.rank() - 2];
  int64_t cols = in.shape()[in.rank() - 1];
  size_t es = dtype_size(in.dtype());
  // Elements outside the kept triangle stay zero.
  for (int64_t n = 0; n < in.numel(); ++n) {
    int64_t i = (n / cols) % rows;
    int64_t j = n % cols;
    if (upper ? j - i >= k : j - i <= k)
      std::memcpy(out.mutable_bytes() + n * es, in.bytes() + n * es, es);
  }
}

}  // namespace

void add_layout_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Transpose", transpose},
                             {"Reshape", copy_all},
                             {"Flatten", copy_all},
                             {"Squeeze", copy_all},
                             {"Unsqueeze", copy_all},
                             {"Concat", concat},
                             {"Split", split},
                             {"Slice", slice},
                             {"Pad", pad},
                             {"Expand", expand},
                             {"Tile", tile},
                             {"DepthToSpace", depth_to_space},
                             {"SpaceToDepth", space_to_depth},
                             {"Trilu", trilu}});
}

}  // namespace orch::interp
