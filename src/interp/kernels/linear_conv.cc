// Conv and ConvTranspose: for each (batch, output channel) an accumulator plane in double; each
// weight tap adds a shifted, strided input plane to it over the range where both are in bounds.
#include "interp/kernels/linear_core.h"

#include <algorithm>
#include <vector>

#include "interp/kernels/linear_window3.h"

namespace orch::interp {
namespace {

struct ConvDims {
  int64_t batch, in_channels, out_channels, group;
};

ConvDims conv_dims(const Shape& x, const Shape& y, const Attributes& attrs) {
  return {x[0], x[1], y[1], attr_int(attrs, "group", 1)};
}

std::vector<double> bias_of(const KernelArgs& args) {
  return args.inputs.size() > 2 && args.inputs[2].defined() ? args.inputs[2].to_doubles()
                                                            : std::vector<double>{};
}

void store(Tensor& y, const std::vector<double>& values) {
  for (int64_t i = 0; i < y.numel(); ++i) y.set(i, values[i]);
}

void conv(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  Tensor& y = args.outputs[0];
  store(y, conv_doubles(x.to_doubles(), x.shape(), w.to_doubles(), w.shape(), bias_of(args),
                        args.attrs, y.shape()));
}

// X [N, C, D...], W [C, M/group, K...]: each input element scatters X[n, c, i] W[c, m, k] to
// Y[n, m, i*s - p + k*d].
void conv_transpose(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  Tensor& y = args.outputs[0];
  Window3 g(ops::transposed_window(args.attrs, ops::spatial_dims(x.shape()),
                                   ops::spatial_dims(w.shape())));
  ConvDims dims = conv_dims(x.shape(), y.shape(), args.attrs);
  int64_t cpg = dims.in_channels / dims.group, mpg = dims.out_channels / dims.group;
  std::vector<double> xv = x.to_doubles(), wv = w.to_doubles(), bias = bias_of(args);
  std::vector<double> out(y.numel());
  for (int64_t n = 0; n < dims.batch; ++n)
    for (int64_t m = 0; m < dims.out_channels; ++m) {
      double* acc = out.data() + (n * dims.out_channels + m) * g.out_size();
      std::fill_n(acc, g.out_size(), bias.empty() ? 0.0 : bias[m]);
      int64_t group = m / mpg;
      for (int64_t c = 0; c < cpg; ++c) {
        int64_t channel = group * cpg + c;
        const double* xp = xv.data() + (n * dims.in_channels + channel) * g.in_size();
        const double* wp = wv.data() + (channel * mpg + m % mpg) * g.kernel_size();
        for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
          for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
            for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
              double wk = wp[(k0 * g.kernel[1] + k1) * g.kernel[2] + k2];
              int64_t off0 = k0 * g.dilations[0] - g.pad_begin[0];
              int64_t off1 = k1 * g.dilations[1] - g.pad_begin[1];
              int64_t off2 = k2 * g.dilations[2] - g.pad_begin[2];
              auto [lo0, hi0] = valid_range(g.in[0], g.out[0], g.strides[0], off0);
              auto [lo1, hi1] = valid_range(g.in[1], g.out[1], g.strides[1], off1);
              auto [lo2, hi2] = valid_range(g.in[2], g.out[2], g.strides[2], off2);
              for (int64_t i0 = lo0; i0 < hi0; ++i0)
                for (int64_t i1 = lo1; i1 < hi1; ++i1) {
                  int64_t o0 = i0 * g.strides[0] + off0, o1 = i1 * g.strides[1] + off1;
                  int64_t y_row = (o0 * g.out[1] + o1) * g.out[2] + off2;
                  const double* xrow = xp + (i0 * g.in[1] + i1) * g.in[2];
                  for (int64_t i2 = lo2; i2 < hi2; ++i2)
                    acc[y_row + i2 * g.strides[2]] += wk * xrow[i2];
                }
            }
      }
    }
  store(y, out);
}

}  // namespace

// X [N, C, D...], W [M, C/group, K...]: Y[n, m, o] = B[m] + sum X[n, c, o*s - p + k*d] W[m, c, k].
std::vector<double> conv_doubles(const std::vector<double>& xv, const Shape& x_shape,
                                 const std::vector<double>& wv, const Shape& w_shape,
                                 const std::vector<double>& bias, const Attributes& attrs,
                                 const Shape& y_shape) {
  Window3 g(
      ops::forward_window(attrs, ops::spatial_dims(x_shape), ops::spatial_dims(w_shape), false));
  ConvDims dims = conv_dims(x_shape, y_shape, attrs);
  int64_t cpg = dims.in_channels / dims.group, mpg = dims.out_channels / dims.group;
  std::vector<double> out(num_elements(y_shape));
  for (int64_t n = 0; n < dims.batch; ++n)
    for (int64_t m = 0; m < dims.out_channels; ++m) {
      double* acc = out.data() + (n * dims.out_channels + m) * g.out_size();
      std::fill_n(acc, g.out_size(), bias.empty() ? 0.0 : bias[m]);
      for (int64_t c = 0; c < cpg; ++c) {
        const double* xp = xv.data() + (n * dims.in_channels + (m / mpg) * cpg + c) * g.in_size();
        const double* wp = wv.data() + (m * cpg + c) * g.kernel_size();
        for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0)
          for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1)
            for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
              double wk = wp[(k0 * g.kernel[1] + k1) * g.kernel[2] + k2];
              int64_t off0 = k0 * g.dilations[0] - g.pad_begin[0];
              int64_t off1 = k1 * g.dilations[1] - g.pad_begin[1];
              int64_t off2 = k2 * g.dilations[2] - g.pad_begin[2];
              auto [lo0, hi0] = valid_range(g.out[0], g.in[0], g.strides[0], off0);
              auto [lo1, hi1] = valid_range(g.out[1], g.in[1], g.strides[1], off1);
              auto [lo2, hi2] = valid_range(g.out[2], g.in[2], g.strides[2], off2);
              for (int64_t o0 = lo0; o0 < hi0; ++o0)
                for (int64_t o1 = lo1; o1 < hi1; ++o1) {
                  int64_t i0 = o0 * g.strides[0] + off0, i1 = o1 * g.strides[1] + off1;
                  int64_t x_row = (i0 * g.in[1] + i1) * g.in[2] + off2;
                  double* arow = acc + (o0 * g.out[1] + o1) * g.out[2];
                  for (int64_t o2 = lo2; o2 < hi2; ++o2)
                    arow[o2] += wk * xp[x_row + o2 * g.strides[2]];
                }
            }
      }
    }
  return out;
}

void add_linear_conv_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Conv", conv}, {"ConvTranspose", conv_transpose}});
}

}  // namespace orch::interp
