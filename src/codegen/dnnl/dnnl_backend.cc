// oneDNN primitives for planned kernels (dnnl_plan.h): descriptors built once per kernel,
// convolutions in the layouts oneDNN picks (format_tag::any) with the reorders in and out run
// inside the kernel, in the model's own layout (configuration "layout=plain") or channel-blocked
// ("layout=blocked"), constant
// weights reordered once at compile time (a MatMul's column-major with "weights=transposed").
// A chain of convolutions keeps the picked layouts between its stages: one reorder in, one out.
#include "codegen/dnnl/dnnl_backend.h"

#include <chrono>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <dnnl.hpp>

#include "codegen/dnnl/dnnl_plan.h"
#include "codegen/dnnl/dnnl_scratch.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

using dnnl::memory;
using dnnl_plan::LinearPlan;
using dnnl_plan::PostOp;
using dnnl_plan::View;

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

memory::desc any_desc(const memory::dims& dims) {
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

// A kernel's configuration: "" (oneDNN picks every layout), or one of these.
//
// Where a convolution's activations live. oneDNN picks blocked layouts for its fastest
// convolutions, and the kernel reorders the model's plain tensors into them and back; in the
// plain layout oneDNN runs a convolution as a GEMM instead, with no reorder. Measured on the
// development machine (AVX2, 2 threads): YOLOX-Nano's 1x1 convolutions take 160-260 us plain
// against 260-420 us blocked with the reorders, its 3x3 and depthwise ones are 2-4x faster
// blocked. So both are candidates and the tuner keeps the faster one per kernel.
constexpr std::string_view kPlainLayout = "layout=plain";
// Or channel-blocked (nChw16c with AVX-512, nChw8c below), the layout of oneDNN's direct
// convolutions. With AVX-512, oneDNN 2.6 picks its brgemm convolution in channels-last, and the
// reorder from the model's layout into channels-last costs 3x the one into nChw16c. Measured on
// an AMD EPYC with AVX-512, one thread: Candy's 128 -> 128 3x3 convolution at 56x56 takes
// 4.66 ms channels-last + 0.32 ms of reorders, 4.67 ms blocked + 0.11 ms of reorders; its
// 128 -> 64 3x3 one at 112x112 is faster channels-last (9.29 + 0.98 ms against 11.05 + 0.28 ms).
// So this is a third candidate, for single convolutions and chains alike.
constexpr std::string_view kBlockedLayout = "layout=blocked";
// How a MatMul's constant weights are stored (reordered once, when the kernel is built). For
// [K, N] weights oneDNN 2.6 picks the row-major layout, and its GEMM is much slower on some
// shapes than with the same weights column-major: ViT-B/16's MLP up-projection (197x768 by
// 768x3072) takes 22.0 ms row-major and 12.8 ms column-major on one thread of the development
// machine (AMD EPYC, AVX2), 12.0 and 7.0 ms on two; its down-projection (197x3072 by 3072x768)
// is the same either way. So both are candidates.
constexpr std::string_view kTransposedWeights = "weights=transposed";

struct Config {
  bool plain = false;               // convolutions: the model's layout, no reorders
  bool blocked = false;             // convolutions: channel-blocked activations
  bool transposed_weights = false;  // MatMul: constant weights stored column-major
};

Config parse_config(const std::string& config) {
  if (config.empty()) return {};
  if (config == kPlainLayout) return {.plain = true};
  if (config == kBlockedLayout) return {.blocked = true};
  if (config == kTransposedWeights) return {.transposed_weights = true};
  fail("oneDNN backend: unknown configuration '{}' (known: '{}', '{}', '{}')", config, kPlainLayout,
       kBlockedLayout, kTransposedWeights);
}

// Activations of `dims` (N, C, spatial...) with the channels in blocks of the vector width.
memory::desc blocked_desc(const memory::dims& dims) {
  using isa = dnnl::cpu_isa;
  using tag = memory::format_tag;
  isa cpu = dnnl::get_effective_cpu_isa();
  bool wide = cpu == isa::avx512_core || cpu == isa::avx512_core_vnni ||
              cpu == isa::avx512_core_bf16 || cpu == isa::avx512_core_amx;
  static const tag by_rank[][2] = {
      {tag::aBc8b, tag::aBc16b}, {tag::aBcd8b, tag::aBcd16b}, {tag::aBcde8b, tag::aBcde16b}};
  size_t rank = dims.size();
  check(rank >= 3 && rank <= 5, "no channel-blocked layout for rank {}", rank);
  return memory::desc(dims, memory::data_type::f32, by_rank[rank - 3][wide ? 1 : 0]);
}

// The activation desc a convolution is asked for: the user's, channel-blocked, or oneDNN's pick.
memory::desc activation_desc(const memory::desc& user, Config config) {
  if (config.plain) return user;
  return config.blocked ? blocked_desc(user.dims()) : any_desc(user.dims());
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

dnnl::primitive_attr post_op_attr(const std::vector<PostOp>& ops) {
  dnnl::post_ops po;
  for (const PostOp& op : ops) {
    if (op.binary())
      po.append_binary(algorithm_of(op.alg), view_desc(op.other));
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

std::string plan_for_dnnl(const Graph& kernel, std::vector<LinearPlan>& stages) {
  std::string why = dnnl_plan::plan_kernel(kernel, stages);
  if (why.empty())
    for (LinearPlan& stage : stages) absorb_bias(kernel, stage);
  return why;
}

/// A primitive and the layouts it reads and writes.
struct Built {
  dnnl::primitive primitive;
  memory::desc src, weights, dst;
};

template <class PrimitiveDesc>
Built finish(const PrimitiveDesc& pd, bool create) {
  return {create ? dnnl::primitive(pd) : dnnl::primitive(), pd.src_desc(), pd.weights_desc(),
          pd.dst_desc()};
}

// User-side descs of the primitive's tensors: src, weights (as oneDNN indexes them), dst.
struct UserDescs {
  memory::desc src, weights, dst, bias;  // bias: empty when none
};

Built build(const Graph& kernel, const LinearPlan& plan, const UserDescs& user,
            bool constant_weights, Config config, bool create) {
  const Node& node = kernel.node(plan.linear);
  dnnl::primitive_attr attr = post_op_attr(plan.post_ops);
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

// A tensor the primitive reads or writes, with the reorder between the user's layout and the
// primitive's when they differ, into a transient buffer or, without `transients`, one of its own.
struct Port {
  memory user;
  std::optional<memory> internal;
  std::optional<dnnl::reorder> reorder;

  Port(const memory::desc& user_desc, const memory::desc& prim_desc, bool into_primitive,
       DnnlTransients* transients) {
    user = memory(user_desc, cpu_engine(), static_cast<void*>(nullptr));
    if (user_desc == prim_desc) return;
    internal = transients != nullptr ? transients->add(prim_desc, cpu_engine())
                                     : memory(prim_desc, cpu_engine());
    reorder = into_primitive ? dnnl::reorder(user, *internal) : dnnl::reorder(*internal, user);
  }
  const memory& primitive_side() const { return internal ? *internal : user; }
};

// Accumulates stage times when asked to (waiting for the stream at each lap), else does nothing.
class Stopwatch {
 public:
  Stopwatch(dnnl::stream& stream, DnnlStageTimes* times) : stream_(stream), times_(times) {}
  void lap(double DnnlStageTimes::*stage) {
    if (times_ == nullptr) return;
    stream_.wait();
    auto now = std::chrono::steady_clock::now();
    times_->*stage += std::chrono::duration<double>(now - last_).count();
    last_ = now;
  }

 private:
  dnnl::stream& stream_;
  DnnlStageTimes* times_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// One stage of a kernel: its primitive, the memories it reads and writes on the primitive's
// side, and the operands it reads besides its source.
struct Stage {
  LinearPlan plan;
  dnnl::primitive primitive;
  memory src, dst;
  // The previous stage's output into `src`, when the two primitives picked different layouts.
  std::optional<dnnl::reorder> from_previous;
  std::optional<Port> weights;
  std::vector<memory> binary;
  std::optional<memory> bias;
  bool constant_weights = false;
};

// One planned kernel: its stages, the reorders into the first and out of the last, and the
// internal buffers between them (so run() is not reentrant).
class DnnlKernel final : public Kernel {
 public:
  DnnlKernel(const Graph& kernel, std::vector<LinearPlan> plans, Config config) : kernel_(kernel) {
    stages_.reserve(plans.size());
    for (size_t s = 0; s < plans.size(); ++s) {
      Stage& stage = stages_.emplace_back();
      stage.plan = std::move(plans[s]);
      UserDescs user = user_descs(kernel_, stage.plan);
      stage.constant_weights = kernel_.value(stage.plan.weights.source).is_constant();
      Built built = build(kernel_, stage.plan, user, stage.constant_weights, config, true);
      stage.primitive = built.primitive;
      if (s == 0) {
        src_.emplace(user.src, built.src, true, &transients_);
        stage.src = src_->primitive_side();
      } else if (const memory& previous = stages_[s - 1].dst; previous.get_desc() == built.src) {
        stage.src = previous;
      } else {
        stage.src = transients_.add(built.src, cpu_engine());
        stage.from_previous = dnnl::reorder(previous, stage.src);
      }
      if (s + 1 == plans.size()) {
        dst_.emplace(user.dst, built.dst, false, &transients_);
        stage.dst = dst_->primitive_side();
      } else {
        stage.dst = transients_.add(built.dst, cpu_engine());
      }
      // Constant weights are reordered once, into a buffer of their own.
      stage.weights.emplace(user.weights, built.weights, true,
                            stage.constant_weights ? nullptr : &transients_);
      for (const PostOp& op : stage.plan.post_ops)
        if (op.binary())
          stage.binary.emplace_back(view_desc(op.other), cpu_engine(), static_cast<void*>(nullptr));
      if (stage.plan.bias.source != kNoValue)
        stage.bias = memory(user.bias, cpu_engine(), static_cast<void*>(nullptr));
      if (stage.constant_weights) {
        // Weights are reordered once here; run() reads the result.
        Port& w = *stage.weights;
        w.user.set_data_handle(constant_data(stage.plan.weights.source));
        if (w.reorder) w.reorder->execute(stream_, w.user, *w.internal);
        stream_.wait();
      }
    }
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    run_timed(inputs, outputs, nullptr);
  }

  /// run(), timing the reorders and the primitives separately into `times` when not null.
  void run_timed(std::span<const Tensor> inputs, std::span<Tensor> outputs, DnnlStageTimes* times) {
    check_args(inputs, outputs);
    Stopwatch watch(stream_, times);
    transients_.bind();
    int reorders = 0;
    src_->user.set_data_handle(data_of(stages_.front().plan.src.source, inputs));
    if (src_->reorder) {
      src_->reorder->execute(stream_, src_->user, *src_->internal);
      ++reorders;
    }
    dst_->user.set_data_handle(outputs[0].mutable_bytes());
    for (size_t s = 0; s < stages_.size(); ++s) {
      Stage& stage = stages_[s];
      if (stage.from_previous) {
        stage.from_previous->execute(stream_, stages_[s - 1].dst, stage.src);
        ++reorders;
      }
      Port& w = *stage.weights;
      if (!stage.constant_weights) {
        w.user.set_data_handle(data_of(stage.plan.weights.source, inputs));
        if (w.reorder) {
          w.reorder->execute(stream_, w.user, *w.internal);
          ++reorders;
        }
      }
      watch.lap(&DnnlStageTimes::reorder_s);
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, stage.src},
                                              {DNNL_ARG_WEIGHTS, w.primitive_side()},
                                              {DNNL_ARG_DST, stage.dst}};
      if (stage.bias) {
        stage.bias->set_data_handle(data_of(stage.plan.bias.source, inputs));
        args[DNNL_ARG_BIAS] = *stage.bias;
      }
      size_t b = 0;
      for (size_t i = 0; i < stage.plan.post_ops.size(); ++i) {
        if (!stage.plan.post_ops[i].binary()) continue;
        stage.binary[b].set_data_handle(data_of(stage.plan.post_ops[i].other.source, inputs));
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] =
            stage.binary[b++];
      }
      stage.primitive.execute(stream_, args);
      watch.lap(&DnnlStageTimes::primitive_s);
    }
    if (dst_->reorder) {
      dst_->reorder->execute(stream_, *dst_->internal, dst_->user);
      ++reorders;
    }
    stream_.wait();
    watch.lap(&DnnlStageTimes::reorder_s);
    if (times != nullptr) times->reorders = reorders;
  }

 private:
  void check_args(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
    check(inputs.size() == kernel_.inputs().size() && outputs.size() == 1,
          "oneDNN kernel takes {} inputs and 1 output, got {} and {}", kernel_.inputs().size(),
          inputs.size(), outputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorType& t = kernel_.value(kernel_.inputs()[i]).type;
      check(inputs[i].dtype() == t.dtype && inputs[i].shape() == t.shape,
            "input {} must be {}, got {}", i, format_type(t),
            format_type({inputs[i].dtype(), inputs[i].shape()}));
    }
    const TensorType& out = kernel_.value(kernel_.outputs()[0]).type;
    check(outputs[0].dtype() == out.dtype && outputs[0].shape() == out.shape, "output must be {}",
          format_type(out));
  }

  void* constant_data(ValueId source) const {
    return const_cast<std::byte*>(kernel_.value(source).constant.bytes());
  }

  void* data_of(ValueId source, std::span<const Tensor> inputs) const {
    if (kernel_.value(source).is_constant()) return constant_data(source);
    for (size_t i = 0; i < kernel_.inputs().size(); ++i)
      if (kernel_.inputs()[i] == source) return const_cast<std::byte*>(inputs[i].bytes());
    fail("value '{}' is neither an input nor a constant", kernel_.value(source).name);
  }

  Graph kernel_;  // keeps the constants' buffers alive
  dnnl::stream stream_{cpu_engine()};
  std::vector<Stage> stages_;
  std::optional<Port> src_, dst_;  // into the first stage, out of the last
  DnnlTransients transients_;
};

std::string reject(const Graph& kernel) {
  std::vector<LinearPlan> stages;
  if (std::string why = plan_for_dnnl(kernel, stages); !why.empty()) return why;
  for (const LinearPlan& stage : stages) {
    try {
      bool constant_weights = kernel.value(stage.weights.source).is_constant();
      build(kernel, stage, user_descs(kernel, stage), constant_weights, {}, false);
    } catch (const dnnl::error& e) {
      return fmt::format("oneDNN has no implementation for {}: {}", kernel.describe(stage.linear),
                         e.what());
    } catch (const Error& e) {
      return e.what();
    }
  }
  return "";
}

std::unique_ptr<Kernel> compile(const Graph& kernel) {
  return dnnl_compile(kernel, "");
}

// Whether every stage has an implementation in `config` and some stage's layouts differ from
// `picked`, those oneDNN picks (else the configuration would measure the same kernel twice).
bool changes_layouts(const Graph& kernel, const std::vector<LinearPlan>& stages,
                     const std::vector<Built>& picked, Config config) {
  bool differs = false;
  try {
    for (size_t s = 0; s < stages.size(); ++s) {
      const LinearPlan& stage = stages[s];
      bool constant_weights = kernel.value(stage.weights.source).is_constant();
      Built other =
          build(kernel, stage, user_descs(kernel, stage), constant_weights, config, false);
      differs = differs || picked[s].src != other.src || picked[s].dst != other.dst;
    }
  } catch (const dnnl::error&) {
    return false;  // no implementation in that layout
  }
  return differs;
}

}  // namespace

std::unique_ptr<Kernel> dnnl_compile(const Graph& kernel, const std::string& config) {
  Config parsed = parse_config(config);
  std::vector<LinearPlan> stages;
  if (std::string why = plan_for_dnnl(kernel, stages); !why.empty())
    unsupported("oneDNN backend: {}", why);
  const LinearPlan& first = stages.front();
  bool matmul = kernel.node(first.linear).op == "prim.MatMul";
  if (parsed.plain && (matmul || stages.size() > 1))
    unsupported("oneDNN backend: '{}' is for one convolution, not a MatMul or a chain", config);
  if (parsed.blocked && matmul)
    unsupported("oneDNN backend: '{}' is for convolutions, not a MatMul", config);
  if (parsed.transposed_weights && (!matmul || !kernel.value(first.weights.source).is_constant()))
    unsupported("oneDNN backend: '{}' is for a MatMul with constant weights", config);
  try {
    return std::make_unique<DnnlKernel>(kernel, std::move(stages), parsed);
  } catch (const dnnl::error& e) {
    unsupported("oneDNN backend: {}", e.what());
  }
}

std::vector<std::string> dnnl_configs(const Graph& kernel) {
  std::vector<LinearPlan> stages;
  if (!plan_for_dnnl(kernel, stages).empty()) return {};
  if (kernel.node(stages.front().linear).op == "prim.MatMul") {
    // A MatMul's activations are always in the kernel's own layouts, and only constant weights
    // have a layout of the kernel's choosing.
    const LinearPlan& plan = stages.front();
    if (!kernel.value(plan.weights.source).is_constant()) return {};
    try {
      UserDescs user = user_descs(kernel, plan);
      Built picked = build(kernel, plan, user, true, {}, false);
      if (picked.weights == transposed_desc(user.weights.dims())) return {};
      build(kernel, plan, user, true, {.transposed_weights = true}, false);
    } catch (const dnnl::error&) {
      return {};
    }
    return {std::string(kTransposedWeights)};
  }
  std::vector<Built> picked;
  try {
    for (const LinearPlan& stage : stages)
      picked.push_back(build(kernel, stage, user_descs(kernel, stage),
                             kernel.value(stage.weights.source).is_constant(), {}, false));
  } catch (const dnnl::error&) {
    return {};
  }
  std::vector<std::string> configs;
  // A chain exists to keep oneDNN's layouts between its stages: the plain layout would undo it.
  if (stages.size() == 1 && changes_layouts(kernel, stages, picked, {.plain = true}))
    configs.emplace_back(kPlainLayout);
  if (changes_layouts(kernel, stages, picked, {.blocked = true}))
    configs.emplace_back(kBlockedLayout);
  return configs;
}

DnnlStageTimes time_dnnl_stages(const Graph& kernel, std::span<const Tensor> inputs, int runs) {
  std::unique_ptr<Kernel> compiled = compile(kernel);
  auto& k = static_cast<DnnlKernel&>(*compiled);
  const TensorType& t = kernel.value(kernel.outputs()[0]).type;
  Tensor out(t.dtype, t.shape);
  DnnlStageTimes times;
  for (int r = 0; r < runs; ++r) k.run_timed(inputs, std::span<Tensor>(&out, 1), &times);
  return times;
}

void dnnl_reference_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                          float* c) {
  dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  check(status == dnnl_success, "dnnl_sgemm failed with status {}", static_cast<int>(status));
}

const Backend& dnnl_backend() {
  static const Backend backend{"dnnl", reject, compile};
  return backend;
}

}  // namespace orch::codegen
