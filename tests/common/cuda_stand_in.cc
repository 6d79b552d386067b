#include "cuda_stand_in.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/error.h"
#include "runtime/module_format.h"
#include "runtime/module_manifest.h"

namespace orch::test {
namespace {

namespace fs = std::filesystem;
using runtime::CuDevicePtr;

// CUDA_ERROR_NOT_FOUND, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_LAUNCH_FAILED.
constexpr int kNotFound = 500;
constexpr int kCaptureUnsupported = 900;
constexpr int kLaunchFailed = 719;

struct RecordedLaunch {
  const codegen::HostFunction* function = nullptr;
  codegen::CudaLaunch launch;
  std::vector<void*> args;
};

struct Stand {
  std::vector<codegen::HostFunction> functions;
  std::unique_ptr<codegen::HostKernels> kernels;
  bool capturing = false;
  std::vector<RecordedLaunch> recorded;
  std::string fail_text;      // launches of a module whose source contains it fail
  bool module_fails = false;  // the loaded module's source does
  StandInCounts counts;
};

Stand& stand() {
  static Stand s;
  return s;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// cuModuleLoad of a module directory's cubin: the stand-in compiles the kernels.cu beside it.
int load_module(void** module, const char* path) {
  Stand& s = stand();
  fs::path dir = fs::path(path).parent_path();
  runtime::ModuleLayout layout =
      runtime::parse_manifest(read_file(dir / runtime::kManifestFile), "manifest.json");
  s.functions.clear();
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const runtime::LaunchSpec& l : layout.launches[k])
      s.functions.push_back({l.function, static_cast<int>(layout.kernel_inputs[k].size() +
                                                          layout.kernel_outputs[k].size() + 1)});
  std::string source = read_file(dir / runtime::kCudaSourceFile);
  s.module_fails = !s.fail_text.empty() && source.find(s.fail_text) != std::string::npos;
  s.kernels = std::make_unique<codegen::HostKernels>(source.substr(codegen::cuda_prelude().size()),
                                                     s.functions);
  *module = &s;
  return 0;
}

int get_function(void** function, void*, const char* name) {
  for (const codegen::HostFunction& f : stand().functions)
    if (f.name == name) {
      *function = const_cast<codegen::HostFunction*>(&f);
      return 0;
    }
  return kNotFound;
}

int run_launch(const RecordedLaunch& r) {
  Stand& s = stand();
  if (s.module_fails) return ++s.counts.failed_launches, kLaunchFailed;
  try {
    s.kernels->launch(r.launch, r.args);
    return 0;
  } catch (const Error& e) {
    s.counts.last_error = fmt::format("{}: {}", r.launch.function, e.what());
    return ++s.counts.failed_launches, kLaunchFailed;
  }
}

int launch_kernel(void* function, unsigned grid, unsigned, unsigned, unsigned block, unsigned,
                  unsigned, unsigned shared, void*, void** params, void**) {
  auto* f = static_cast<const codegen::HostFunction*>(function);
  RecordedLaunch r{f, {f->name, grid, static_cast<int>(block), shared, {}, {}}, {}};
  // A launch takes its arguments' values when it is made, captured or not.
  for (int i = 0; i < f->parameters; ++i)
    r.args.push_back(reinterpret_cast<void*>(*static_cast<CuDevicePtr*>(params[i])));
  if (!stand().capturing) return run_launch(r);
  stand().recorded.push_back(std::move(r));
  return 0;
}

int mem_alloc(CuDevicePtr* pointer, size_t bytes) {
  void* p = std::malloc(bytes);
  codegen::poison({static_cast<std::byte*>(p), bytes});  // device memory holds garbage
  *pointer = reinterpret_cast<CuDevicePtr>(p);
  return 0;
}

// A synchronous copy cannot be captured, as on a GPU.
int copy_to(CuDevicePtr to, const void* from, size_t bytes) {
  if (stand().capturing) return ++stand().counts.copies_in_capture, kCaptureUnsupported;
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return 0;
}

int copy_from(void* to, CuDevicePtr from, size_t bytes) {
  if (stand().capturing) return ++stand().counts.copies_in_capture, kCaptureUnsupported;
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return 0;
}

// The error of a launch that failed names what the stand-in saw.
int error_string(int result, const char** text) {
  *text = result == kLaunchFailed && !stand().counts.last_error.empty()
              ? stand().counts.last_error.c_str()
              : "stand-in CUDA error";
  return 0;
}

using Clock = std::chrono::steady_clock;

}  // namespace

const runtime::CudaDriver& cuda_stand_in() {
  static const runtime::CudaDriver d = [] {
    runtime::CudaDriver d;
    d.init = [](unsigned) { return 0; };
    d.device_count = [](int* n) { return *n = 1, 0; };
    d.device_get = [](int* device, int ordinal) { return *device = ordinal, 0; };
    // Compute capability 9.0 (attributes 75 and 76), as the modules are compiled for.
    d.device_attribute = [](int* v, int attribute, int) { return *v = attribute == 75 ? 9 : 0, 0; };
    d.primary_ctx_retain = [](void** c, int) { return *c = &stand(), 0; };
    d.primary_ctx_release = [](int) { return 0; };
    d.ctx_set_current = [](void*) { return 0; };
    d.ctx_synchronize = [] { return 0; };
    d.module_load = load_module;
    d.module_unload = [](void*) { return stand().kernels.reset(), 0; };
    d.module_get_function = get_function;
    d.func_set_attribute = [](void*, int, int) { return 0; };
    d.mem_alloc = mem_alloc;
    d.mem_free = [](CuDevicePtr p) { return std::free(reinterpret_cast<void*>(p)), 0; };
    d.memcpy_htod = copy_to;
    d.memcpy_dtoh = copy_from;
    d.launch_kernel = launch_kernel;
    d.event_create = [](void** e, unsigned) { return *e = new Clock::time_point(), 0; };
    d.event_record = [](void* e, void*) {
      return *static_cast<Clock::time_point*>(e) = Clock::now(), 0;
    };
    d.event_synchronize = [](void*) { return 0; };
    d.event_elapsed_ms = [](float* ms, void* a, void* b) {
      *ms = std::chrono::duration<float, std::milli>(*static_cast<Clock::time_point*>(b) -
                                                     *static_cast<Clock::time_point*>(a))
                .count();
      return 0;
    };
    d.event_destroy = [](void* e) { return delete static_cast<Clock::time_point*>(e), 0; };
    d.error_string = error_string;
    d.stream_create = [](void** s, unsigned) { return *s = &stand(), 0; };
    d.stream_destroy = [](void*) { return 0; };
    d.stream_begin_capture = [](void*, int) {
      stand().recorded.clear();
      return stand().capturing = true, 0;
    };
    d.stream_end_capture = [](void*, void** graph) {
      stand().capturing = false;
      *graph = new std::vector<RecordedLaunch>(std::move(stand().recorded));
      return 0;
    };
    d.graph_instantiate = [](void** exec, void* graph, unsigned long long) {
      return *exec = graph, 0;
    };
    d.graph_launch = [](void* exec, void*) {
      ++stand().counts.graph_launches;
      for (const RecordedLaunch& r : *static_cast<std::vector<RecordedLaunch>*>(exec))
        if (int result = run_launch(r); result != 0) return result;
      return 0;
    };
    d.graph_exec_destroy = [](void*) { return 0; };
    d.graph_destroy = [](void* g) {
      return delete static_cast<std::vector<RecordedLaunch>*>(g), 0;
    };
    return d;
  }();
  return d;
}

StandInCounts& stand_in_counts() {
  return stand().counts;
}

void reset_stand_in() {
  stand().counts = {};
  stand().fail_text.clear();
}

void stand_in_fail_launches(const std::string& text) {
  stand().fail_text = text;
}

}  // namespace orch::test
