// Running a loaded module: inputs checked, outputs allocated, the driver in kernels.so called
// with the context's arena, external kernels and hooks called back from it.
#include <dlfcn.h>

#include <cstring>
#include <thread>

#include "codegen/channel_blocks.h"
#include "codegen/dnnl/dnnl_backend.h"
#include "ir/error.h"
#include "orch/module.h"
#include "runtime/module_format.h"
#include "runtime/module_impl.h"

namespace orch {
namespace {

using runtime::KernelValue;
using runtime::Location;
using runtime::Region;

// What the driver's callbacks need; errors are kept here because no exception may cross the
// generated C code.
struct RunState {
  const Module::Impl* module = nullptr;
  orch_module_frame* frame = nullptr;
  const KernelHook* hook = nullptr;
  HookOutputs hook_outputs = HookOutputs::values;
  std::exception_ptr error;
};

uint8_t* address(const orch_module_frame& f, const Location& at) {
  switch (at.region) {
    case Region::arena:
      return f.arena + at.offset;
    case Region::weights:
      return const_cast<uint8_t*>(f.weights + at.offset);
    case Region::input:
      return static_cast<uint8_t*>(const_cast<void*>(f.inputs[at.index]));
    case Region::output:
      return static_cast<uint8_t*>(f.outputs[at.index]);
  }
  return nullptr;
}

// A tensor over memory the run owns, valid only during the run. Its owner owns nothing but
// points at the data: a null owner would make the tensor undefined, which kernels read as an
// absent optional input (a zero point, Pad's constant_value, an RNN's initial state).
Tensor view(const TensorType& type, void* data) {
  return Tensor::wrap(type.dtype, type.shape,
                      std::shared_ptr<const void>(std::shared_ptr<const void>(), data), data);
}

int run_external(void* user, int kernel, const void* const* inputs, void* const* outputs) {
  auto* state = static_cast<RunState*>(user);
  try {
    const Module::Impl& m = *state->module;
    const runtime::ExternalKernel& ext = m.external.at(kernel);
    check(ext.kernel != nullptr, "kernel {} is not external", kernel);
    std::vector<Tensor> ins, outs;
    for (size_t i = 0; i < m.kernel_inputs[kernel].size(); ++i)
      ins.push_back(view(m.kernel_inputs[kernel][i].type, const_cast<void*>(inputs[i])));
    for (size_t i = 0; i < m.kernel_outputs[kernel].size(); ++i)
      outs.push_back(view(m.kernel_outputs[kernel][i].type, outputs[i]));
    runtime::run_external(ext, ins, outs);
    return 0;
  } catch (...) {
    state->error = std::current_exception();
    return 1;
  }
}

int after_kernel(void* user, int kernel) {
  auto* state = static_cast<RunState*>(user);
  try {
    const Module::Impl& m = *state->module;
    std::vector<Tensor> outs;
    if (state->hook_outputs == HookOutputs::values)
      for (const KernelValue& kv : m.kernel_outputs.at(kernel)) {
        void* data = address(*state->frame, kv.at);
        outs.push_back(kv.channel_block > 0
                           ? codegen::from_channel_blocks(view(kv.type, data), kv.channel_block)
                           : view(kv.type, data));
      }
    (*state->hook)(kernel, outs);
    return 0;
  } catch (...) {
    state->error = std::current_exception();
    return 1;
  }
}

// Output tensors over the context's buffers, like the arena reused from run to run once the caller
// has dropped the previous run's tensors, and not zeroed: the kernels write every element. A fresh
// buffer pays its page faults at every run, in the first kernel that writes it: Segformer-B0's
// 157 MB of logits at batch 16 cost 0.65 s a run on a 2-core VM (ONNX Runtime reuses its arena).
std::vector<Tensor> output_tensors(Context::Impl& context, const std::vector<TensorSpec>& specs) {
  context.outputs.resize(specs.size());
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorType& t = specs[i].type;
    std::shared_ptr<std::byte[]>& buffer = context.outputs[i];
    if (buffer == nullptr || buffer.use_count() > 1)
      buffer.reset(
          new std::byte[static_cast<size_t>(num_elements(t.shape)) * dtype_size(t.dtype) + 1]);
    tensors.push_back(Tensor::wrap(t.dtype, t.shape, buffer, buffer.get()));
  }
  return tensors;
}

void check_inputs(const Module::Impl& m, std::span<const Tensor> inputs) {
  check(inputs.size() == m.inputs.size(), "module '{}' takes {} inputs, got {}", m.dir,
        m.inputs.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = m.inputs[i];
    check(inputs[i].defined(), "input {} '{}' is empty", i, spec.name);
    TensorType got{inputs[i].dtype(), inputs[i].shape()};
    check(got == spec.type, "input {} '{}' is {}, the module takes {}", i, spec.name,
          format_type(got), format_type(spec.type));
  }
}

}  // namespace

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;
Context::~Context() = default;

Module::Module(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Module Module::load(const std::string& dir) {
  auto impl = std::make_shared<Impl>();
  runtime::load_module(dir, *impl);
  return Module(std::move(impl));
}

const std::vector<TensorSpec>& Module::inputs() const {
  return impl_->inputs;
}

const std::vector<TensorSpec>& Module::outputs() const {
  return impl_->outputs;
}

const std::vector<KernelSpec>& Module::kernels() const {
  return impl_->kernels;
}

Context Module::new_context() const {
  auto ctx = std::make_unique<Context::Impl>();
  ctx->module = impl_;
  size_t bytes = static_cast<size_t>(std::max<int64_t>(
      runtime::kAlignment,
      (impl_->arena_bytes + runtime::kAlignment - 1) / runtime::kAlignment * runtime::kAlignment));
  ctx->arena.reset(static_cast<uint8_t*>(std::aligned_alloc(runtime::kAlignment, bytes)));
  if (ctx->arena == nullptr) throw std::bad_alloc();
  return Context(std::move(ctx));
}

std::vector<Tensor> Module::run(std::span<const Tensor> inputs) const {
  Context context = new_context();
  return run(context, inputs);
}

std::vector<Tensor> Module::run(Context& context, std::span<const Tensor> inputs) const {
  return run(context, inputs, KernelHook());
}

std::vector<Tensor> Module::run(Context& context, std::span<const Tensor> inputs,
                                const KernelHook& hook, HookOutputs hook_outputs) const {
  const Impl& m = *impl_;
  check(context.impl_ && context.impl_->module == impl_, "the context belongs to another module");
  check_inputs(m, inputs);
  std::vector<Tensor> outputs = output_tensors(*context.impl_, m.outputs);
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (const Tensor& t : inputs) in_ptrs.push_back(t.bytes());
  for (Tensor& t : outputs) out_ptrs.push_back(t.mutable_bytes());

  orch_module_frame frame{};
  frame.failed_kernel = -1;
  RunState state{&m, &frame, &hook, hook_outputs, nullptr};
  frame.arena = context.impl_->arena.get();
  frame.weights = static_cast<const uint8_t*>(m.weights.get());
  frame.inputs = in_ptrs.data();
  frame.outputs = out_ptrs.data();
  frame.user = &state;
  frame.external = run_external;
  frame.after_kernel = hook ? after_kernel : nullptr;
  if (m.library.run(&frame) != 0) {
    int k = frame.failed_kernel;
    std::string where = k >= 0 && k < static_cast<int>(m.kernels.size())
                            ? fmt::format("kernel {} ({}: {})", m.kernels[k].name,
                                          m.kernels[k].backend, m.kernels[k].primitives)
                            : fmt::format("kernel {}", k);
    if (state.error) {
      try {
        std::rethrow_exception(state.error);
      } catch (const Error& e) {
        rethrow_with_context(e, where);
      }
    }
    std::string message = m.library.last_error();
    fail("{} failed: {}", where, message.empty() ? "(no message)" : message);
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (const std::optional<Location>& from = m.output_copy_from[i])
      std::memcpy(outputs[i].mutable_bytes(), address(frame, *from), outputs[i].nbytes());
  return outputs;
}

void Module::set_threads(int threads) const {
  check(threads >= 0, "thread count {} is negative", threads);
  impl_->library.set_threads(threads);
  // oneDNN runs on OpenMP here; its setting is found at run time so the runtime need not link it.
  using SetThreads = void (*)(int);
  auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set == nullptr) return;
  const int count = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  set(count);
  // A oneDNN kernel runs with the thread count it was built with (OpenMP's at the time):
  // setting OpenMP's alone left a module's convolutions on every core.
  if (impl_->dnnl_threads.exchange(count) == count) return;
  for (const runtime::ExternalKernel& ext : impl_->external) {
    if (ext.backend != &codegen::dnnl_backend()) continue;
    std::lock_guard<std::mutex> lock(*ext.mutex);
    ext.kernel = runtime::compile_external(ext);
  }
}

}  // namespace orch
