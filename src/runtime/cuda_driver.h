// The CUDA driver API, opened at run time (libcuda.so.1 comes with the NVIDIA driver, not with
// the toolkit): orch builds and runs CPU modules on machines without it. Only the entry points
// the CUDA module runtime calls; CUresult is an int, handles are opaque pointers.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace orch::runtime {

using CuDevicePtr = unsigned long long;

struct CudaDriver {
  int (*init)(unsigned flags) = nullptr;
  int (*device_count)(int* count) = nullptr;
  int (*device_get)(int* device, int ordinal) = nullptr;
  int (*device_attribute)(int* value, int attribute, int device) = nullptr;
  int (*primary_ctx_retain)(void** context, int device) = nullptr;
  int (*primary_ctx_release)(int device) = nullptr;
  int (*ctx_set_current)(void* context) = nullptr;
  int (*ctx_synchronize)() = nullptr;
  int (*module_load)(void** module, const char* path) = nullptr;
  int (*module_unload)(void* module) = nullptr;
  int (*module_get_function)(void** function, void* module, const char* name) = nullptr;
  int (*func_set_attribute)(void* function, int attribute, int value) = nullptr;
  int (*mem_alloc)(CuDevicePtr* pointer, size_t bytes) = nullptr;
  int (*mem_free)(CuDevicePtr pointer) = nullptr;
  int (*memcpy_htod)(CuDevicePtr to, const void* from, size_t bytes) = nullptr;
  int (*memcpy_dtoh)(void* to, CuDevicePtr from, size_t bytes) = nullptr;
  int (*launch_kernel)(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                       unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                       void* stream, void** params, void** extra) = nullptr;
  int (*event_create)(void** event, unsigned flags) = nullptr;
  int (*event_record)(void* event, void* stream) = nullptr;
  int (*event_synchronize)(void* event) = nullptr;
  int (*event_elapsed_ms)(float* ms, void* start, void* end) = nullptr;
  int (*event_destroy)(void* event) = nullptr;
  int (*error_string)(int result, const char** text) = nullptr;
  int (*stream_create)(void** stream, unsigned flags) = nullptr;
  int (*stream_destroy)(void* stream) = nullptr;
  int (*stream_begin_capture)(void* stream, int mode) = nullptr;
  int (*stream_end_capture)(void* stream, void** graph) = nullptr;
  int (*graph_instantiate)(void** graph_exec, void* graph, unsigned long long flags) = nullptr;
  int (*graph_launch)(void* graph_exec, void* stream) = nullptr;
  int (*graph_exec_destroy)(void* graph_exec) = nullptr;
  int (*graph_destroy)(void* graph) = nullptr;
};

/// The driver, loaded and initialized once per process; nullptr when there is none, with the
/// reason in `why` (no libcuda, a missing entry point, cuInit failing: the toolkit's stub
/// library, or no GPU).
const CudaDriver* cuda_driver(std::string* why);

/// Throws Error "`what`: CUDA error N (its name)" unless `result` is 0 (CUDA_SUCCESS).
void cuda_check(const CudaDriver& driver, int result, std::string_view what);

}  // namespace orch::runtime
