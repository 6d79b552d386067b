// Reference kernels of the normalization ops. Inputs are read into doubles, statistics are
// computed in double (mean first, then the mean squared deviation), and results are rounded once
// on store.
#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/kernels/families.h"
#include "interp/kernels/util.h"
#include "ir/ops/reduce_params.h"
#include "ir/ops/shape_util.h"

namespace orch::interp {
namespace {

using LaneFn = void (*)(std::vector<double>& lane);

// Applies `fn` to every 1-D lane of the input along attribute `axis` (default -1).
void along_axis(KernelArgs& args, LaneFn fn) {
  const Tensor& x = args.inputs[0];
  Tensor& out = args.outputs[0];
  int64_t axis = ops::normalize_axis(attr_int(args.attrs, "axis", -1), x.rank());
  ops::AxisSplit s = ops::split_at_axis(x.shape(), axis);
  std::vector<double> lane(s.n);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) {
      for (int64_t k = 0; k < s.n; ++k) lane[k] = x.get((o * s.n + k) * s.inner + j);
      fn(lane);
      for (int64_t k = 0; k < s.n; ++k) out.set((o * s.n + k) * s.inner + j, lane[k]);
    }
}

double lane_max(const std::vector<double>& lane) {
  double m = -std::numeric_limits<double>::infinity();
  for (double v : lane) m = std::max(m, v);
  return m;
}

// exp(x - max) / sum(exp(x - max)): the shift keeps exp from overflowing.
void softmax_lane(std::vector<double>& lane) {
  double m = lane_max(lane);
  double sum = 0;
  for (double& v : lane) sum += v = std::exp(v - m);
  for (double& v : lane) v /= sum;
}

void log_softmax_lane(std::vector<double>& lane) {
  double m = lane_max(lane);
  double sum = 0;
  for (double v : lane) sum += std::exp(v - m);
  double log_sum = std::log(sum);
  for (double& v : lane) v = v - m - log_sum;
}

// 1 at the first maximum, 0 elsewhere.
void hardmax_lane(std::vector<double>& lane) {
  size_t first = 0;
  for (size_t k = 1; k < lane.size(); ++k)
    if (lane[k] > lane[first]) first = k;
  for (size_t k = 0; k < lane.size(); ++k) lane[k] = k == first ? 1 : 0;
}

// x / ||x||_p; a zero lane gives NaN, as the spec's plain division does.
void l1_normalize_lane(std::vector<double>& lane) {
  double norm = 0;
  for (double v : lane) norm += std::abs(v);
  for (double& v : lane) v /= norm;
}

void l2_normalize_lane(std::vector<double>& lane) {
  double norm = 0;
  for (double v : lane) norm += v * v;
  norm = std::sqrt(norm);
  for (double& v : lane) v /= norm;
}

void softmax(KernelArgs& args) {
  along_axis(args, softmax_lane);
}
void log_softmax(KernelArgs& args) {
  along_axis(args, log_softmax_lane);
}
void hardmax(KernelArgs& args) {
  along_axis(args, hardmax_lane);
}
void lp_normalization(KernelArgs& args) {
  along_axis(args, attr_int(args.attrs, "p", 2) == 1 ? l1_normalize_lane : l2_normalize_lane);
}

// Mean and population variance of x (of `shape`) over the dims that are 1 in `keep`; both are
// laid out like `keep`, and to_keep maps a flat index of x to its set.
struct Moments {
  std::vector<double> mean, var;
  BroadcastIndex to_keep;
};

Moments moments(const std::vector<double>& x, const Shape& shape, const Shape& keep) {
  Moments m{std::vector<double>(num_elements(keep), 0.0),
            std::vector<double>(num_elements(keep), 0.0), BroadcastIndex(keep, shape)};
  double count = m.mean.empty() ? 0 : static_cast<double>(x.size()) / m.mean.size();
  for (size_t i = 0; i < x.size(); ++i) m.mean[m.to_keep(i)] += x[i];
  for (double& v : m.mean) v /= count;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - m.mean[m.to_keep(i)];
    m.var[m.to_keep(i)] += d * d;
  }
  for (double& v : m.var) v /= count;
  return m;
}

void layer_normalization(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  int64_t axis = attr_int(args.attrs, "axis", -1);
  if (axis < 0) axis += x.rank();
  double epsilon = attr_float(args.attrs, "epsilon", 1e-5f);
  Shape keep = x.shape();
  for (int64_t d = axis; d < x.rank(); ++d) keep[d] = 1;
  std::vector<double> xs = x.to_doubles();
  Moments m = moments(xs, x.shape(), keep);
  const Tensor& scale = args.inputs[1];
  // An absent bias reads as a zero scalar.
  Tensor bias =
      args.inputs.size() > 2 && args.inputs[2].defined() ? args.inputs[2] : Tensor(x.dtype(), {});
  BroadcastIndex scale_at(scale.shape(), x.shape());
  BroadcastIndex bias_at(bias.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = m.to_keep(i);
    double normalized = (xs[i] - m.mean[k]) / std::sqrt(m.var[k] + epsilon);
    args.outputs[0].set(i, normalized * scale.get(scale_at(i)) + bias.get(bias_at(i)));
  }
  if (args.outputs.size() > 1)
    for (size_t k = 0; k < m.mean.size(); ++k) args.outputs[1].set(k, m.mean[k]);
  if (args.outputs.size() > 2)
    for (size_t k = 0; k < m.var.size(); ++k)
      args.outputs[2].set(k, 1 / std::sqrt(m.var[k] + epsilon));
}

// Elements per (n, c) pair of an [N, C, D1, ...] tensor.
int64_t spatial_size(const Shape& shape) {
  int64_t n = 1;
  for (size_t d = 2; d < shape.size(); ++d) n *= shape[d];
  return n;
}

void instance_normalization(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const Tensor& bias = args.inputs[2];
  double epsilon = attr_float(args.attrs, "epsilon", 1e-5f);
  Shape keep(x.rank(), 1);
  keep[0] = x.shape()[0];
  keep[1] = x.shape()[1];
  std::vector<double> xs = x.to_doubles();
  Moments m = moments(xs, x.shape(), keep);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = m.to_keep(i);  // n * C + c
    int64_t c = k % x.shape()[1];
    double normalized = (xs[i] - m.mean[k]) / std::sqrt(m.var[k] + epsilon);
    args.outputs[0].set(i, normalized * scale.get(c) + bias.get(c));
  }
}

// Statistics per (n, group) over the group's channels and all spatial positions; scale and bias
// are per channel ([C]) or per group ([num_groups]).
void group_normalization(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  const Tensor& scale = args.inputs[1];
  const Tensor& bias = args.inputs[2];
  double epsilon = attr_float(args.attrs, "epsilon", 1e-5f);
  int64_t channels = x.shape()[1];
  int64_t groups = attr_int(args.attrs, "num_groups", 1);
  int64_t spatial = spatial_size(x.shape());
  // [N, G, C/G * spatial] has x's layout, with one set per (n, g).
  Shape grouped = {x.shape()[0], groups, channels / groups * spatial};
  std::vector<double> xs = x.to_doubles();
  Moments m = moments(xs, grouped, {x.shape()[0], groups, 1});
  bool per_channel = scale.numel() == channels;
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = m.to_keep(i);  // n * G + g
    int64_t p = per_channel ? (i / spatial) % channels : k % groups;
    double normalized = (xs[i] - m.mean[k]) / std::sqrt(m.var[k] + epsilon);
    args.outputs[0].set(i, normalized * scale.get(p) + bias.get(p));
  }
}

// Inference form: the given mean and variance, per channel. Training form: the batch's own
// mean and (population) variance, and running statistics blended with `momentum`.
void batch_normalization(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  double epsilon = attr_float(args.attrs, "epsilon", 1e-5f);
  int64_t channels = x.shape()[1];
  int64_t spatial = spatial_size(x.shape());
  std::vector<double> mean = args.inputs[3].to_doubles(), var = args.inputs[4].to_doubles();
  if (attr_int(args.attrs, "training_mode", 0) != 0) {
    Shape keep(x.rank(), 1);
    keep[1] = channels;
    Moments batch = moments(x.to_doubles(), x.shape(), keep);
    double momentum = attr_float(args.attrs, "momentum", 0.9f);
    for (size_t i = 1; i < args.outputs.size(); ++i) {
      const std::vector<double>& given = i == 1 ? mean : var;
      const std::vector<double>& observed = i == 1 ? batch.mean : batch.var;
      for (int64_t c = 0; c < channels; ++c)
        args.outputs[i].set(c, given[c] * momentum + observed[c] * (1 - momentum));
    }
    mean = batch.mean;
    var = batch.var;
  }
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (i / spatial) % channels;
    double normalized = (x.get(i) - mean[c]) / std::sqrt(var[c] + epsilon);
    args.outputs[0].set(i, normalized * args.inputs[1].get(c) + args.inputs[2].get(c));
  }
}

// (x - mean) / (stddev + 1e-9) over `axes`, as the spec's function body computes it.
void mean_variance_normalization(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Shape keep = x.shape();
  for (int64_t a : ops::normalize_axes(attr_ints(args.attrs, "axes", {0, 2, 3}), x.rank()))
    keep[a] = 1;
  std::vector<double> xs = x.to_doubles();
  Moments m = moments(xs, x.shape(), keep);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t k = m.to_keep(i);
    args.outputs[0].set(i, (xs[i] - m.mean[k]) / (std::sqrt(m.var[k]) + 1e-9));
  }
}

// x / (bias + alpha / size * s)^beta, s the sum of squares over the channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist.
void lrn(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  double alpha = attr_float(args.attrs, "alpha", 1e-4f);
  double beta = attr_float(args.attrs, "beta", 0.75f);
  double bias = attr_float(args.attrs, "bias", 1.0f);
  int64_t size = attr_int(args.attrs, "size", 1);
  int64_t channels = x.shape()[1];
  int64_t spatial = spatial_size(x.shape());
  std::vector<double> xs = x.to_doubles();
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t c = (i / spatial) % channels;
    int64_t first = std::max<int64_t>(c - (size - 1) / 2, 0);
    int64_t last = std::min(c + size / 2, channels - 1);
    double sum = 0;
    for (int64_t k = first; k <= last; ++k) {
      double v = xs[i + (k - c) * spatial];
      sum += v * v;
    }
    args.outputs[0].set(i, xs[i] / std::pow(bias + alpha / size * sum, beta));
  }
}

}  // namespace

void add_normalization_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Softmax", softmax},
                             {"LogSoftmax", log_softmax},
                             {"Hardmax", hardmax},
                             {"LpNormalization", lp_normalization},
                             {"LayerNormalization", layer_normalization},
                             {"InstanceNormalization", instance_normalization},
                             {"GroupNormalization", group_normalization},
                             {"BatchNormalization", batch_normalization},
                             {"MeanVarianceNormalization", mean_variance_normalization},
                             {"LRN", lrn}});
}

}  // namespace orch::interp
