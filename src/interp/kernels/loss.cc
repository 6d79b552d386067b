// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss as the ONNX reference computes them, in
// double with one rounding on store. Element (n, c, j) of the input, flattened to [N, C, D], is
// at flat index (n * C + c) * D + j; its target is at n * D + j.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "interp/kernels/families.h"
#include "interp/kernels/util.h"
#include "ir/attribute.h"
#include "ir/error.h"
#include "ir/ops/reduce_params.h"

namespace orch::interp {
namespace {

// -log_prob[n, target, j] * weight[target] per target, into output 0 as `reduction` asks. A
// target equal to `ignore_index` adds 0 to the loss and, for "mean", 0 to the divisor; any other
// target outside [0, C) is an error. "mean" divides by the summed weights of the counted targets,
// so a batch whose targets are all ignored has loss 0 / 0 = NaN, as in the reference.
void store_loss(KernelArgs& args, const std::vector<double>& log_prob) {
  const Tensor& target = args.inputs[1];
  const Tensor* weight =
      args.inputs.size() > 2 && args.inputs[2].defined() ? &args.inputs[2] : nullptr;
  bool has_ignore = has_attr(args.attrs, "ignore_index");
  int64_t ignore_index = attr_int(args.attrs, "ignore_index", 0);
  std::string reduction = attr_string(args.attrs, "reduction", "mean");
  ops::AxisSplit s = ops::split_at_axis(args.inputs[0].shape(), 1);
  Tensor& loss = args.outputs[0];
  double sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < target.numel(); ++i) {
    int64_t c = target.get_int(i);
    if (has_ignore && c == ignore_index) continue;  // the zero-filled output holds its 0
    if (c < 0 || c >= s.n)
      fail("target {} at target{} is not a class in [0, {}) nor the ignore_index", c,
           format_shape(unravel(i, target.shape())), s.n);
    double w = weight ? weight->get(c) : 1;
    double l = -log_prob[(i / s.inner * s.n + c) * s.inner + i % s.inner] * w;
    if (reduction == "none") loss.set(i, l);
    sum += l;
    weight_sum += w;
  }
  if (reduction == "sum") loss.set(0, sum);
  if (reduction == "mean") loss.set(0, sum / weight_sum);
}

// The input holds log-probabilities already.
void negative_log_likelihood_loss(KernelArgs& args) {
  store_loss(args, args.inputs[0].to_doubles());
}

// log_softmax over the classes (axis 1), then the NLL loss of it; the optional second output
// is that log_softmax.
void softmax_cross_entropy_loss(KernelArgs& args) {
  std::vector<double> x = args.inputs[0].to_doubles();
  ops::AxisSplit s = ops::split_at_axis(args.inputs[0].shape(), 1);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t j = 0; j < s.inner; ++j) {
      auto at = [&](int64_t k) -> double& { return x[(o * s.n + k) * s.inner + j]; };
      // Shifting by the maximum keeps exp from overflowing.
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t k = 0; k < s.n; ++k) m = std::max(m, at(k));
      for (int64_t k = 0; k < s.n; ++k) sum += std::exp(at(k) - m);
      double log_sum = std::log(sum);
      for (int64_t k = 0; k < s.n; ++k) at(k) = at(k) - m - log_sum;
    }
  store_loss(args, x);
  if (args.outputs.size() < 2) return;
  for (size_t i = 0; i < x.size(); ++i) args.outputs[1].set(static_cast<int64_t>(i), x[i]);
}

}  // namespace

void add_loss_kernels(KernelTable& table) {
  table.insert(table.end(), {{"NegativeLogLikelihoodLoss", negative_log_likelihood_loss},
                             {"SoftmaxCrossEntropyLoss", softmax_cross_entropy_loss}});
}

}  // namespace orch::interp
