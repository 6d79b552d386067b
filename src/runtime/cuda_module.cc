#include "runtime/cuda_module.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "runtime/cublas.h"
#include "runtime/cuda_driver.h"
#include "runtime/cudnn.h"
#include "runtime/external_kernel.h"
#include "runtime/module_manifest.h"

namespace orch::runtime {
namespace {

namespace fs = std::filesystem;

// Compute capability attributes of cuDeviceGetAttribute (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*).
constexpr int kAttributeCcMajor = 75;
constexpr int kAttributeCcMinor = 76;
// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: other threads' CUDA calls may go on during a capture.
constexpr int kCaptureThreadLocal = 1;
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, and what a function may use without setting it.
constexpr int kMaxDynamicSharedAttribute = 8;
constexpr int64_t kDefaultDynamicShared = 48 * 1024;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "{}: cannot read", path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One device allocation, freed with its owner.
struct DeviceBuffer {
  const CudaDriver* driver = nullptr;
  CuDevicePtr pointer = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const CudaDriver& d, int64_t bytes, std::string_view what) : driver(&d) {
    if (bytes > 0) cuda_check(d, d.mem_alloc(&pointer, static_cast<size_t>(bytes)), what);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : driver(o.driver), pointer(o.pointer) { o.pointer = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(driver, o.driver);
    std::swap(pointer, o.pointer);
    return *this;
  }
  ~DeviceBuffer() {
    if (pointer != 0) driver->mem_free(pointer);
  }
};

// A CUDA event, destroyed with its owner.
struct Event {
  const CudaDriver& d;
  void* event = nullptr;
  explicit Event(const CudaDriver& driver) : d(driver) {
    cuda_check(d, d.event_create(&event, 0), "creating an event");
  }
  ~Event() { d.event_destroy(event); }
};

}  // namespace

std::string cuda_unavailable() {
  std::string why;
  cuda_driver(&why);
  return why;
}

bool is_cuda_module(const std::string& dir) {
  fs::path manifest = fs::path(dir) / kManifestFile;
  std::ifstream in(manifest, std::ios::binary);
  if (!in.good()) return false;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parse_manifest(text, manifest.string()).cuda;
  } catch (const Error&) {
    return false;
  }
}

struct CudaModule::Impl {
  const CudaDriver* d = nullptr;
  int device = 0;
  void* context = nullptr;
  void* module = nullptr;
  ModuleLayout layout;
  std::vector<std::vector<void*>> functions;  // per kernel, per launch
  DeviceBuffer arena, weights, scratch;
  std::vector<DeviceBuffer> inputs, outputs;
  // A blocking stream (flags 0): it waits for the synchronous copies, which run on the legacy
  // default stream, and they for it; a capture needs a stream other than that one.
  void* stream = nullptr;
  void* graph = nullptr;  // the launch sequence, captured at the first graph launch
  void* graph_exec = nullptr;
  bool use_graph = false;
  std::unique_ptr<Cublas> cublas;                   // when a kernel is a GEMM
  std::unique_ptr<Cudnn> cudnn;                     // when a kernel is a convolution
  std::vector<std::unique_ptr<Cudnn::Conv>> convs;  // per kernel: null unless a convolution
  DeviceBuffer workspace;                           // the largest any convolution needs
  // Per kernel: built for a host kernel (an op the CUDA generator lacks), its weights bound to
  // host_weights; empty otherwise.
  std::vector<ExternalKernel> external;
  std::shared_ptr<const void> host_weights;
  bool any_host_kernel = false;

  ~Impl() {
    if (context == nullptr) return;
    // Unloading and freeing act on the current context, which another module may have set.
    d->ctx_set_current(context);
    if (graph_exec != nullptr) d->graph_exec_destroy(graph_exec);
    if (graph != nullptr) d->graph_destroy(graph);
    cublas.reset();
    convs.clear();
    cudnn.reset();
    if (stream != nullptr) d->stream_destroy(stream);
    if (module != nullptr) d->module_unload(module);
    arena = {}, weights = {}, scratch = {}, workspace = {};
    inputs.clear(), outputs.clear();
    d->primary_ctx_release(device);
  }

  CuDevicePtr at(const Location& l) const {
    switch (l.region) {
      case Region::arena:
        return arena.pointer + static_cast<CuDevicePtr>(l.offset);
      case Region::weights:
        return weights.pointer + static_cast<CuDevicePtr>(l.offset);
      case Region::input:
        return inputs[l.index].pointer;
      case Region::output:
        return outputs[l.index].pointer;
    }
    fail("unknown region");
  }

  // A host kernel: its inputs copied from the GPU, the reference backend's results copied back.
  // The synchronous copies wait for the stream's work before them, and it for them.
  void run_on_host(size_t k) {
    std::vector<Tensor> ins, outs;
    // An earlier kernel's fault surfaces at the first copy.
    std::string copying =
        fmt::format("copying the inputs of host kernel {}", layout.kernels[k].name);
    for (const KernelValue& in : layout.kernel_inputs[k])
      ins.push_back(copy_back(in.type, at(in.at), copying));
    for (const KernelValue& out : layout.kernel_outputs[k])
      outs.emplace_back(out.type.dtype, out.type.shape);
    run_external(external[k], ins, outs);
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].nbytes() > 0)
        cuda_check(
            *d,
            d->memcpy_htod(at(layout.kernel_outputs[k][i].at), outs[i].bytes(), outs[i].nbytes()),
            fmt::format("copying the results of host kernel {}", layout.kernels[k].name));
  }

  void launch_kernel(size_t k) {
    if (external[k].kernel) return run_on_host(k);
    // cuLaunchKernel takes a pointer to each parameter: here, device pointers.
    std::vector<CuDevicePtr> pointers;
    for (const KernelValue& in : layout.kernel_inputs[k]) pointers.push_back(at(in.at));
    for (const KernelValue& out : layout.kernel_outputs[k]) pointers.push_back(at(out.at));
    pointers.push_back(scratch.pointer);
    std::vector<void*> params;
    for (CuDevicePtr& p : pointers) params.push_back(&p);
    for (size_t i = 0; i < layout.launches[k].size(); ++i) {
      const LaunchSpec& l = layout.launches[k][i];
      if (l.gemm) {
        codegen::CublasGemmArgs g = codegen::cublas_arguments(*l.gemm);
        CuDevicePtr operands[] = {pointers[l.gemm->a], pointers[l.gemm->b]};
        cublas->sgemm(g, operands[g.first], operands[g.second],
                      pointers[layout.kernel_inputs[k].size()], layout.kernels[k].name);
        continue;
      }
      if (l.conv) {
        cudnn->forward(*convs[k], pointers[l.conv->x], pointers[l.conv->w],
                       l.conv->bias < 0 ? 0 : pointers[l.conv->bias],
                       pointers[layout.kernel_inputs[k].size()], workspace.pointer,
                       layout.kernels[k].name);
        continue;
      }
      cuda_check(
          *d,
          d->launch_kernel(functions[k][i], static_cast<unsigned>(l.blocks), 1, 1,
                           static_cast<unsigned>(l.threads), 1, 1,
                           static_cast<unsigned>(l.shared_bytes), stream, params.data(), nullptr),
          fmt::format("launching {}", l.function));
    }
  }

  void launch_all() {
    for (size_t k = 0; k < layout.kernels.size(); ++k) launch_kernel(k);
  }

  void capture() {
    // cuBLAS allocates its workspace at its first call on a handle, and cuDNN may load its
    // kernels at their first use, which a capture forbids: one plain run first.
    if (cublas || cudnn) launch_all();
    cuda_check(*d, d->stream_begin_capture(stream, kCaptureThreadLocal), "capturing a CUDA graph");
    try {
      launch_all();
    } catch (const Error&) {
      void* partial = nullptr;  // a capture must be ended, even a failed one
      d->stream_end_capture(stream, &partial);
      if (partial != nullptr) d->graph_destroy(partial);
      throw;
    }
    cuda_check(*d, d->stream_end_capture(stream, &graph), "capturing a CUDA graph");
    cuda_check(*d, d->graph_instantiate(&graph_exec, graph, 0), "instantiating the CUDA graph");
  }

  // The plan's launches on the module's stream: one by one, or as the graph captured from them.
  // A plan with a host kernel runs one by one: its synchronous copies cannot be captured.
  void launch_plan(bool as_graph) {
    if (!as_graph || any_host_kernel) return launch_all();
    if (graph_exec == nullptr) capture();
    cuda_check(*d, d->graph_launch(graph_exec, stream), "launching the CUDA graph");
  }

  Tensor copy_back(const TensorType& type, CuDevicePtr from,
                   std::string_view what = "copying a result back") const {
    Tensor t(type.dtype, type.shape);
    if (t.nbytes() > 0) cuda_check(*d, d->memcpy_dtoh(t.mutable_bytes(), from, t.nbytes()), what);
    return t;
  }
};

CudaModule::CudaModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaModule::CudaModule(CudaModule&&) noexcept = default;
CudaModule& CudaModule::operator=(CudaModule&&) noexcept = default;
CudaModule::~CudaModule() = default;

CudaModule CudaModule::load(const std::string& dir, int device) {
  std::string why;
  const CudaDriver* d = cuda_driver(&why);
  if (d == nullptr) {
    fs::path manifest = fs::path(dir) / kManifestFile;
    ModuleLayout layout = parse_manifest(read_file(manifest), manifest.string());
    check(layout.cuda, "{}: a CPU module; load it with orch::Module", dir);
    fail("{}: compiled for CUDA ({}), but this machine cannot run it: {}", dir, layout.target, why);
  }
  return load(dir, *d, device);
}

CudaModule CudaModule::load(const std::string& dir, const CudaDriver& driver, int device) {
  fs::path root(dir);
  fs::path manifest = root / kManifestFile;
  ModuleLayout layout = parse_manifest(read_file(manifest), manifest.string());
  check(layout.cuda, "{}: a CPU module; load it with orch::Module", dir);
  const CudaDriver* d = &driver;
  auto impl = std::make_unique<Impl>();
  impl->d = d;
  int dev = 0, major = 0, minor = 0;
  cuda_check(*d, d->device_get(&dev, device), fmt::format("GPU {}", device));
  cuda_check(*d, d->device_attribute(&major, kAttributeCcMajor, dev), "compute capability");
  cuda_check(*d, d->device_attribute(&minor, kAttributeCcMinor, dev), "compute capability");
  // A cubin runs only on its own architecture's major version, at the same or a later minor.
  int arch = 0;
  bool parsed = std::sscanf(layout.target.c_str(), "sm_%d", &arch) == 1;
  check(parsed && arch / 10 == major && arch % 10 <= minor,
        "{}: compiled for {}, GPU {} is sm_{}{}: compile it with --gpu for this GPU", dir,
        layout.target, device, major, minor);
  impl->device = dev;
  cuda_check(*d, d->primary_ctx_retain(&impl->context, dev), "creating a CUDA context");
  cuda_check(*d, d->ctx_set_current(impl->context), "creating a CUDA context");
  cuda_check(*d, d->stream_create(&impl->stream, 0), "creating a CUDA stream");
  cuda_check(*d, d->module_load(&impl->module, (root / layout.library_file).c_str()),
             fmt::format("{}: loading {}", dir, layout.library_file));
  int64_t workspace_bytes = 0;
  for (size_t k = 0; k < layout.kernels.size(); ++k) {
    impl->functions.emplace_back();
    impl->convs.emplace_back();
    for (const LaunchSpec& l : layout.launches[k]) {
      void* function = nullptr;
      if (l.gemm) {
        if (!impl->cublas) impl->cublas = std::make_unique<Cublas>(impl->stream);
        impl->functions.back().push_back(nullptr);
        continue;
      }
      if (l.conv) {
        if (!impl->cudnn) impl->cudnn = std::make_unique<Cudnn>(impl->stream);
        const std::vector<KernelValue>& in = layout.kernel_inputs[k];
        impl->convs.back() = impl->cudnn->prepare(
            codegen::cudnn_arguments(*l.conv, in[l.conv->x].type.shape, in[l.conv->w].type.shape,
                                     layout.kernel_outputs[k][0].type.shape),
            layout.kernels[k].name);
        workspace_bytes =
            std::max(workspace_bytes, static_cast<int64_t>(impl->convs.back()->workspace_bytes()));
        impl->functions.back().push_back(nullptr);
        continue;
      }
      cuda_check(*d, d->module_get_function(&function, impl->module, l.function.c_str()),
                 fmt::format("{}: kernel {} function {}", dir, layout.kernels[k].name, l.function));
      // Dynamic shared memory above the default 48 KiB per block needs the function's opt-in.
      if (l.shared_bytes > kDefaultDynamicShared)
        cuda_check(*d,
                   d->func_set_attribute(function, kMaxDynamicSharedAttribute,
                                         static_cast<int>(l.shared_bytes)),
                   fmt::format("{}: kernel {} function {}: {} bytes of shared memory per block",
                               dir, layout.kernels[k].name, l.function, l.shared_bytes));
      impl->functions.back().push_back(function);
    }
  }
  std::string weights = read_file(root / layout.weights_file);
  check(static_cast<int64_t>(weights.size()) == layout.weights_bytes,
        "{}: {} has {} bytes, the manifest says {}", dir, layout.weights_file, weights.size(),
        layout.weights_bytes);
  impl->weights = DeviceBuffer(*d, layout.weights_bytes, "allocating the weights");
  if (!weights.empty())
    cuda_check(*d, d->memcpy_htod(impl->weights.pointer, weights.data(), weights.size()),
               "copying the weights");
  impl->external.resize(layout.kernels.size());
  for (size_t k = 0; k < layout.kernels.size(); ++k) {
    if (!layout.external[k]) continue;
    // Mapped, not read: only the pages of the host kernels' weights are ever loaded.
    if (!impl->host_weights)
      impl->host_weights = map_weights(root / layout.weights_file, layout.weights_bytes);
    build_external(layout.kernels[k], *layout.external[k], root, impl->host_weights,
                   impl->external[k]);
    impl->any_host_kernel = true;
  }
  impl->arena = DeviceBuffer(*d, layout.arena_bytes, "allocating the arena");
  impl->workspace = DeviceBuffer(*d, workspace_bytes, "allocating cuDNN's workspace");
  impl->scratch = DeviceBuffer(*d, layout.scratch_bytes, "allocating the scratch buffer");
  for (const TensorSpec& s : layout.inputs)
    impl->inputs.emplace_back(
        *d, static_cast<int64_t>(num_elements(s.type.shape) * dtype_size(s.type.dtype)),
        "allocating input " + s.name);
  for (const TensorSpec& s : layout.outputs)
    impl->outputs.emplace_back(
        *d, static_cast<int64_t>(num_elements(s.type.shape) * dtype_size(s.type.dtype)),
        "allocating output " + s.name);
  impl->layout = std::move(layout);
  return CudaModule(std::move(impl));
}

const std::vector<TensorSpec>& CudaModule::inputs() const {
  return impl_->layout.inputs;
}
const std::vector<TensorSpec>& CudaModule::outputs() const {
  return impl_->layout.outputs;
}
const std::vector<KernelSpec>& CudaModule::kernels() const {
  return impl_->layout.kernels;
}

bool CudaModule::has_host_kernels() const {
  return impl_->any_host_kernel;
}

void CudaModule::set_graph(bool on) {
  impl_->use_graph = on;
}

std::vector<Tensor> CudaModule::run(std::span<const Tensor> inputs,
                                    const KernelHook& after_kernel) {
  Impl& m = *impl_;
  const CudaDriver& d = *m.d;
  cuda_check(d, d.ctx_set_current(m.context), "selecting the CUDA context");
  check(inputs.size() == m.layout.inputs.size(), "{} inputs given, the module takes {}",
        inputs.size(), m.layout.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& s = m.layout.inputs[i];
    check(inputs[i].dtype() == s.type.dtype && inputs[i].shape() == s.type.shape,
          "input '{}' is {}, the module takes {}", s.name,
          format_type({inputs[i].dtype(), inputs[i].shape()}), format_type(s.type));
    if (inputs[i].nbytes() > 0)
      cuda_check(d, d.memcpy_htod(m.inputs[i].pointer, inputs[i].bytes(), inputs[i].nbytes()),
                 "copying input " + s.name);
  }
  if (!after_kernel) m.launch_plan(m.use_graph);
  for (size_t k = 0; after_kernel && k < m.layout.kernels.size(); ++k) {
    m.launch_kernel(k);
    cuda_check(d, d.ctx_synchronize(), fmt::format("running kernel {}", m.layout.kernels[k].name));
    std::vector<Tensor> outs;
    for (const KernelValue& out : m.layout.kernel_outputs[k])
      outs.push_back(m.copy_back(out.type, m.at(out.at)));
    after_kernel(static_cast<int>(k), outs);
  }
  cuda_check(d, d.ctx_synchronize(), "running the module");
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < m.layout.outputs.size(); ++i) {
    const std::optional<Location>& from = m.layout.output_copy_from[i];
    outputs.push_back(
        m.copy_back(m.layout.outputs[i].type, from ? m.at(*from) : m.outputs[i].pointer));
  }
  return outputs;
}

double CudaModule::median_ms(int repeat, bool graph) {
  check(repeat >= 1, "median_ms: repeat must be at least 1");
  Impl& m = *impl_;
  const CudaDriver& d = *m.d;
  cuda_check(d, d.ctx_set_current(m.context), "selecting the CUDA context");
  Event start(d), end(d);
  std::vector<double> ms;
  for (int r = 0; r <= repeat; ++r) {
    cuda_check(d, d.event_record(start.event, m.stream), "recording an event");
    m.launch_plan(graph);
    cuda_check(d, d.event_record(end.event, m.stream), "recording an event");
    cuda_check(d, d.event_synchronize(end.event), "running the module");
    float elapsed = 0;
    cuda_check(d, d.event_elapsed_ms(&elapsed, start.event, end.event), "reading an event");
    if (r > 0) ms.push_back(elapsed);  // the first run warms up
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
}

std::vector<double> CudaModule::back_to_back_ms(int repeat) {
  check(repeat >= 1, "back_to_back_ms: repeat must be at least 1");
  Impl& m = *impl_;
  const CudaDriver& d = *m.d;
  cuda_check(d, d.ctx_set_current(m.context), "selecting the CUDA context");
  m.launch_plan(false);                        // the warm-up
  std::vector<std::unique_ptr<Event>> events;  // events[r] before run r, events[repeat] after all
  for (int r = 0; r <= repeat; ++r) events.push_back(std::make_unique<Event>(d));
  cuda_check(d, d.event_record(events[0]->event, m.stream), "recording an event");
  for (int r = 0; r < repeat; ++r) {
    m.launch_plan(false);
    cuda_check(d, d.event_record(events[static_cast<size_t>(r) + 1]->event, m.stream),
               "recording an event");
  }
  cuda_check(d, d.event_synchronize(events.back()->event), "running the module");
  std::vector<double> ms;
  for (size_t r = 0; r < static_cast<size_t>(repeat); ++r) {
    float elapsed = 0;
    cuda_check(d, d.event_elapsed_ms(&elapsed, events[r]->event, events[r + 1]->event),
               "reading an event");
    ms.push_back(elapsed);
  }
  return ms;
}

std::vector<std::vector<double>> CudaModule::kernel_ms(int repeat) {
  check(repeat >= 1, "kernel_ms: repeat must be at least 1");
  Impl& m = *impl_;
  const CudaDriver& d = *m.d;
  cuda_check(d, d.ctx_set_current(m.context), "selecting the CUDA context");
  const size_t n = m.layout.kernels.size();
  std::vector<std::unique_ptr<Event>> events;  // events[k] before kernel k, events[n] after all
  for (size_t k = 0; k <= n; ++k) events.push_back(std::make_unique<Event>(d));
  std::vector<std::vector<double>> runs;
  for (int r = 0; r <= repeat; ++r) {
    cuda_check(d, d.event_record(events[0]->event, m.stream), "recording an event");
    for (size_t k = 0; k < n; ++k) {
      m.launch_kernel(k);
      cuda_check(d, d.event_record(events[k + 1]->event, m.stream), "recording an event");
    }
    cuda_check(d, d.event_synchronize(events[n]->event), "running the module");
    if (r == 0) continue;  // the first run warms up
    std::vector<double>& ms = runs.emplace_back(n);
    for (size_t k = 0; k < n; ++k) {
      float elapsed = 0;
      cuda_check(d, d.event_elapsed_ms(&elapsed, events[k]->event, events[k + 1]->event),
                 "reading an event");
      ms[k] = elapsed;
    }
  }
  return runs;
}

}  // namespace orch::runtime
