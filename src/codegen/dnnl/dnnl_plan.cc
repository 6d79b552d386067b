// The kernel shape oneDNN accepts: operand views, the one Linear primitive, its epilogue.
#include "codegen/dnnl/dnnl_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "ir/op_registry.h"

namespace orch::codegen::dnnl_plan {
namespace {

bool is_linear(const std::string& op) {
  return op == "prim.MatMul" || op == "prim.Conv" || op == "prim.ConvTranspose";
}

std::string check_types(const Graph& kernel) {
  for (const Value& v : kernel.values()) {
    if (v.type.dtype != DType::f32 && v.type.dtype != DType::boolean)
      return fmt::format("value '{}' has dtype {}: the oneDNN backend is f32 only", v.name,
                         dtype_name(v.type.dtype));
    if (num_elements(v.type.shape) == 0)
      return fmt::format("value '{}' is empty ({})", v.name, format_shape(v.type.shape));
  }
  return "";
}

// Convolutions read whole operands: a broadcast one would need a copy first.
bool has_broadcast(const View& view) {
  for (size_t d = 0; d < view.shape.size(); ++d)
    if (view.strides[d] == 0 && view.shape[d] > 1) return true;
  return false;
}

// A binary post-op may read a scalar (prim.Elementwise takes rank 0 beside any rank); oneDNN
// wants the destination's rank, so the scalar becomes size-1 dims that it broadcasts.
void broadcast_scalars(size_t out_rank, std::vector<PostOp>& post_ops) {
  for (PostOp& op : post_ops) {
    size_t missing = out_rank - std::min(out_rank, op.other.shape.size());
    if (!op.binary() || missing == 0) continue;
    op.other.shape.insert(op.other.shape.begin(), missing, 1);
    op.other.strides.insert(op.other.strides.begin(), missing, 0);
  }
}

}  // namespace

// PyTorch's computeStride: walk both shapes from the back in chunks of dims that are contiguous
// with each other; each chunk of the view must split or merge one such chunk.
bool reshape_view(View& view, const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 0);
  if (view.shape.empty() || num_elements(shape) == 0) {
    view.shape = shape;
    view.strides = row_major_strides(shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = view.strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(view.shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= view.shape[d];
    if (d == 0 ||
        (view.shape[d - 1] != 1 && view.strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = view.strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  view.shape = shape;
  view.strides = std::move(strides);
  return true;
}

std::string view_of(const Graph& kernel, ValueId value, View& view, std::vector<NodeId>& covered) {
  const Value& v = kernel.value(value);
  if (v.producer == kNoNode) {
    view = {value, v.type.shape, row_major_strides(v.type.shape)};
    return "";
  }
  const Node& node = kernel.node(v.producer);
  bool layout = node.op == "prim.Transpose" || node.op == "prim.Reshape";
  if (!layout && node.op != "prim.Broadcast")
    return fmt::format("{} is not a layout oneDNN can absorb as strides",
                       kernel.describe(v.producer));
  if (std::string why = view_of(kernel, node.inputs[0], view, covered); !why.empty()) return why;
  covered.push_back(v.producer);
  const Shape& out = v.type.shape;
  if (node.op == "prim.Transpose") {
    std::vector<int64_t> perm = attr_ints(node.attrs, "perm");
    View t{view.source, {}, {}};
    for (int64_t p : perm) {
      t.shape.push_back(view.shape[p]);
      t.strides.push_back(view.strides[p]);
    }
    view = std::move(t);
  } else if (node.op == "prim.Reshape") {
    if (!reshape_view(view, out))
      return fmt::format("{} from {} to {} does not keep strides affine",
                         kernel.describe(v.producer), format_shape(view.shape), format_shape(out));
  } else {
    for (size_t d = 0; d < out.size(); ++d)
      if (view.shape[d] != out[d]) view.strides[d] = 0;
    view.shape = out;
  }
  return "";
}

std::string plan_kernel(const Graph& kernel, std::vector<LinearPlan>& stages) {
  if (kernel.outputs().size() != 1)
    return fmt::format("kernel has {} outputs; a oneDNN primitive writes one",
                       kernel.outputs().size());
  std::vector<NodeId> linear;
  for (size_t n = 0; n < kernel.num_nodes(); ++n)
    if (is_linear(kernel.node(n).op)) linear.push_back(static_cast<NodeId>(n));
  if (linear.empty()) return "no Linear primitive (prim.MatMul, prim.Conv, prim.ConvTranspose)";
  for (NodeId n : linear)
    if (linear.size() > 1 && kernel.node(n).op == "prim.MatMul")
      return fmt::format(
          "{} Linear primitives with a MatMul: only convolutions chain (a MatMul's activations "
          "have no blocked layout to keep between stages)",
          linear.size());
  if (std::string why = check_types(kernel); !why.empty()) return why;
  stages.assign(linear.size(), {});
  std::vector<NodeId> covered(linear.begin(), linear.end());
  // Backwards from the output: each stage's epilogue ends where the next stage reads its source.
  // The nodes are in topological order, so in a chain stage s - 1 is the Linear before stage s.
  ValueId end = kernel.outputs()[0];
  for (size_t s = linear.size(); s-- > 0;) {
    LinearPlan& stage = stages[s];
    stage.linear = linear[s];
    const Node& node = kernel.node(stage.linear);
    std::string why = match_epilogue(kernel, end, node.outputs[0], covered, stage.post_ops);
    if (!why.empty() && s + 1 < linear.size())
      why = fmt::format("{} does not read {} through a post-op epilogue alone: {}",
                        kernel.describe(linear[s + 1]), kernel.describe(stage.linear), why);
    broadcast_scalars(kernel.value(node.outputs[0]).type.shape.size(), stage.post_ops);
    if (why.empty() && s == 0) why = view_of(kernel, node.inputs[0], stage.src, covered);
    if (why.empty() && s > 0) {
      const Shape& shape = kernel.value(node.inputs[0]).type.shape;
      stage.src = {kNoValue, shape, row_major_strides(shape)};
      end = node.inputs[0];
    }
    if (why.empty()) why = view_of(kernel, node.inputs[1], stage.weights, covered);
    if (!why.empty()) return why;
    if (node.op != "prim.MatMul") {
      size_t rank = stage.src.shape.size();
      if (rank < 3 || rank > 5)
        return fmt::format("{} with {} spatial dims (oneDNN has 1 to 3)", node.op, rank - 2);
      if (has_broadcast(stage.src) || has_broadcast(stage.weights))
        return fmt::format("broadcast operand of {}", node.op);
    }
  }
  std::sort(covered.begin(), covered.end());
  for (size_t n = 0; n < kernel.num_nodes(); ++n)
    if (!std::binary_search(covered.begin(), covered.end(), static_cast<NodeId>(n)))
      return fmt::format(
          "{} is not part of a Linear primitive, its operand layouts or its epilogue",
          kernel.describe(static_cast<NodeId>(n)));
  return "";
}

}  // namespace orch::codegen::dnnl_plan
