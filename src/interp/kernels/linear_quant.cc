// Integer and quantized linear ops on the float cores: 8-bit values minus their zero points are
// small integers, so their products and sums are exact in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "interp/kernels/linear_core.h"
#include "interp/kernels/util.h"
#include "ir/dtype.h"

namespace orch::interp {
namespace {

bool has(const KernelArgs& args, size_t i) {
  return i < args.inputs.size() && args.inputs[i].defined();
}

// The shape a MatMul quantization parameter broadcasts with: a vector of several values for
// the left operand holds one value per row (M), so it becomes [M, 1].
Shape param_shape(const Tensor& p, bool per_row) {
  if (per_row && p.rank() == 1 && p.numel() > 1) return {p.numel(), 1};
  return p.shape();
}

// `t` minus its zero point `zp` (see param_shape).
std::vector<double> centered(const Tensor& t, const Tensor* zp, bool per_row) {
  std::vector<double> v = t.to_doubles();
  if (zp == nullptr) return v;
  BroadcastIndex index(param_shape(*zp, per_row), t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) v[i] -= zp->get(index(i));
  return v;
}

// Conv weights minus their zero point, one value or one per output channel (dim 0).
std::vector<double> centered_weights(const Tensor& w, const Tensor* zp) {
  std::vector<double> v = w.to_doubles();
  if (zp == nullptr) return v;
  int64_t per_channel = w.numel() / w.shape()[0];
  for (int64_t i = 0; i < w.numel(); ++i) v[i] -= zp->get(zp->numel() == 1 ? 0 : i / per_channel);
  return v;
}

const Tensor* optional(const KernelArgs& args, size_t i) {
  return has(args, i) ? &args.inputs[i] : nullptr;
}

void store_i32(Tensor& y, const std::vector<double>& values) {
  for (int64_t i = 0; i < y.numel(); ++i) y.set_int(i, static_cast<int64_t>(values[i]));
}

void matmul_integer(KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& y = args.outputs[0];
  store_i32(y, matmul_doubles(centered(a, optional(args, 2), true), a.shape(),
                              centered(b, optional(args, 3), false), b.shape(), y.shape()));
}

void conv_integer(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& w = args.inputs[1];
  Tensor& y = args.outputs[0];
  store_i32(y, conv_doubles(centered(x, optional(args, 2), false), x.shape(),
                            centered_weights(w, optional(args, 3)), w.shape(), {}, args.attrs,
                            y.shape()));
}

// y = round((a - a_zp) @ (b - b_zp) * a_scale * b_scale / y_scale) + y_zp, with the scale
// factor rounded to f32 as the reference computes it; a's and y's parameters may be per row,
// b's per column.
void qlinear_matmul(KernelArgs& args) {
  const auto& in = args.inputs;
  Tensor& y = args.outputs[0];
  std::vector<double> acc =
      matmul_doubles(centered(in[0], &in[2], true), in[0].shape(), centered(in[3], &in[5], false),
                     in[3].shape(), y.shape());
  BroadcastIndex a_scale(param_shape(in[1], true), y.shape());
  BroadcastIndex b_scale(param_shape(in[4], false), y.shape());
  BroadcastIndex y_scale(param_shape(in[6], true), y.shape());
  BroadcastIndex y_zero(param_shape(in[7], true), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) {
    float factor = static_cast<float>(in[1].get(a_scale(i))) *
                   static_cast<float>(in[4].get(b_scale(i))) /
                   static_cast<float>(in[6].get(y_scale(i)));
    store_quantized(y, i, acc[i] * factor, in[7].get(y_zero(i)));
  }
}

// y = round((conv(x - x_zp, w - w_zp) + B) * x_scale * w_scale[m] / y_scale) + y_zp.
void qlinear_conv(KernelArgs& args) {
  const auto& in = args.inputs;
  Tensor& y = args.outputs[0];
  std::vector<double> bias = has(args, 8) ? in[8].to_doubles() : std::vector<double>{};
  std::vector<double> acc =
      conv_doubles(centered(in[0], &in[2], false), in[0].shape(), centered_weights(in[3], &in[5]),
                   in[3].shape(), bias, args.attrs, y.shape());
  int64_t channels = y.shape()[1], plane = y.numel() / (y.shape()[0] * channels);
  for (int64_t i = 0; i < y.numel(); ++i) {
    int64_t m = i / plane % channels;
    double w_scale = in[4].get(in[4].numel() == 1 ? 0 : m);
    float factor = static_cast<float>(in[1].get(0)) * static_cast<float>(w_scale) /
                   static_cast<float>(in[6].get(0));
    store_quantized(y, i, acc[i] * factor, in[7].get(0));
  }
}

}  // namespace

void add_linear_quant_kernels(KernelTable& table) {
  table.insert(table.end(), {{"MatMulInteger", matmul_integer},
                             {"ConvInteger", conv_integer},
                             {"QLinearMatMul", qlinear_matmul},
                             {"QLinearConv", qlinear_conv}});
}

}  // namespace orch::interp
