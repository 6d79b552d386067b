#include "runtime/cuda_driver.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "runtime/dl_symbols.h"

namespace orch::runtime {
namespace {

struct Loaded {
  CudaDriver driver;
  std::string why;  // "" when the driver works
};

Loaded load_driver() {
  Loaded l;
  void* handle = open_first({"libcuda.so.1", "libcuda.so"});
  if (handle == nullptr) {
    l.why = "no CUDA driver (libcuda.so.1 not found: is the NVIDIA driver installed?)";
    return l;
  }
  // The driver stays loaded: unloading it after cuInit is not supported.
  CudaDriver& d = l.driver;
  std::string missing;
  load_symbol(handle, "cuInit", d.init, missing);
  load_symbol(handle, "cuDeviceGetCount", d.device_count, missing);
  load_symbol(handle, "cuDeviceGet", d.device_get, missing);
  load_symbol(handle, "cuDeviceGetAttribute", d.device_attribute, missing);
  load_symbol(handle, "cuDevicePrimaryCtxRetain", d.primary_ctx_retain, missing);
  load_symbol(handle, "cuDevicePrimaryCtxRelease_v2", d.primary_ctx_release, missing);
  load_symbol(handle, "cuCtxSetCurrent", d.ctx_set_current, missing);
  load_symbol(handle, "cuCtxSynchronize", d.ctx_synchronize, missing);
  load_symbol(handle, "cuModuleLoad", d.module_load, missing);
  load_symbol(handle, "cuModuleUnload", d.module_unload, missing);
  load_symbol(handle, "cuModuleGetFunction", d.module_get_function, missing);
  load_symbol(handle, "cuFuncSetAttribute", d.func_set_attribute, missing);
  load_symbol(handle, "cuMemAlloc_v2", d.mem_alloc, missing);
  load_symbol(handle, "cuMemFree_v2", d.mem_free, missing);
  load_symbol(handle, "cuMemcpyHtoD_v2", d.memcpy_htod, missing);
  load_symbol(handle, "cuMemcpyDtoH_v2", d.memcpy_dtoh, missing);
  load_symbol(handle, "cuLaunchKernel", d.launch_kernel, missing);
  load_symbol(handle, "cuEventCreate", d.event_create, missing);
  load_symbol(handle, "cuEventRecord", d.event_record, missing);
  load_symbol(handle, "cuEventSynchronize", d.event_synchronize, missing);
  load_symbol(handle, "cuEventElapsedTime", d.event_elapsed_ms, missing);
  load_symbol(handle, "cuEventDestroy_v2", d.event_destroy, missing);
  load_symbol(handle, "cuGetErrorString", d.error_string, missing);
  // Streams and graphs: in every driver since CUDA 11.4 (cuGraphInstantiateWithFlags).
  load_symbol(handle, "cuStreamCreate", d.stream_create, missing);
  load_symbol(handle, "cuStreamDestroy_v2", d.stream_destroy, missing);
  load_symbol(handle, "cuStreamBeginCapture_v2", d.stream_begin_capture, missing);
  load_symbol(handle, "cuStreamEndCapture", d.stream_end_capture, missing);
  load_symbol(handle, "cuGraphInstantiateWithFlags", d.graph_instantiate, missing);
  load_symbol(handle, "cuGraphLaunch", d.graph_launch, missing);
  load_symbol(handle, "cuGraphExecDestroy", d.graph_exec_destroy, missing);
  load_symbol(handle, "cuGraphDestroy", d.graph_destroy, missing);
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
