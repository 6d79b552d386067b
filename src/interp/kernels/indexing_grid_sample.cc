// GridSample's reference kernel (opset 16, 4-D), following the ONNX reference implementation:
// a grid point is denormalized to a pixel coordinate of X's plane, moved inside by the padding
// mode when it lies outside, then read through its nearest, bilinear or bicubic taps, each tap
// outside the plane padded on its own. Everything is computed in double, rounded once on output.
#include "interp/kernels/indexing_grid_sample.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"

namespace orch::interp {
namespace {

enum class Mode { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

Mode mode_attr(const KernelArgs& args) {
  std::string mode = attr_string(args.attrs, "mode", "bilinear");
  if (mode == "bilinear") return Mode::Bilinear;
  if (mode == "nearest") return Mode::Nearest;
  if (mode == "bicubic") return Mode::Bicubic;
  fail("unknown mode '{}'", mode);
}

Padding padding_attr(const KernelArgs& args) {
  std::string padding = attr_string(args.attrs, "padding_mode", "zeros");
  if (padding == "zeros") return Padding::Zeros;
  if (padding == "border") return Padding::Border;
  if (padding == "reflection") return Padding::Reflection;
  fail("unknown padding_mode '{}'", padding);
}

// One axis of X's plane: its size, and the range of coordinates inside it, which reflection
// folds into (the end pixels' centres with align_corners, their outer edges without).
struct Axis {
  int64_t size;
  double lo;
  double hi;
};

Axis make_axis(int64_t size, bool align_corners) {
  double n = static_cast<double>(size);
  return align_corners ? Axis{size, 0, n - 1} : Axis{size, -0.5, n - 0.5};
}

// A grid value, -1 to 1 across the axis, as a pixel coordinate: -1 and 1 are the end pixels'
// centres with align_corners, their outer edges without.
double denormalize(double v, int64_t size, bool align_corners) {
  double n = static_cast<double>(size);
  return align_corners ? (v + 1) / 2 * (n - 1) : ((v + 1) * n - 1) / 2;
}

// Reflects x about the nearer border of [lo, hi] until it lies inside, as the ONNX reference's
// _gs_reflect does.
double reflect(double x, double lo, double hi) {
  if (x >= lo && x <= hi) return x;
  // A one-pixel axis with align_corners has a single coordinate inside.
  double range = hi - lo;
  if (range == 0) return lo;
  bool below = x < lo;
  double dx = below ? lo - x : x - hi;
  // fmod is exact, so the result stays inside [lo, hi] however far out x lies.
  double r = std::fmod(dx, range);
  bool even = std::fmod(std::floor(dx / range), 2) == 0;
  return below == even ? lo + r : hi - r;
}

// One H x W plane of X, as doubles, and how reads outside it are padded.
struct Plane {
  const double* values;
  Axis rows;
  Axis cols;
  Padding padding;
};

// X at integer (row, col), with the padding rule for a tap outside the plane.
double pixel(const Plane& p, int64_t row, int64_t col) {
  if (p.padding == Padding::Border) {
    row = std::clamp<int64_t>(row, 0, p.rows.size - 1);
    col = std::clamp<int64_t>(col, 0, p.cols.size - 1);
  } else if (p.padding == Padding::Reflection) {
    // Integer taps reflect onto integers: the borders are integers or half-integers.
    row = static_cast<int64_t>(reflect(static_cast<double>(row), p.rows.lo, p.rows.hi));
    col = static_cast<int64_t>(reflect(static_cast<double>(col), p.cols.lo, p.cols.hi));
  } else if (row < 0 || row >= p.rows.size || col < 0 || col >= p.cols.size) {
    return 0;
  }
  return p.values[row * p.cols.size + col];
}

// Keys' cubic convolution weights, A = -0.75, of the four taps around a point at offset t in
// [0, 1) past the second tap.
std::array<double, 4> cubic_weights(double t) {
  constexpr double a = -0.75;
  auto near = [](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

double bilinear(const Plane& p, double x, double y) {
  double x1 = std::floor(x), y1 = std::floor(y);
  int64_t c = static_cast<int64_t>(x1), r = static_cast<int64_t>(y1);
  double dx = x - x1, dy = y - y1;
  return (1 - dy) * ((1 - dx) * pixel(p, r, c) + dx * pixel(p, r, c + 1)) +
         dy * ((1 - dx) * pixel(p, r + 1, c) + dx * pixel(p, r + 1, c + 1));
}

double bicubic(const Plane& p, double x, double y) {
  double x1 = std::floor(x), y1 = std::floor(y);
  int64_t c0 = static_cast<int64_t>(x1) - 1, r0 = static_cast<int64_t>(y1) - 1;
  std::array<double, 4> wx = cubic_weights(x - x1), wy = cubic_weights(y - y1);
  double sum = 0;
  for (int64_t i = 0; i < 4; ++i) {
    double row = 0;
    for (int64_t j = 0; j < 4; ++j) row += wx[j] * pixel(p, r0 + i, c0 + j);
    sum += wy[i] * row;
  }
  return sum;
}

// Where a point outside the plane samples, per axis: border clamps it to the end pixels'
// centres, reflection folds it inside. Zeros keeps it, as its taps outside read zeros; only one
// far out is clamped to where every tap is still outside, which changes no finite value and keeps
// the tap indices well within int64.
double padded(double v, const Axis& a, Padding padding) {
  double last = static_cast<double>(a.size - 1);
  if (padding == Padding::Border) return std::clamp(v, 0.0, last);
  if (padding == Padding::Reflection) return reflect(v, a.lo, a.hi);
  return std::clamp(v, -4.0, last + 4);
}

// The value at pixel coordinate (x, y) of the plane.
double sample(const Plane& p, Mode mode, double x, double y) {
  // Half to even, as np.rint in the ONNX reference (the default rounding mode).
  if (mode == Mode::Nearest) {
    x = std::nearbyint(x);
    y = std::nearbyint(y);
  }
  // A point outside moves on both axes, even one it lies inside on, as in the ONNX reference:
  // border clamping can move a coordinate that is inside (in [-0.5, 0) without align_corners).
  if (x < p.cols.lo || x > p.cols.hi || y < p.rows.lo || y > p.rows.hi) {
    x = padded(x, p.cols, p.padding);
    y = padded(y, p.rows, p.padding);
  }
  // A NaN coordinate (in the grid, or an infinite one reflected) has no pixel to read.
  if (std::isnan(x) || std::isnan(y)) return NAN;
  if (mode == Mode::Nearest) return pixel(p, static_cast<int64_t>(y), static_cast<int64_t>(x));
  return mode == Mode::Bilinear ? bilinear(p, x, y) : bicubic(p, x, y);
}

void grid_sample(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& grid = args.inputs[1];
  Tensor& out = args.outputs[0];
  Mode mode = mode_attr(args);
  bool align_corners = attr_int(args.attrs, "align_corners", 0) != 0;
  int64_t n = x.shape()[0], channels = x.shape()[1];
  int64_t h = x.shape()[2], w = x.shape()[3];
  int64_t points = grid.shape()[1] * grid.shape()[2];
  if (out.numel() == 0) return;
  std::vector<double> values = x.to_doubles();
  std::vector<double> coords = grid.to_doubles();
  Plane plane{nullptr, make_axis(h, align_corners), make_axis(w, align_corners),
              padding_attr(args)};
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      plane.values = values.data() + (b * channels + c) * h * w;
      for (int64_t i = 0; i < points; ++i) {
        // A grid point is (x, y): x along W, y along H.
        const double* g = coords.data() + (b * points + i) * 2;
        double px = denormalize(g[0], w, align_corners);
        double py = denormalize(g[1], h, align_corners);
        out.set((b * channels + c) * points + i, sample(plane, mode, px, py));
      }
    }
  }
}

}  // namespace

void add_indexing_grid_sample_kernels(KernelTable& table) {
  table.push_back({"GridSample", grid_sample});
}

}  // namespace orch::interp
