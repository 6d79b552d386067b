// RoiAlign's reference kernel (opset 16), following the ONNX reference implementation: each
// output bin of a region averages (or maxes) a grid of bilinear samples of its image plane.
// Everything is computed in double, rounded once on output.
#include "interp/kernels/pooling_roi_align.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ir/error.h"

namespace orch::interp {
namespace {

// One bilinear sample: the flat plane positions of its four neighbours and their weights. A
// sample outside the image reads pixel 0 with weight 0, as the reference does.
struct Sample {
  std::array<int64_t, 4> pos = {0, 0, 0, 0};
  std::array<double, 4> weight = {0, 0, 0, 0};
};

// The sample at (y, x) of a height x width plane.
Sample sample_at(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width))
    return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high = y_low + 1, x_high = x_low + 1;
  // On or past the last row (column), both neighbours are that row and y sits on it.
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  }
  double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  double hy = 1 - ly, hx = 1 - lx;
  s.pos = {y_low * width + x_low, y_low * width + x_high, y_high * width + x_low,
           y_high * width + x_high};
  s.weight = {hy * hx, hy * lx, ly * hx, ly * lx};
  return s;
}

// The samples of one region, bin by bin (row-major), each bin's grid row-major, and the count
// an average divides by.
struct RegionSamples {
  std::vector<Sample> samples;
  int64_t per_bin = 0;
  int64_t count = 1;
};

// Region [x1, y1, x2, y2] scaled by spatial_scale; half_pixel shifts it by -0.5, while
// output_half_pixel forces a malformed region to at least 1 x 1. The grid of each bin is
// sampling_ratio square, or ceil(bin size) per axis when that is 0.
RegionSamples region_samples(const double* roi, double scale, bool half_pixel, int64_t ratio,
                             int64_t bins_h, int64_t bins_w, int64_t height, int64_t width) {
  double offset = half_pixel ? 0.5 : 0.0;
  double start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
  double roi_w = roi[2] * scale - offset - start_w, roi_h = roi[3] * scale - offset - start_h;
  if (!half_pixel) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  double bin_h = roi_h / static_cast<double>(bins_h), bin_w = roi_w / static_cast<double>(bins_w);
  // A negative grid (a reversed half_pixel region) has no samples, as in the reference.
  auto grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(bin_h));
  auto grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(bin_w));
  RegionSamples r;
  r.count = std::max<int64_t>(grid_h * grid_w, 1);
  if (grid_h <= 0 || grid_w <= 0) return r;
  r.per_bin = grid_h * grid_w;
  for (int64_t ph = 0; ph < bins_h; ++ph)
    for (int64_t pw = 0; pw < bins_w; ++pw)
      for (int64_t iy = 0; iy < grid_h; ++iy) {
        double y = start_h + static_cast<double>(ph) * bin_h +
                   (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          double x = start_w + static_cast<double>(pw) * bin_w +
                     (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
          r.samples.push_back(sample_at(y, x, height, width));
        }
      }
  return r;
}

// Average mode sums the interpolated samples. Max mode keeps, as the reference does, the largest
// weighted neighbour term of any sample (not the largest interpolated value); a bin without
// samples is 0 either way.
double pool_bin(const Sample* samples, int64_t n, const double* plane, bool max_mode,
                int64_t count) {
  double result = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Sample& s = samples[i];
    std::array<double, 4> terms;
    for (int k = 0; k < 4; ++k) terms[k] = s.weight[k] * plane[s.pos[k]];
    if (!max_mode)
      result += terms[0] + terms[1] + terms[2] + terms[3];
    else if (i == 0)
      result = *std::max_element(terms.begin(), terms.end());
    else
      result = std::max(result, *std::max_element(terms.begin(), terms.end()));
  }
  return max_mode ? result : result / static_cast<double>(count);
}

void roi_align(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& batch_indices = args.inputs[2];
  Tensor& y = args.outputs[0];
  int64_t batch = x.shape()[0], channels = x.shape()[1];
  int64_t height = x.shape()[2], width = x.shape()[3];
  int64_t bins_h = y.shape()[2], bins_w = y.shape()[3];
  bool max_mode = attr_string(args.attrs, "mode", "avg") == "max";
  bool half_pixel =
      attr_string(args.attrs, "coordinate_transformation_mode", "half_pixel") == "half_pixel";
  double scale = attr_float(args.attrs, "spatial_scale", 1.0f);
  int64_t ratio = attr_int(args.attrs, "sampling_ratio", 0);
  std::vector<double> xv = x.to_doubles(), rois = args.inputs[1].to_doubles();
  for (int64_t r = 0; r < y.shape()[0]; ++r) {
    int64_t b = batch_indices.get_int(r);
    check(b >= 0 && b < batch, "RoiAlign batch_indices[{}] = {} is outside [0, {})", r, b, batch);
    RegionSamples region = region_samples(rois.data() + r * 4, scale, half_pixel, ratio, bins_h,
                                          bins_w, height, width);
    for (int64_t c = 0; c < channels; ++c) {
      const double* plane = xv.data() + (b * channels + c) * height * width;
      for (int64_t bin = 0; bin < bins_h * bins_w; ++bin)
        y.set((r * channels + c) * bins_h * bins_w + bin,
              pool_bin(region.samples.data() + bin * region.per_bin, region.per_bin, plane,
                       max_mode, region.count));
    }
  }
}

}  // namespace

void add_pooling_roi_align_kernels(KernelTable& table) {
  table.push_back({"RoiAlign", roi_align});
}

}  // namespace orch::interp
