// Resize's reference kernel: an output element is the sum over the product of its axes' taps
// (ir/ops/resize_sampling.h).
#include "interp/kernels/indexing_resize.h"

#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ir/ops/indexing_resize.h"
#include "ir/ops/resize_sampling.h"

namespace orch::interp {
namespace {

using ops::ResizeAxis;
using ops::ResizeCoord;
using ops::ResizeMode;
using ops::ResizeSpec;

// The taps of every output coordinate along one axis; `outside` marks coordinates that
// tf_crop_and_resize maps outside the input (they take extrapolation_value).
struct AxisTaps {
  std::vector<std::vector<ops::ResizeTap>> taps;
  std::vector<bool> outside;
};

AxisTaps axis_taps(const ResizeSpec& spec, const ResizeAxis& a) {
  AxisTaps result;
  for (int64_t x = 0; x < a.out; ++x) {
    double xo = ops::resize_source(spec, a, x);
    bool outside = spec.coord == ResizeCoord::TfCropAndResize &&
                   (xo < 0 || xo > static_cast<double>(a.in - 1));
    result.outside.push_back(outside);
    result.taps.push_back(ops::resize_taps_at(spec, a, xo));
  }
  return result;
}

// Sum over the product of the taps of axes [axis, rank) at output position `pos`.
double sample(const std::vector<double>& x, const std::vector<AxisTaps>& axes,
              const std::vector<int64_t>& strides, const std::vector<int64_t>& pos, size_t axis,
              int64_t offset) {
  if (axis == axes.size()) return x[offset];
  double sum = 0;
  for (const ops::ResizeTap& t : axes[axis].taps[pos[axis]])
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
