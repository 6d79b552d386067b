// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear in f32 arithmetic, as the ONNX
// reference computes them (NumPy on float32 arrays): the quotient x / scale rounds to f32 before
// it is rounded half to even, and (x - zero point) * scale rounds once.
#include <algorithm>
#include <cmath>

#include "interp/kernels/families.h"
#include "interp/kernels/util.h"
#include "ir/attribute.h"
#include "ir/dtype.h"

namespace orch::interp {
namespace {

// Which scale and zero point each element of x uses: all the same, or those of its index along
// `axis` when the scale is a vector of several values.
struct Params {
  const Tensor& scale;
  const Tensor* zero_point;  // nullptr when absent
  int64_t inner = 1;         // elements per step along the axis
  int64_t count = 1;         // values of the scale

  Params(const KernelArgs& args, const Shape& x)
      : scale(args.inputs[1]),
        zero_point(args.inputs.size() > 2 && args.inputs[2].defined() ? &args.inputs[2] : nullptr),
        count(scale.numel()) {
    if (count == 1) return;
    int64_t rank = static_cast<int64_t>(x.size());
    int64_t axis = attr_int(args.attrs, "axis", 1);
    axis = axis < 0 ? axis + rank : axis;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x[static_cast<size_t>(d)];
  }
  int64_t at(int64_t i) const { return count == 1 ? 0 : i / inner % count; }
  float scale_of(int64_t i) const { return static_cast<float>(scale.get(at(i))); }
  float zero_of(int64_t i) const {
    return zero_point ? static_cast<float>(zero_point->get(at(i))) : 0.0f;
  }
};

void quantize_linear(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  Params p(args, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    store_quantized(y, i, static_cast<float>(x.get(i)) / p.scale_of(i), p.zero_of(i));
}

void dequantize_linear(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  Params p(args, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i)
    y.set(i, (static_cast<float>(x.get(i)) - p.zero_of(i)) * p.scale_of(i));
}

// The scale spans [min(x, 0), max(x, 0)] over 0..255. An all-zero x has scale 0: its zero point
// and values are 0 rather than the NaN of 0 / 0.
void dynamic_quantize_linear(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    lo = std::min(lo, static_cast<float>(x.get(i)));
    hi = std::max(hi, static_cast<float>(x.get(i)));
  }
  float scale = (hi - lo) / 255.0f;
  float zero_point = scale == 0 ? 0 : std::clamp(std::nearbyint(0 - lo / scale), 0.0f, 255.0f);
  args.outputs[1].set(0, scale);
  args.outputs[2].set(0, zero_point);
  for (int64_t i = 0; i < x.numel(); ++i)
    store_quantized(args.outputs[0], i, scale == 0 ? 0 : static_cast<float>(x.get(i)) / scale,
                    zero_point);
}

}  // namespace

void add_quantize_kernels(KernelTable& table) {
  table.insert(table.end(), {{"QuantizeLinear", quantize_linear},
                             {"DequantizeLinear", dequantize_linear},
                             {"DynamicQuantizeLinear", dynamic_quantize_linear}});
}

}  // namespace orch::interp
