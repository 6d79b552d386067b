// Private to src/codegen/dnnl: what a kernel graph means to oneDNN, found without oneDNN.
//
// plan_kernel reads a kernel graph as   epilogue(Linear(view(a), view(b)), view(c), ...)   where
// each view is a kernel input or constant seen through Transpose / Reshape / Broadcast (a strided
// view, broadcast dims having stride 0), Linear is one prim.MatMul / prim.Conv /
// prim.ConvTranspose, and the epilogue is a chain of oneDNN post-ops matched backwards from the
// output, e.g.  where(less(x, 0), mul(x, 0.1), x)  -> eltwise_relu(alpha = 0.1). Convolutions
// also chain: each stage's epilogue output is the next convolution's source and nothing else's,
// so the activations between stages can stay in the blocked layout oneDNN picks.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch::codegen::dnnl_plan {

/// A tensor read by the primitive: the kernel source `source` (an input or a constant, stored
/// row-major) seen with `shape` and element `strides` (0 along broadcast dims).
struct View {
  ValueId source = kNoValue;
  Shape shape;
  std::vector<int64_t> strides;
};

/// One oneDNN post-op: an eltwise algorithm (relu, linear, clip, logistic, tanh, gelu_erf,
/// gelu_tanh, swish, hardswish, mish, soft_relu, elu, exp, log, abs, sqrt, square) or a binary one
/// (binary_add, binary_sub, binary_mul, binary_div, binary_max, binary_min) reading `other`.
struct PostOp {
  std::string alg;
  float alpha = 0, beta = 0;
  View other;
  bool binary() const { return other.source != kNoValue; }
};

/// One stage: a Linear primitive and its epilogue.
struct LinearPlan {
  NodeId linear = kNoNode;
  /// The first stage's source is a view of a kernel source; a later stage's (source kNoValue)
  /// is the previous stage's output, of `src.shape`.
  View src;
  View weights;
  /// A per-channel bias the convolution adds itself (source kNoValue: none), taken from the
  /// front of the post-ops by the backend.
  View bias;
  /// In application order (from the Linear output towards the kernel output).
  std::vector<PostOp> post_ops;
};

/// "" and fills `stages` (in execution order) when the kernel is one Linear primitive with
/// absorbable operand layouts and a post-op epilogue, or a chain of such convolution stages;
/// otherwise the reason it is not.
std::string plan_kernel(const Graph& kernel, std::vector<LinearPlan>& stages);

/// `view` reshaped to `shape` without copying, or false when its strides cannot express it.
bool reshape_view(View& view, const Shape& shape);

/// Matches the epilogue backwards from `value` down to the Linear output `linear_out`; appends
/// the covered nodes to `covered` and the post-ops (in application order) to `post_ops`.
std::string match_epilogue(const Graph& kernel, ValueId value, ValueId linear_out,
                           std::vector<NodeId>& covered, std::vector<PostOp>& post_ops);

/// The view of `value` through layout primitives, recording the nodes passed in `covered`; ""
/// or why `value` is not a strided view of a kernel source.
std::string view_of(const Graph& kernel, ValueId value, View& view, std::vector<NodeId>& covered);

}  // namespace orch::codegen::dnnl_plan
