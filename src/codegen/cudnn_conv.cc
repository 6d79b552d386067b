#include "codegen/cudnn_conv.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "codegen/kernel.h"
#include "ir/attribute.h"

namespace orch::codegen {
namespace {

// cuDNN's legacy API takes int dims and strides, and most of its algorithms address fewer than
// 2^31 elements per tensor.
constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// Advances the multi-index `i` below `extent` (last dim fastest); false after the last one.
bool next(std::vector<int>& i, std::span<const int> extent) {
  for (size_t d = i.size(); d-- > 0;) {
    if (++i[d] < extent[d]) return true;
    i[d] = 0;
  }
  return false;
}

}  // namespace

std::optional<ConvSpec> conv_spec(const Graph& kernel) {
  if (kernel.outputs().size() != 1 || kernel.num_nodes() != 1) return std::nullopt;
  const Node& conv = kernel.node(0);
  if (conv.op != "prim.Conv" || conv.outputs[0] != kernel.outputs()[0]) return std::nullopt;
  ConvSpec s{attr_ints(conv.attrs, "pads"),
             attr_ints(conv.attrs, "strides"),
             attr_ints(conv.attrs, "dilations"),
             attr_int(conv.attrs, "group", 1),
             kernel_input_index(kernel, conv.inputs[0]),
             kernel_input_index(kernel, conv.inputs[1])};
  if (s.x < 0 || s.w < 0) return std::nullopt;  // a constant operand: cuDNN reads memory
  // Leading pads only: the trailing ones must be such that cuDNN's symmetric padding gives the
  // same output shape, which conv_mismatch checks.
  s.pads.resize(s.strides.size());
  std::vector<TensorType> inputs(kernel.inputs().size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = kernel.value(kernel.inputs()[i]).type;
  TensorType output = kernel.value(kernel.outputs()[0]).type;
  if (!conv_mismatch(s, inputs, std::span(&output, 1)).empty()) return std::nullopt;
  return s;
}

std::string conv_mismatch(const ConvSpec& s, std::span<const TensorType> inputs,
                          std::span<const TensorType> outputs) {
  size_t spatial = s.strides.size();
  if (spatial < 2 || spatial > 3 || s.pads.size() != spatial || s.dilations.size() != spatial)
    return fmt::format("pads {}, strides {} and dilations {} are not 2 or 3 spatial dims", s.pads,
                       s.strides, s.dilations);
  if (s.x < 0 || s.w < 0 || s.x >= static_cast<int>(inputs.size()) ||
      s.w >= static_cast<int>(inputs.size()))
    return fmt::format("operands {} and {} of {} inputs", s.x, s.w, inputs.size());
  if (outputs.size() != 1) return fmt::format("{} outputs, a convolution writes 1", outputs.size());
  const TensorType& x = inputs[s.x];
  const TensorType& w = inputs[s.w];
  const TensorType& y = outputs[0];
  for (const TensorType* t : {&x, &w, &y}) {
    if (t->dtype != DType::f32 || t->shape.size() != spatial + 2)
      return fmt::format("{} is not an f32 tensor of {} dims", format_type(*t), spatial + 2);
    if (num_elements(t->shape) > kIntMax || num_elements(t->shape) == 0)
      return fmt::format("{} is empty or has 2^31 elements or more", format_type(*t));
  }
  const Shape &xs = x.shape, &ws = w.shape, &ys = y.shape;
  if (s.group < 1 || ws[0] % s.group != 0 || __int128{ws[1]} * s.group != xs[1] || ys[0] != xs[0] ||
      ys[1] != ws[0])
    return fmt::format("X {}, W {} and Y {} are not a convolution of {} groups", format_shape(xs),
                       format_shape(ws), format_shape(ys), s.group);
  for (size_t d = 0; d < spatial; ++d) {
    if (s.pads[d] < 0 || s.pads[d] > kIntMax || s.strides[d] < 1 || s.strides[d] > kIntMax ||
        s.dilations[d] < 1 || s.dilations[d] > kIntMax)
      return fmt::format("pad {}, stride {} or dilation {} is out of range", s.pads[d],
                         s.strides[d], s.dilations[d]);
    // cuDNN's output extent (cudnnGetConvolutionNdForwardOutputDim), in __int128: the
    // manifest's numbers are only bounded by int.
    __int128 span = __int128{s.dilations[d]} * (ws[2 + d] - 1) + 1;
    __int128 padded = __int128{xs[2 + d]} + 2 * __int128{s.pads[d]};
    __int128 extent = padded < span ? 0 : (padded - span) / s.strides[d] + 1;
    if (extent != ys[2 + d])
      return fmt::format("output dim {} is {}, cuDNN's padding of {} gives {}", 2 + d, ys[2 + d],
                         s.pads[d], static_cast<int64_t>(extent));
  }
  return "";
}

CudnnConvArgs cudnn_arguments(const ConvSpec& s, const Shape& x, const Shape& w, const Shape& y) {
  auto ints = [](const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); };
  CudnnConvArgs a;
  a.x_dims = ints(x);
  a.x_strides = ints(row_major_strides(x));
  a.w_dims = ints(w);
  a.y_dims = ints(y);
  a.y_strides = ints(row_major_strides(y));
  a.pads = ints(s.pads);
  a.strides = ints(s.strides);
  a.dilations = ints(s.dilations);
  a.group = static_cast<int>(s.group);
  return a;
}

void cross_correlation(const CudnnConvArgs& a, const float* x, const float* w, float* y) {
  const size_t spatial = a.pads.size();
  const int c_per_group = a.x_dims[1] / a.group;
  const int k_per_group = a.y_dims[1] / a.group;
  std::span<const int> out_extent(a.y_dims.data() + 2, spatial);
  std::span<const int> window(a.w_dims.data() + 2, spatial);
  int64_t window_size = 1;
  for (int r : window) window_size *= r;
  for (int n = 0; n < a.y_dims[0]; ++n)
    for (int k = 0; k < a.y_dims[1]; ++k) {
      const int group = k / k_per_group;
      std::vector<int> o(spatial, 0);
      do {
        float sum = 0;
        for (int c = 0; c < c_per_group; ++c) {
          const int64_t x_base =
              int64_t{n} * a.x_strides[0] + int64_t{group * c_per_group + c} * a.x_strides[1];
          const float* filter = w + (int64_t{k} * c_per_group + c) * window_size;
          std::vector<int> r(spatial, 0);
          int64_t tap = 0;
          do {
            int64_t at = x_base;
            bool inside = true;
            for (size_t d = 0; d < spatial && inside; ++d) {
              int64_t i = int64_t{o[d]} * a.strides[d] + int64_t{r[d]} * a.dilations[d] - a.pads[d];
              inside = i >= 0 && i < a.x_dims[2 + d];
              at += i * a.x_strides[2 + d];
            }
            if (inside) sum += x[at] * filter[tap];
            ++tap;
          } while (next(r, window));
        }
        int64_t at = int64_t{n} * a.y_strides[0] + int64_t{k} * a.y_strides[1];
        for (size_t d = 0; d < spatial; ++d) at += int64_t{o[d]} * a.y_strides[2 + d];
        y[at] = sum;
      } while (next(o, out_extent));
    }
}

}  // namespace orch::codegen
