#include "codegen/dnnl/dnnl_build.h"

#include <algorithm>
#include <utility>

#include "ir/error.h"

namespace orch::codegen::dnnl_build {
namespace {

using dnnl_config::blocked_desc;
using dnnl_plan::PostOp;

// The activation desc a convolution is asked for: the user's, channel-blocked, or oneDNN's pick.
memory::desc activation_desc(const memory::desc& user, const Config& config) {
  if (config.plain) return user;
  return config.blocked ? blocked_desc(user.dims()) : any_desc(user.dims());
}

dnnl::algorithm algorithm_of(const std::string& alg) {
  using dnnl::algorithm;
  static const std::pair<std::string_view, algorithm> table[] = {
      {"relu", algorithm::eltwise_relu},
      {"linear", algorithm::eltwise_linear},
      {"clip", algorithm::eltwise_clip},
      {"logistic", algorithm::eltwise_logistic},
      {"tanh", algorithm::eltwise_tanh},
      {"gelu_erf", algorithm::eltwise_gelu_erf},
      {"gelu_tanh", algorithm::eltwise_gelu_tanh},
      {"swish", algorithm::eltwise_swish},
      {"hardswish", algorithm::eltwise_hardswish},
      {"mish", algorithm::eltwise_mish},
      {"soft_relu", algorithm::eltwise_soft_relu},
      {"elu", algorithm::eltwise_elu},
      {"exp", algorithm::eltwise_exp},
      {"log", algorithm::eltwise_log},
      {"abs", algorithm::eltwise_abs},
      {"sqrt", algorithm::eltwise_sqrt},
      {"square", algorithm::eltwise_square},
      {"binary_add", algorithm::binary_add},
      {"binary_sub", algorithm::binary_sub},
      {"binary_mul", algorithm::binary_mul},
      {"binary_div", algorithm::binary_div},
      {"binary_max", algorithm::binary_max},
      {"binary_min", algorithm::binary_min},
  };
  for (const auto& [name, a] : table)
    if (name == alg) return a;
  fail("unknown oneDNN algorithm '{}'", alg);
}

dnnl::primitive_attr post_op_attr(const Graph& kernel, const LinearPlan& plan,
                                  const Config& config) {
  dnnl::post_ops po;
  for (size_t i = 0; i < plan.post_ops.size(); ++i) {
    const PostOp& op = plan.post_ops[i];
    if (as_sum(kernel, plan, i, config))
      po.append_sum(1.0f);
    else if (op.binary())
      po.append_binary(algorithm_of(op.alg), stored_desc(kernel, op.other, config));
    else
      po.append_eltwise(1.0f, algorithm_of(op.alg), op.alpha, op.beta);
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

// ONNX weights as oneDNN's (grouped: [g, O/g, I/g, k...]); ConvTranspose stores [I, O/g, k...].
View conv_weights(View w, int64_t group, bool transposed) {
  Shape s = w.shape;
  if (group > 1) {
    Shape grouped = {group, s[0] / group};
    grouped.insert(grouped.end(), s.begin() + 1, s.end());
    if (!dnnl_plan::reshape_view(w, grouped))
      fail("the weights' layout cannot be split into {} groups", group);
  }
  if (transposed) {
    size_t o = group > 1 ? 1 : 0;
    std::swap(w.shape[o], w.shape[o + 1]);
    std::swap(w.strides[o], w.strides[o + 1]);
  }
  return w;
}

// A first post-op that adds a per-channel vector to a convolution's output becomes the
// convolution's bias. A 32 -> 32 1x1 convolution at 104x104 (2 threads) with bias and SiLU took
// 521 us blocked with the bias as a binary post-op, 432 us with it as the bias; in the plain
// layout 25,313 us and 3,725 us (257 us and 265 us without bias and SiLU).
void absorb_bias(const Graph& kernel, LinearPlan& plan) {
  if (kernel.node(plan.linear).op == "prim.MatMul" || plan.post_ops.empty()) return;
  const PostOp& first = plan.post_ops.front();
  if (!first.binary() || first.alg != "binary_add" || first.other.shape.size() < 3) return;
  const View& v = first.other;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (d != 1 && v.shape[d] != 1 && v.strides[d] != 0) return;
  if (v.shape[1] > 1 && v.strides[1] != 1) return;
  plan.bias = {.source = v.source, .shape = {v.shape[1]}, .strides = {1}};
  plan.post_ops.erase(plan.post_ops.begin());
}

template <class PrimitiveDesc>
Built finish(const PrimitiveDesc& pd, bool create) {
  return {create ? dnnl::primitive(pd) : dnnl::primitive(), pd.src_desc(), pd.weights_desc(),
          pd.dst_desc(), pd.impl_info_str()};
}

}  // namespace

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

memory::dims to_dims(const std::vector<int64_t>& v) {
  return memory::dims(v.begin(), v.end());
}

// A plain desc of `view`; broadcast dims have size 1 (oneDNN broadcasts those itself).
memory::desc view_desc(const View& view) {
  memory::dims dims, strides;
  memory::dim outer = 1;
  for (size_t d = 0; d < view.shape.size(); ++d) {
    bool broadcast = view.strides[d] == 0 && view.shape[d] > 1;
    dims.push_back(broadcast ? 1 : view.shape[d]);
    if (dims.back() > 1) outer = std::max(outer, view.strides[d] * dims.back());
  }
  // Size-1 dims get an outermost stride: their stride is never used, but must not look dense.
  for (size_t d = 0; d < view.shape.size(); ++d)
    strides.push_back(dims[d] == 1 ? outer : view.strides[d]);
  return memory::desc(dims, memory::data_type::f32, strides);
}

// Whether `view` is the whole of its source as stored (row-major, neither reshaped nor
// transposed), with whole channel blocks: what a tensor the module stores blocked must be.
bool whole_blockable(const Graph& kernel, const View& view) {
  const Shape& shape = kernel.value(view.source).type.shape;
  return view.shape == shape && view.strides == row_major_strides(shape) && shape.size() >= 3 &&
         shape.size() <= 5 && shape[1] % dnnl_config::channel_block() == 0;
}

// Whether kernel input `source` is one `config` stores channel-blocked.
bool stored_blocked(const Graph& kernel, ValueId source, const Config& config) {
  for (int i : config.blocked_inputs)
    if (kernel.inputs()[i] == source) return true;
  return false;
}

// The desc of `view` as the module stores its source: channel-blocked when `config` says so.
memory::desc stored_desc(const Graph& kernel, const View& view, const Config& config) {
  if (!stored_blocked(kernel, view.source, config)) return view_desc(view);
  check(whole_blockable(kernel, view),
        "oneDNN backend: input '{}' is stored channel-blocked, but read reshaped, transposed or "
        "with a partial channel block",
        kernel.value(view.source).name);
  return blocked_desc(to_dims(view.shape));
}

bool is_blocked(const memory::desc& desc) {
  size_t rank = desc.dims().size();
  return rank >= 3 && rank <= 5 && desc == blocked_desc(desc.dims());
}

memory::desc any_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

// A dense desc of `dims` whose last two dims are stored column-major ([..., K, N] as [..., N, K]).
memory::desc transposed_desc(const memory::dims& dims) {
  size_t rank = dims.size();
  memory::dims strides(rank);
  memory::dim inner = dims[rank - 1] * dims[rank - 2];
  strides[rank - 2] = 1;
  strides[rank - 1] = dims[rank - 2];
  for (size_t d = rank - 2; d-- > 0;) {
    strides[d] = inner;
    inner *= dims[d];
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

bool as_sum(const Graph& kernel, const LinearPlan& plan, size_t index, const Config& config) {
  if (!config.residual_sum || index != 0 || plan.post_ops.empty()) return false;
  const Node& node = kernel.node(plan.linear);
  const PostOp& op = plan.post_ops.front();
  if (node.op == "prim.MatMul" || !op.binary() || op.alg != "binary_add") return false;
  const View& v = op.other;
  if (v.shape != kernel.value(node.outputs[0]).type.shape) return false;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.strides[d] == 0 && v.shape[d] > 1) return false;
  return true;
}

std::string plan_for_dnnl(const Graph& kernel, std::vector<LinearPlan>& stages) {
  std::string why = dnnl_plan::plan_kernel(kernel, stages);
  if (why.empty())
    for (LinearPlan& stage : stages) absorb_bias(kernel, stage);
  return why;
}

Built build(const Graph& kernel, const LinearPlan& plan, const UserDescs& user,
            bool constant_weights, const Config& config, bool create) {
  const Node& node = kernel.node(plan.linear);
  dnnl::primitive_attr attr = post_op_attr(kernel, plan, config);
  auto kind = dnnl::prop_kind::forward_inference;
  if (node.op == "prim.MatMul") {
    memory::desc weights = user.weights;
    if (constant_weights)
      weights = config.transposed_weights ? transposed_desc(user.weights.dims())
                                          : any_desc(user.weights.dims());
    dnnl::matmul::desc desc(user.src, weights, user.dst);
    return finish(dnnl::matmul::primitive_desc(desc, attr, cpu_engine()), create);
  }
  std::vector<int64_t> pads = attr_ints(node.attrs, "pads");
  size_t spatial = pads.size() / 2;
  memory::dims strides = to_dims(attr_ints(node.attrs, "strides")), dilates, pad_l, pad_r;
  std::vector<int64_t> out_pad = attr_ints(node.attrs, "output_padding");
  for (size_t s = 0; s < spatial; ++s) {
    dilates.push_back(attr_ints(node.attrs, "dilations")[s] - 1);
    pad_l.push_back(pads[s]);
    pad_r.push_back(pads[spatial + s] - (out_pad.empty() ? 0 : out_pad[s]));
  }
  memory::desc src = activation_desc(user.src, config), weights = any_desc(user.weights.dims()),
               dst = activation_desc(user.dst, config);
  // An empty bias desc is no bias.
  const memory::desc& bias = user.bias;
  if (node.op == "prim.Conv") {
    dnnl::convolution_forward::desc desc(kind, dnnl::algorithm::convolution_direct, src, weights,
                                         bias, dst, strides, dilates, pad_l, pad_r);
    return finish(dnnl::convolution_forward::primitive_desc(desc, attr, cpu_engine()), create);
  }
  dnnl::deconvolution_forward::desc desc(kind, dnnl::algorithm::deconvolution_direct, src, weights,
                                         bias, dst, strides, dilates, pad_l, pad_r);
  return finish(dnnl::deconvolution_forward::primitive_desc(desc, attr, cpu_engine()), create);
}

UserDescs user_descs(const Graph& kernel, const LinearPlan& plan) {
  const Node& node = kernel.node(plan.linear);
  View weights = plan.weights;
  if (node.op != "prim.MatMul")
    weights =
        conv_weights(weights, attr_int(node.attrs, "group", 1), node.op == "prim.ConvTranspose");
  const Shape& out = kernel.value(node.outputs[0]).type.shape;
  memory::desc dst(to_dims(out), memory::data_type::f32, to_dims(row_major_strides(out)));
  memory::desc bias = plan.bias.source == kNoValue ? memory::desc() : view_desc(plan.bias);
  return {view_desc(plan.src), view_desc(weights), dst, bias};
}

}  // namespace orch::codegen::dnnl_build
