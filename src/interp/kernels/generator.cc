// Reference kernels of the generator ops.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string_view>
#include <utility>
#include <vector>

#include "interp/kernels/families.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

// Writes one element's bytes of `value` at flat index `i` of `out` (same dtype).
void put(Tensor& out, int64_t i, const std::byte* value) {
  size_t es = dtype_size(out.dtype());
  std::memcpy(out.mutable_bytes() + i * es, value, es);
}

void shape(KernelArgs& args) {
  const Shape& s = args.inputs[0].shape();
  auto rank = static_cast<int64_t>(s.size());
  int64_t start = attr_int(args.attrs, "start", 0);
  if (start < 0) start = std::max<int64_t>(start + rank, 0);
  Tensor& out = args.outputs[0];
  for (int64_t i = 0; i < out.numel(); ++i) out.set_int(i, s[start + i]);
}

void size(KernelArgs& args) {
  args.outputs[0].set_int(0, args.inputs[0].numel());
}

void constant_of_shape(KernelArgs& args) {
  const Tensor* value = attr_tensor(args.attrs, "value");
  if (!value) return;  // the default value is f32 0, and outputs start zero-filled
  Tensor& out = args.outputs[0];
  for (int64_t i = 0; i < out.numel(); ++i) put(out, i, value->bytes());
}

void range(KernelArgs& args) {
  const Tensor& start = args.inputs[0];
  const Tensor& delta = args.inputs[2];
  Tensor& out = args.outputs[0];
  // The shape rule already chose the element count; integers stay exact in int64.
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (is_float(out.dtype()))
      out.set(i, start.get(0) + static_cast<double>(i) * delta.get(0));
    else
      out.set_int(i, start.get_int(0) + i * delta.get_int(0));
  }
}

void eye_like(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  int64_t rows = out.shape()[0];
  int64_t cols = out.shape()[1];
  int64_t k = attr_int(args.attrs, "k", 0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) out.set(i * cols + i + k, 1);
}

void one_hot(KernelArgs& args) {
  const Tensor& indices = args.inputs[0];
  const Tensor& values = args.inputs[2];
  Tensor& out = args.outputs[0];
  int64_t axis = attr_int(args.attrs, "axis", -1);
  if (axis < 0) axis += out.rank();
  int64_t depth = out.shape()[axis];
  // Output index (outer, d, inner) is on when indices[outer, inner] == d.
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < out.rank(); ++d) inner *= out.shape()[d];
  size_t es = dtype_size(values.dtype());
  const std::byte* off = values.bytes();
  const std::byte* on = values.bytes() + es;
  for (int64_t i = 0; i < out.numel(); ++i) put(out, i, off);
  for (int64_t n = 0; n < indices.numel(); ++n) {
    int64_t index = indices.get_int(n);
    if (index < 0) index += depth;  // negative indices count from the end
    if (index < 0 || index >= depth) continue;
    int64_t outer = n / inner;
    put(out, (outer * depth + index) * inner + n % inner, on);
  }
}

void constant(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  if (const Tensor* value = attr_tensor(args.attrs, "value")) {
    std::memcpy(out.mutable_bytes(), value->bytes(), value->nbytes());
  } else if (has_attr(args.attrs, "value_float")) {
    out.set(0, attr_float(args.attrs, "value_float", 0));
  } else if (has_attr(args.attrs, "value_int")) {
    out.set_int(0, attr_int(args.attrs, "value_int", 0));
  } else if (has_attr(args.attrs, "value_floats")) {
    std::vector<float> v = attr_floats(args.attrs, "value_floats");
    for (size_t i = 0; i < v.size(); ++i) out.set(static_cast<int64_t>(i), v[i]);
  } else {
    std::vector<int64_t> v = attr_ints(args.attrs, "value_ints");
    for (size_t i = 0; i < v.size(); ++i) out.set_int(static_cast<int64_t>(i), v[i]);
  }
}

// The window functions of x = 2 pi n / N, as the ONNX operator docs write them (the reference's
// Hann, sin^2(x / 2), is the same 0.5 - 0.5 cos x).
double hann(double x) {
  return 0.5 - 0.5 * std::cos(x);
}
double hamming(double x) {
  constexpr double kAlpha = 25.0 / 46.0;
  return kAlpha - (1 - kAlpha) * std::cos(x);
}
double blackman(double x) {
  return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
}

const std::pair<std::string_view, double (*)(double)> kWindows[] = {
    {"HannWindow", hann}, {"HammingWindow", hamming}, {"BlackmanWindow", blackman}};

// One kernel for the three windows: it finds its function by op name. N is the size for a
// periodic window and size - 1 for a symmetric one, so a symmetric window of size 1 is 0 / 0,
// NaN, as in the ONNX reference.
void window(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  bool periodic = attr_int(args.attrs, "periodic", 1) != 0;
  auto n = static_cast<double>(periodic ? out.numel() : out.numel() - 1);
  for (const auto& [name, fn] : kWindows) {
    if (name != args.op) continue;
    for (int64_t i = 0; i < out.numel(); ++i)
      out.set(i, fn(2 * std::numbers::pi * static_cast<double>(i) / n));
    return;
  }
  fail("no window function for '{}'", args.op);
}

// Python's (and numpy's) float floor division, which the reference's `//` is: from the exact
// remainder, so that a / b rounding up to an integer does not move the result.
double floor_divide(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  double floored = std::floor(div);
  return div - floored > 0.5 ? floored + 1 : floored;
}

// The spectrogram bin of each of the num_mel_bins + 2 triangle edges: equally spaced on the mel
// scale (2595 log10(1 + f / 700)) from lower to upper edge, the last step short of the upper.
std::vector<int64_t> mel_edges(int64_t bins, int64_t dft_length, int64_t sample_rate,
                               double lower_hz, double upper_hz) {
  double low_mel = 2595 * std::log10(1 + lower_hz / 700);
  double high_mel = 2595 * std::log10(1 + upper_hz / 700);
  double step = (high_mel - low_mel) / static_cast<double>(bins + 2);
  std::vector<int64_t> edges;
  for (int64_t k = 0; k < bins + 2; ++k) {
    double hz = 700 * (std::pow(10.0, (static_cast<double>(k) * step + low_mel) / 2595) - 1);
    edges.push_back(static_cast<int64_t>(
        floor_divide(static_cast<double>(dft_length + 1) * hz, static_cast<double>(sample_rate))));
  }
  return edges;
}

// Mel bin i is a triangle over spectrogram bins: rising from 0 at edge i to 1 at edge i + 1,
// falling towards 0 at edge i + 2. Written in the reference's order, so the falling side wins
// at the centre and a zero-width rise leaves a lone 1.
void mel_weight_matrix(KernelArgs& args) {
  Tensor& out = args.outputs[0];
  int64_t rows = out.shape()[0], bins = out.shape()[1];
  std::vector<int64_t> edges = mel_edges(bins, args.inputs[1].get_int(0), args.inputs[2].get_int(0),
                                         args.inputs[3].get(0), args.inputs[4].get(0));
  auto put_weight = [&](int64_t row, int64_t i, double w) {
    check(row < rows, "mel bin {} reaches spectrogram bin {}, past the last, {}", i, row, rows - 1);
    out.set(row * bins + i, w);
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t low = edges[i], centre = edges[i + 1], high = edges[i + 2];
    if (centre == low) put_weight(centre, i, 1);
    for (int64_t j = low; centre > low && j <= centre; ++j)
      put_weight(j, i, static_cast<double>(j - low) / static_cast<double>(centre - low));
    for (int64_t j = centre; j < high; ++j)
      put_weight(j, i, static_cast<double>(high - j) / static_cast<double>(high - centre));
  }
}

}  // namespace

void add_generator_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Shape", shape},
                             {"Size", size},
                             {"ConstantOfShape", constant_of_shape},
                             {"Range", range},
                             {"EyeLike", eye_like},
                             {"OneHot", one_hot},
                             {"Constant", constant},
                             {"HannWindow", window},
                             {"HammingWindow", window},
                             {"BlackmanWindow", window},
                             {"MelWeightMatrix", mel_weight_matrix}});
}

}  // namespace orch::interp
