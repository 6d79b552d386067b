// oneDNN primitives for planned kernels (dnnl_plan.h): descriptors built once per kernel,
// convolutions in the layouts oneDNN picks (format_tag::any) with the reorders in and out run
// inside the kernel, in the model's own layout (configuration "layout=plain") or channel-blocked
// ("layout=blocked"), constant weights reordered once at compile time (a MatMul's column-major
// with "weights=transposed"), a residual add as a sum post-op with "residual=sum".
// A chain of convolutions keeps the picked layouts between its stages: one reorder in, one out.
#include "codegen/dnnl/dnnl_backend.h"

#include <chrono>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <dnnl.hpp>

#include "codegen/dnnl/dnnl_build.h"
#include "codegen/dnnl/dnnl_scratch.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

using dnnl::memory;
using dnnl_config::blocked_desc;
using dnnl_config::Config;
using dnnl_plan::LinearPlan;
using dnnl_plan::PostOp;
using dnnl_plan::View;
using namespace dnnl_build;
using dnnl_config::kBlockedLayout;
using dnnl_config::kPlainLayout;
using dnnl_config::kResidualSum;
using dnnl_config::kTransposedWeights;

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
  // A residual added as a sum post-op (dnnl_config::kResidualSum): copied into `dst` first.
  std::optional<memory> sum_src;
  std::optional<dnnl::reorder> sum_copy;
  std::optional<memory> bias;
  bool constant_weights = false;
  // The primitive's arguments, built once: run() points their memories at its buffers. Built at
  // every call (an allocation per argument), with check_args formatting type strings at every
  // call too, YOLOX-Nano's module ran 1.5-2% slower at one thread (medians 15.62 and 15.39 ms
  // against 15.27 and 15.14, two interleaved runs of 6 rounds).
  std::unordered_map<int, memory> args;
};

// One planned kernel: its stages, the reorders into the first and out of the last, and the
// internal buffers between them (so run() is not reentrant).
class DnnlKernel final : public Kernel {
 public:
  DnnlKernel(const Graph& kernel, std::vector<LinearPlan> plans, const Config& config)
      : kernel_(kernel) {
    stages_.reserve(plans.size());
    for (size_t s = 0; s < plans.size(); ++s) {
      Stage& stage = stages_.emplace_back();
      stage.plan = std::move(plans[s]);
      UserDescs user = user_descs(kernel_, stage.plan);
      stage.constant_weights = kernel_.value(stage.plan.weights.source).is_constant();
      Built built = build(kernel_, stage.plan, user, stage.constant_weights, config, true);
      stage.primitive = built.primitive;
      if (s == 0) {
        src_.emplace(stored_desc(kernel_, stage.plan.src, config), built.src, true, &transients_);
        stage.src = src_->primitive_side();
      } else if (const memory& previous = stages_[s - 1].dst; previous.get_desc() == built.src) {
        stage.src = previous;
      } else {
        stage.src = transients_.add(built.src, cpu_engine());
        stage.from_previous = dnnl::reorder(previous, stage.src);
      }
      if (s + 1 == plans.size()) {
        memory::desc stored = config.blocked_output ? blocked_desc(user.dst.dims()) : user.dst;
        dst_.emplace(stored, built.dst, false, &transients_);
        stage.dst = dst_->primitive_side();
      } else {
        stage.dst = transients_.add(built.dst, cpu_engine());
      }
      // Constant weights are reordered once, into a buffer of their own.
      stage.weights.emplace(user.weights, built.weights, true,
                            stage.constant_weights ? nullptr : &transients_);
      for (size_t i = 0; i < stage.plan.post_ops.size(); ++i) {
        if (!stage.plan.post_ops[i].binary()) continue;
        memory operand(stored_desc(kernel_, stage.plan.post_ops[i].other, config), cpu_engine(),
                       static_cast<void*>(nullptr));
        if (as_sum(kernel_, stage.plan, i, config)) {
          stage.sum_src = operand;
          stage.sum_copy = dnnl::reorder(operand, stage.dst);
        } else {
          stage.binary.push_back(operand);
        }
      }
      if (stage.plan.bias.source != kNoValue)
        stage.bias = memory(user.bias, cpu_engine(), static_cast<void*>(nullptr));
      stage.args = {{DNNL_ARG_SRC, stage.src},
                    {DNNL_ARG_WEIGHTS, stage.weights->primitive_side()},
                    {DNNL_ARG_DST, stage.dst}};
      if (stage.bias) stage.args[DNNL_ARG_BIAS] = *stage.bias;
      for (size_t i = 0, b = 0; i < stage.plan.post_ops.size(); ++i)
        if (stage.plan.post_ops[i].binary() && !as_sum(kernel_, stage.plan, i, config))
          stage.args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] =
              stage.binary[b++];
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
      if (stage.bias) stage.bias->set_data_handle(data_of(stage.plan.bias.source, inputs));
      const std::vector<PostOp>& ops = stage.plan.post_ops;
      for (size_t i = stage.sum_src ? 1 : 0, b = 0; i < ops.size(); ++i)
        if (ops[i].binary())
          stage.binary[b++].set_data_handle(data_of(ops[i].other.source, inputs));
      if (stage.sum_src) {
        stage.sum_src->set_data_handle(data_of(ops.front().other.source, inputs));
        stage.sum_copy->execute(stream_, *stage.sum_src, stage.dst);
        ++reorders;
      }
      stage.primitive.execute(stream_, stage.args);
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
    // The types are formatted only on failure: check() would format them at every call.
    for (size_t i = 0; i < inputs.size(); ++i) {
      const TensorType& t = kernel_.value(kernel_.inputs()[i]).type;
      if (inputs[i].dtype() != t.dtype || inputs[i].shape() != t.shape)
        fail("input {} must be {}, got {}", i, format_type(t),
             format_type({inputs[i].dtype(), inputs[i].shape()}));
    }
    const TensorType& out = kernel_.value(kernel_.outputs()[0]).type;
    if (outputs[0].dtype() != out.dtype || outputs[0].shape() != out.shape)
      fail("output must be {}", format_type(out));
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
                     const std::vector<Built>& picked, const Config& config) {
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

// Throws Unsupported unless every tensor `config` stores blocked is read or written whole, as a
// convolution's source, destination or binary post-op operand.
void check_stored_blocked(const Graph& kernel, const std::vector<LinearPlan>& stages,
                          const Config& config) {
  for (int i : config.blocked_inputs)
    if (i < 0 || static_cast<size_t>(i) >= kernel.inputs().size())
      unsupported("oneDNN backend: no input {} to store channel-blocked ({} inputs)", i,
                  kernel.inputs().size());
  bool matmul = kernel.node(stages.front().linear).op == "prim.MatMul";
  if ((!config.blocked_inputs.empty() || config.blocked_output) && matmul)
    unsupported("oneDNN backend: a MatMul's tensors are not stored channel-blocked");
  for (const LinearPlan& stage : stages)
    for (ValueId v : {stage.weights.source, stage.bias.source})
      if (v != kNoValue && stored_blocked(kernel, v, config))
        unsupported("oneDNN backend: weights '{}' are not stored channel-blocked",
                    kernel.value(v).name);
  const Shape& out = kernel.value(kernel.outputs()[0]).type.shape;
  View whole_out{kernel.outputs()[0], out, row_major_strides(out)};
  if (config.blocked_output && !whole_blockable(kernel, whole_out))
    unsupported("oneDNN backend: an output of shape {} has no whole channel blocks of {}",
                format_shape(out), dnnl_config::channel_block());
}

// Whether some stage's first post-op is a residual that kResidualSum adds as a sum post-op.
bool has_residual(const Graph& kernel, const std::vector<LinearPlan>& stages) {
  return std::ranges::any_of(stages, [&](const LinearPlan& stage) {
    return as_sum(kernel, stage, 0, {.residual_sum = true});
  });
}

// Every stage's primitive descriptor in `config`; throws dnnl::error where oneDNN has none.
std::vector<Built> build_stages(const Graph& kernel, const std::vector<LinearPlan>& stages,
                                const Config& config) {
  std::vector<Built> built;
  for (const LinearPlan& stage : stages)
    built.push_back(build(kernel, stage, user_descs(kernel, stage),
                          kernel.value(stage.weights.source).is_constant(), config, false));
  return built;
}

}  // namespace

std::unique_ptr<Kernel> dnnl_compile(const Graph& kernel, const std::string& config) {
  Config parsed = dnnl_config::parse_config(config);
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
  if (parsed.residual_sum && !has_residual(kernel, stages))
    unsupported(
        "oneDNN backend: '{}' is for a convolution whose first post-op adds a tensor of its "
        "output's shape",
        config);
  check_stored_blocked(kernel, stages, parsed);
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
  if (has_residual(kernel, stages)) {
    try {
      build_stages(kernel, stages, {.residual_sum = true});
      configs.emplace_back(kResidualSum);
    } catch (const dnnl::error&) {
      // No convolution with a sum post-op here: the binary one alone.
    }
  }
  return configs;
}

bool dnnl_blocked_layout(const std::string& config) {
  return config == kBlockedLayout;
}

std::string dnnl_blocked_variant(const std::string& config) {
  return config == kPlainLayout ? std::string(kBlockedLayout) : "";
}

DnnlBlockedPorts dnnl_blocked_ports(const Graph& kernel, const std::string& config_text) {
  DnnlBlockedPorts ports;
  Config config = dnnl_config::parse_config(config_text);
  std::vector<LinearPlan> stages;
  if (!plan_for_dnnl(kernel, stages).empty() || kernel.node(stages[0].linear).op == "prim.MatMul")
    return ports;
  std::vector<Built> built;
  try {
    built = build_stages(kernel, stages, config);
  } catch (const dnnl::error&) {
    return ports;
  }
  // Per input: 1 while every use reads it whole in a blocked layout, 0 once one does not.
  std::vector<int> blockable(kernel.inputs().size(), -1);
  auto use = [&](ValueId source, bool blocked) {
    for (size_t i = 0; i < kernel.inputs().size(); ++i)
      if (kernel.inputs()[i] == source) blockable[i] = blockable[i] != 0 && blocked;
  };
  for (size_t s = 0; s < stages.size(); ++s) {
    const LinearPlan& stage = stages[s];
    if (s == 0)
      use(stage.src.source, whole_blockable(kernel, stage.src) && is_blocked(built[0].src));
    use(stage.weights.source, false);
    use(stage.bias.source, false);
    // A binary operand is read in the layout of the destination it combines with.
    for (const PostOp& op : stage.post_ops)
      if (op.binary())
        use(op.other.source, whole_blockable(kernel, op.other) && is_blocked(built[s].dst));
  }
  for (size_t i = 0; i < blockable.size(); ++i)
    if (blockable[i] == 1) ports.inputs.push_back(static_cast<int>(i));
  const Shape& out = kernel.value(kernel.outputs()[0]).type.shape;
  ports.output = is_blocked(built.back().dst) &&
                 whole_blockable(kernel, {kernel.outputs()[0], out, row_major_strides(out)});
  // Blocked binary operands change the primitives oneDNN builds: keep them only if it still can.
  // Without them the primitives are those built above (a stored source changes only its reorder).
  Config stored = config;
  stored.blocked_inputs = ports.inputs;
  try {
    built = build_stages(kernel, stages, stored);
  } catch (const dnnl::error&) {
    std::erase_if(ports.inputs, [&](int i) { return kernel.inputs()[i] != stages[0].src.source; });
  }
  ports.reference_only =
      std::ranges::any_of(built, [](const Built& b) { return b.impl.starts_with("ref"); });
  return ports;
}

std::string dnnl_with_stored_blocked(const std::string& config, const DnnlBlockedPorts& stored) {
  return dnnl_config::with_stored_blocked(config, stored.inputs, stored.output);
}

int64_t dnnl_channel_block() {
  return dnnl_config::channel_block();
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
