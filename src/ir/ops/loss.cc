// Shape rules of the training losses (opset 13): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss. Both take scores [N, C] or [N, C, d1, ..., dk], class indices
// [N] or [N, d1, ..., dk] and an optional weight [C] per class.
#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

// Checks input (0), target (1), the optional weight (2) and `reduction`; returns the loss type:
// target's shape for reduction "none", else a scalar, of input's dtype.
TensorType loss_type(const InferInput& in) {
  const Shape& x = in.type(0).shape;
  const Shape& target = in.type(1).shape;
  require_float(in.type(0).dtype, "input");
  require_dtype(in.type(1).dtype, {DType::i32, DType::i64}, "target");
  check(x.size() >= 2, "the input must be [N, C] or [N, C, d1, ..., dk], got {}", format_shape(x));
  // The target is the input without its class dim C.
  Shape expected = x;
  expected.erase(expected.begin() + 1);
  check(target == expected, "the target must be {} for the input {}, got {}",
        format_shape(expected), format_shape(x), format_shape(target));
  if (in.has(2)) {
    check(in.type(2).dtype == in.type(0).dtype, "the weight must be {} like the input, got {}",
          dtype_name(in.type(0).dtype), dtype_name(in.type(2).dtype));
    check(in.type(2).shape == Shape{x[1]}, "the weight must be [{}], one per class, got {}", x[1],
          format_shape(in.type(2).shape));
  }
  std::string reduction = attr_string(in.attrs, "reduction", "mean");
  check(reduction == "none" || reduction == "sum" || reduction == "mean",
        "reduction '{}' is not one of none, sum, mean", reduction);
  return {in.type(0).dtype, reduction == "none" ? target : Shape{}};
}

// input, target, optional weight -> loss.
std::vector<TensorType> negative_log_likelihood_loss(const InferInput& in) {
  return {loss_type(in)};
}

// input, target, optional weight -> loss and the optional log_prob, the input's type.
std::vector<TensorType> softmax_cross_entropy_loss(const InferInput& in) {
  std::vector<TensorType> out = {loss_type(in)};
  if (in.num_outputs == 2) out.push_back(in.type(0));
  return out;
}

}  // namespace

void add_loss_ops(std::vector<OpSchema>& table) {
  table.push_back({.name = "NegativeLogLikelihoodLoss",
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .infer = negative_log_likelihood_loss});
  table.push_back({.name = "SoftmaxCrossEntropyLoss",
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .max_outputs = 2,
                   .infer = softmax_cross_entropy_loss});
}

}  // namespace orch::ops
