// Reference kernels of the pooling ops. Each output element reduces the input elements its
// window covers (padding contributes nothing; AveragePool may count it in the divisor).
// RoiAlign's kernel is in pooling_roi_align.cc.
#include <cmath>
#include <limits>
#include <vector>

#include "interp/kernels/families.h"
#include "interp/kernels/linear_window3.h"
#include "interp/kernels/pooling_roi_align.h"
#include "interp/kernels/util.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

// The input elements under one output element's window.
struct Taps {
  std::vector<int64_t> flat;  // row-major spatial indices of in-bounds taps, in window order
  int64_t padded = 0;         // window positions inside input + explicit padding
};

Window3 window_of(const KernelArgs& args) {
  const Shape& x = args.inputs[0].shape();
  return Window3(ops::forward_window(args.attrs, ops::spatial_dims(x),
                                     attr_ints(args.attrs, "kernel_shape"),
                                     attr_int(args.attrs, "ceil_mode", 0) != 0));
}

// Calls f(plane, out_index, taps) for every output element of every (n, c) plane.
template <typename F>
void for_each_window(const Window3& g, int64_t planes, F f) {
  Taps taps;
  for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
    for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
      for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
        taps.flat.clear();
        taps.padded = 0;
        std::array<int64_t, 3> o = {o0, o1, o2}, i;
        for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
          for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
            for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
              std::array<int64_t, 3> k = {k0, k1, k2};
              bool inside = true, in_padding = true;
              for (int d = 0; d < 3; ++d) {
                i[d] = o[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
                inside = inside && i[d] >= 0 && i[d] < g.in[d];
                in_padding = in_padding && i[d] >= -g.pad_begin[d] && i[d] < g.in[d] + g.pad_end[d];
              }
              taps.padded += in_padding;
              if (inside) taps.flat.push_back((i[0] * g.in[1] + i[1]) * g.in[2] + i[2]);
            }
        int64_t out_index = (o0 * g.out[1] + o1) * g.out[2] + o2;
        for (int64_t p = 0; p < planes; ++p) f(p, out_index, taps);
      }
}

int64_t planes_of(const Tensor& x) {
  return x.shape()[0] * x.shape()[1];
}

// Indices count over the whole input tensor; storage_order 1 numbers the spatial dims
// column-major.
void max_pool(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Window3 g = window_of(args);
  bool column_major = attr_int(args.attrs, "storage_order", 0) == 1;
  std::vector<double> xv = x.to_doubles();
  for_each_window(g, planes_of(x), [&](int64_t p, int64_t o, const Taps& taps) {
    const double* plane = xv.data() + p * g.in_size();
    double best = -std::numeric_limits<double>::infinity();
    int64_t arg = taps.flat.empty() ? 0 : taps.flat[0];
    for (int64_t t : taps.flat)
      if (plane[t] > best) best = plane[t], arg = t;
    args.outputs[0].set(p * g.out_size() + o, best);
    if (args.outputs.size() < 2) return;
    if (column_major) {
      int64_t i2 = arg % g.in[2], i1 = arg / g.in[2] % g.in[1], i0 = arg / (g.in[1] * g.in[2]);
      arg = i0 + g.in[0] * (i1 + g.in[1] * i2);
    }
    args.outputs[1].set_int(p * g.out_size() + o, p * g.in_size() + arg);
  });
}

void average_pool(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Window3 g = window_of(args);
  bool include_pad = attr_int(args.attrs, "count_include_pad", 0) != 0;
  std::vector<double> xv = x.to_doubles();
  for_each_window(g, planes_of(x), [&](int64_t p, int64_t o, const Taps& taps) {
    const double* plane = xv.data() + p * g.in_size();
    double sum = 0;
    for (int64_t t : taps.flat) sum += plane[t];
    double count = static_cast<double>(include_pad ? taps.padded : taps.flat.size());
    args.outputs[0].set(p * g.out_size() + o, sum / count);
  });
}

double lp_norm(const double* begin, const std::vector<int64_t>* taps, int64_t n, double p) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::pow(std::abs(begin[taps ? (*taps)[i] : i]), p);
  return std::pow(sum, 1.0 / p);
}

void lp_pool(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Window3 g = window_of(args);
  double p_norm = static_cast<double>(attr_int(args.attrs, "p", 2));
  std::vector<double> xv = x.to_doubles();
  for_each_window(g, planes_of(x), [&](int64_t p, int64_t o, const Taps& taps) {
    const double* plane = xv.data() + p * g.in_size();
    int64_t n = static_cast<int64_t>(taps.flat.size());
    args.outputs[0].set(p * g.out_size() + o, lp_norm(plane, &taps.flat, n, p_norm));
  });
}

// Scatters each X element to the flat position its index names in the unpooled shape (N, C and
// (in - 1) * stride + kernel - pads), then places that at the start of each output dim.
void max_unpool(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& y = args.outputs[0];
  ops::Window w = ops::forward_window(args.attrs, ops::spatial_dims(x.shape()),
                                      attr_ints(args.attrs, "kernel_shape"), false);
  Shape unpooled = {x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < w.in.size(); ++i)
    unpooled.push_back((w.in[i] - 1) * w.strides[i] + w.kernel[i] - w.pad_begin[i] - w.pad_end[i]);
  int64_t size = num_elements(unpooled);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t at = indices.get_int(i);
    check(at >= 0 && at < size, "MaxUnpool index {} is outside the unpooled {}", at,
          format_shape(unpooled));
    y.set(ravel(unravel(at, unpooled), y.shape()), x.get(i));
  }
}

enum class Global { Average, Max, Lp };

template <Global kind>
void global_pool(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  int64_t planes = planes_of(x), size = planes == 0 ? 0 : x.numel() / planes;
  std::vector<double> xv = x.to_doubles();
  for (int64_t p = 0; p < planes; ++p) {
    const double* plane = xv.data() + p * size;
    double r = 0;
    if constexpr (kind == Global::Average) {
      for (int64_t i = 0; i < size; ++i) r += plane[i];
      r /= static_cast<double>(size);
    } else if constexpr (kind == Global::Max) {
      r = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < size; ++i) r = std::max(r, plane[i]);
    } else {
      r = lp_norm(plane, nullptr, size, static_cast<double>(attr_int(args.attrs, "p", 2)));
    }
    args.outputs[0].set(p, r);
  }
}

}  // namespace

void add_pooling_kernels(KernelTable& table) {
  table.insert(table.end(), {{"MaxPool", max_pool},
                             {"AveragePool", average_pool},
                             {"LpPool", lp_pool},
                             {"MaxUnpool", max_unpool},
                             {"GlobalAveragePool", global_pool<Global::Average>},
                             {"GlobalMaxPool", global_pool<Global::Max>},
                             {"GlobalLpPool", global_pool<Global::Lp>}});
  add_pooling_roi_align_kernels(table);
}

}  // namespace orch::interp
