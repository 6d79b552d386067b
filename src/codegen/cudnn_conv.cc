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

const Node* producer(const Graph& kernel, ValueId v) {
  NodeId p = kernel.value(v).producer;
  return p == kNoNode ? nullptr : &kernel.node(p);
}

// The one node reading `v`, or nullptr when none or several do (or `v` is a kernel output too).
const Node* sole_reader(const Graph& kernel, ValueId v) {
  const std::vector<ValueId>& outputs = kernel.outputs();
  if (std::find(outputs.begin(), outputs.end(), v) != outputs.end()) return nullptr;
  const Node* reader = nullptr;
  for (const Node& n : kernel.nodes())
    for (ValueId in : n.inputs)
      if (in == v) {
        if (reader != nullptr && reader != &n) return nullptr;
        reader = &n;
      }
  return reader;
}

bool elementwise(const Node& n, std::string_view fn) {
  return n.op == "prim.Elementwise" && attr_string(n.attrs, "fn", "") == fn;
}

// The kernel input holding a bias per output channel of `y` that `add` adds to it: `add`'s other
// operand, a Broadcast to y's shape of a kernel input (perhaps reshaped) whose dims are 1
// except y's channel dim. -1 otherwise; `nodes` counts the Reshape and Broadcast.
int channel_bias(const Graph& kernel, const Node& add, ValueId y, int& nodes) {
  if (add.inputs.size() != 2 || (add.inputs[0] == y) == (add.inputs[1] == y)) return -1;
  const Node* broadcast = producer(kernel, add.inputs[0] == y ? add.inputs[1] : add.inputs[0]);
  const Shape& ys = kernel.value(y).type.shape;
  if (broadcast == nullptr || broadcast->op != "prim.Broadcast" ||
      kernel.value(broadcast->outputs[0]).type.shape != ys)
    return -1;
  ValueId b = broadcast->inputs[0];
  const Shape& bs = kernel.value(b).type.shape;
  if (bs.size() != ys.size()) return -1;
  for (size_t d = 0; d < bs.size(); ++d)
    if (bs[d] != (d == 1 ? ys[1] : 1)) return -1;
  nodes = 1;
  if (const Node* reshape = producer(kernel, b);
      reshape != nullptr && reshape->op == "prim.Reshape") {
    b = reshape->inputs[0];
    nodes = 2;
  }
  if (kernel.value(b).type.dtype != DType::f32 || num_elements(kernel.value(b).type.shape) != ys[1])
    return -1;
  return kernel_input_index(kernel, b);
}

}  // namespace

std::optional<ConvSpec> conv_spec(const Graph& kernel) {
  if (kernel.outputs().size() != 1) return std::nullopt;
  const Node* conv = nullptr;
  for (const Node& n : kernel.nodes())
    if (n.op == "prim.Conv") {
      if (conv != nullptr) return std::nullopt;
      conv = &n;
    }
  if (conv == nullptr) return std::nullopt;
  ConvSpec s{attr_ints(conv->attrs, "pads"),
             attr_ints(conv->attrs, "strides"),
             attr_ints(conv->attrs, "dilations"),
             attr_int(conv->attrs, "group", 1),
             kernel_input_index(kernel, conv->inputs[0]),
             kernel_input_index(kernel, conv->inputs[1])};
  if (s.x < 0 || s.w < 0) return std::nullopt;  // a constant operand: cuDNN reads memory
  // The epilogue cuDNN fuses: + bias, then perhaps ReLU; every node of the kernel accounted for.
  ValueId last = conv->outputs[0];
  int nodes = 1;
  if (const Node* add = sole_reader(kernel, last); add != nullptr && elementwise(*add, "add")) {
    int bias_nodes = 0;
    s.bias = channel_bias(kernel, *add, last, bias_nodes);
    if (s.bias < 0) return std::nullopt;
    last = add->outputs[0];
    nodes += 1 + bias_nodes;
    if (const Node* relu = sole_reader(kernel, last);
        relu != nullptr && elementwise(*relu, "relu")) {
      s.relu = true;
      last = relu->outputs[0];
      ++nodes;
    }
  }
  if (last != kernel.outputs()[0] || nodes != static_cast<int>(kernel.num_nodes()))
    return std::nullopt;
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
  if (s.bias < -1 || s.bias >= static_cast<int>(inputs.size()))
    return fmt::format("bias {} of {} inputs", s.bias, inputs.size());
  if (s.relu && s.bias < 0) return "a ReLU without a bias (cuDNN's fused call takes one)";
  if (s.bias >= 0 && (inputs[s.bias].dtype != DType::f32 || w.shape.empty() ||
                      num_elements(inputs[s.bias].shape) != w.shape[0]))
    return fmt::format("bias {} is not one f32 per output channel of W {}",
                       format_type(inputs[s.bias]), format_shape(w.shape));
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
  if (s.bias >= 0) {
    a.bias_dims.assign(y.size(), 1);
    a.bias_dims[1] = static_cast<int>(y[1]);
    a.bias_strides.assign(y.size(), 1);
    a.bias_strides[0] = a.bias_dims[1];
  }
  a.relu = s.relu;
  return a;
}

void cross_correlation(const CudnnConvArgs& a, const float* x, const float* w, float* y,
                       const float* bias) {
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
        if (bias != nullptr) sum += bias[k];
        y[at] = a.relu ? std::max(sum, 0.0f) : sum;
      } while (next(o, out_extent));
    }
}

}  // namespace orch::codegen
