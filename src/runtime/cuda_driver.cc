#include "runtime/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include "ir/error.h"

namespace orch::runtime {
namespace {

template <typename Fn>
bool load(void* handle, const char* symbol, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  if (fn == nullptr && missing.empty()) missing = symbol;
  return fn != nullptr;
}

struct Loaded {
  CudaDriver driver;
  std::string why;  // "" when the driver works
};

Loaded load_driver() {
  Loaded l;
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) handle = dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    l.why = "no CUDA driver (libcuda.so.1 not found: is the NVIDIA driver installed?)";
    return l;
  }
  // The driver stays loaded: unloading it after cuInit is not supported.
  CudaDriver& d = l.driver;
  std::string missing;
  load(handle, "cuInit", d.init, missing);
  load(handle, "cuDeviceGetCount", d.device_count, missing);
  load(handle, "cuDeviceGet", d.device_get, missing);
  load(handle, "cuDeviceGetAttribute", d.device_attribute, missing);
  load(handle, "cuDevicePrimaryCtxRetain", d.primary_ctx_retain, missing);
  load(handle, "cuDevicePrimaryCtxRelease_v2", d.primary_ctx_release, missing);
  load(handle, "cuCtxSetCurrent", d.ctx_set_current, missing);
  load(handle, "cuCtxSynchronize", d.ctx_synchronize, missing);
  load(handle, "cuModuleLoadData", d.module_load_data, missing);
  load(handle, "cuModuleUnload", d.module_unload, missing);
  load(handle, "cuModuleGetFunction", d.module_get_function, missing);
  load(handle, "cuMemAlloc_v2", d.mem_alloc, missing);
  load(handle, "cuMemFree_v2", d.mem_free, missing);
  load(handle, "cuMemcpyHtoD_v2", d.memcpy_htod, missing);
  load(handle, "cuMemcpyDtoH_v2", d.memcpy_dtoh, missing);
  load(handle, "cuLaunchKernel", d.launch_kernel, missing);
  load(handle, "cuEventCreate", d.event_create, missing);
  load(handle, "cuEventRecord", d.event_record, missing);
  load(handle, "cuEventSynchronize", d.event_synchronize, missing);
  load(handle, "cuEventElapsedTime", d.event_elapsed_ms, missing);
  load(handle, "cuEventDestroy_v2", d.event_destroy, missing);
  load(handle, "cuGetErrorString", d.error_string, missing);
  // Streams and graphs: in every driver since CUDA 11.4 (cuGraphInstantiateWithFlags).
  load(handle, "cuStreamCreate", d.stream_create, missing);
  load(handle, "cuStreamDestroy_v2", d.stream_destroy, missing);
  load(handle, "cuStreamBeginCapture_v2", d.stream_begin_capture, missing);
  load(handle, "cuStreamEndCapture", d.stream_end_capture, missing);
  load(handle, "cuGraphInstantiateWithFlags", d.graph_instantiate, missing);
  load(handle, "cuGraphLaunch", d.graph_launch, missing);
  load(handle, "cuGraphExecDestroy", d.graph_exec_destroy, missing);
  load(handle, "cuGraphDestroy", d.graph_destroy, missing);
  if (!missing.empty()) {
    l.why = fmt::format("the CUDA driver lacks {}", missing);
    return l;
  }
  int count = 0;
  if (int r = d.init(0); r != 0) {
    const char* text = nullptr;
    d.error_string(r, &text);
    l.why = fmt::format("cuInit failed: CUDA error {} ({})", r, text ? text : "unknown");
    return l;
  }
  if (d.device_count(&count) != 0 || count == 0) l.why = "the CUDA driver sees no GPU";
  return l;
}

}  // namespace

const CudaDriver* cuda_driver(std::string* why) {
  static const Loaded loaded = load_driver();
  if (why != nullptr) *why = loaded.why;
  return loaded.why.empty() ? &loaded.driver : nullptr;
}

void cuda_check(const CudaDriver& driver, int result, std::string_view what) {
  if (result == 0) return;
  const char* text = nullptr;
  driver.error_string(result, &text);
  fail("{}: CUDA error {} ({})", what, result, text ? text : "unknown");
}

}  // namespace orch::runtime
