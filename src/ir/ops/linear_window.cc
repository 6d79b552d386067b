#include "ir/ops/linear_window.h"

#include <algorithm>
#include <string>

#include "ir/error.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// A per-dim list attribute with `n` entries, each at least `min`; `fallback` fills an absent one.
std::vector<int64_t> dim_list(const Attributes& attrs, std::string_view name, size_t n,
                              int64_t fallback, int64_t min) {
  std::vector<int64_t> v = attr_ints(attrs, name, std::vector<int64_t>(n, fallback));
  check(v.size() == n, "'{}' has {} values, expected {}", name, v.size(), n);
  for (int64_t x : v) check(x >= min, "'{}' values must be at least {}, got {}", name, min, x);
  return v;
}

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

AutoPad auto_pad(const Attributes& attrs) {
  std::string s = attr_string(attrs, "auto_pad", "NOTSET");
  if (s == "NOTSET") return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  fail("auto_pad '{}' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", s);
}

int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b + (a % b != 0) : -((-a) / b);  // a + b - 1 could overflow
}

// Fields shared by both windows: dims, kernel, strides, dilations, explicit pads.
Window common(const Attributes& attrs, const std::vector<int64_t>& in,
              const std::vector<int64_t>& kernel) {
  size_t n = in.size();
  check(n >= 1, "the input needs at least one spatial dim");
  check(kernel.size() == n, "kernel has {} dims, the input has {} spatial dims", kernel.size(), n);
  for (int64_t k : kernel) check(k >= 1, "kernel dims must be positive, got {}", k);
  Window w{.in = in, .kernel = kernel};
  w.strides = dim_list(attrs, "strides", n, 1, 1);
  w.dilations = dim_list(attrs, "dilations", n, 1, 1);
  std::vector<int64_t> pads = dim_list(attrs, "pads", 2 * n, 0, 0);
  w.pad_begin.assign(pads.begin(), pads.begin() + n);
  w.pad_end.assign(pads.begin() + n, pads.end());
  w.out.resize(n);
  return w;
}

}  // namespace

std::vector<int64_t> spatial_dims(const std::vector<int64_t>& shape) {
  return {shape.begin() + std::min<size_t>(2, shape.size()), shape.end()};
}

Window forward_window(const Attributes& attrs, const std::vector<int64_t>& in,
                      const std::vector<int64_t>& kernel, bool ceil_mode) {
  Window w = common(attrs, in, kernel);
  AutoPad mode = auto_pad(attrs);
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t span = size_in_range(__int128{w.kernel[i] - 1} * w.dilations[i] + 1, "dilated kernel");
    int64_t s = w.strides[i];
    if (mode == AutoPad::SameUpper || mode == AutoPad::SameLower) {
      w.out[i] = ceil_div(in[i], s);
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * s + span - in[i]);
      // SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning.
      w.pad_begin[i] = mode == AutoPad::SameUpper ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    if (mode == AutoPad::Valid) w.pad_begin[i] = w.pad_end[i] = 0;
    __int128 padded = __int128{in[i]} + w.pad_begin[i] + w.pad_end[i];
    check(padded >= span, "spatial dim {} ({} padded by {}+{}) is smaller than the window ({})", i,
          in[i], w.pad_begin[i], w.pad_end[i], span);
    int64_t room = size_in_range(padded - span, "padded spatial dim");
    bool round_up = ceil_mode && mode == AutoPad::NotSet;
    w.out[i] = (round_up ? ceil_div(room, s) : room / s) + 1;
    // A window must start inside the input or its begin padding, not in the end padding.
    if (round_up && (w.out[i] - 1) * s >= __int128{in[i]} + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

Window transposed_window(const Attributes& attrs, const std::vector<int64_t>& in,
                         const std::vector<int64_t>& kernel) {
  Window w = common(attrs, in, kernel);
  size_t n = in.size();
  AutoPad mode = auto_pad(attrs);
  std::vector<int64_t> out_pad = dim_list(attrs, "output_padding", n, 0, 0);
  std::vector<int64_t> out_shape = attr_ints(attrs, "output_shape");
  // output_shape may list only the spatial dims or the whole shape.
  if (out_shape.size() == n + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  check(out_shape.empty() || out_shape.size() == n, "'output_shape' has {} values, expected {}",
        out_shape.size(), n);
  for (size_t i = 0; i < n; ++i) {
    check(out_pad[i] < std::max(w.strides[i], w.dilations[i]),
          "output_padding {} must be smaller than the stride or the dilation", out_pad[i]);
    int64_t full = size_in_range(__int128{w.strides[i]} * (in[i] - 1) + out_pad[i] +
                                     __int128{w.kernel[i] - 1} * w.dilations[i] + 1,
                                 "unpadded output spatial dim");
    if (out_shape.empty() && mode == AutoPad::NotSet) {
      __int128 out = __int128{full} - w.pad_begin[i] - w.pad_end[i];
      check(out >= 1, "output spatial dim {} would be {}", i, static_cast<double>(out));
      w.out[i] = static_cast<int64_t>(out);
    } else if (out_shape.empty() && mode == AutoPad::Valid) {
      w.pad_begin[i] = w.pad_end[i] = 0;
      w.out[i] = full;
    } else {
      w.out[i] = out_shape.empty()
                     ? size_in_range(__int128{in[i]} * w.strides[i], "output spatial dim")
                     : out_shape[i];
      int64_t total = full - w.out[i];
      // As in the ONNX spec: SAME_UPPER puts the odd pad at the end, anything else at the start;
      // halves round down, so a negative total (a larger output) grows the end first.
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      w.pad_begin[i] = mode == AutoPad::SameUpper ? half : total - half;
      w.pad_end[i] = total - w.pad_begin[i];
    }
    check(w.out[i] >= 1, "output spatial dim {} would be {}", i, w.out[i]);
  }
  return w;
}

}  // namespace orch::ops
