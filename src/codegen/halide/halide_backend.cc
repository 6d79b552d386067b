// The Halide backend's entry points: JIT compile and run, AOT object files, and Halide's errors
// turned into orch::Error.
#include <time.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>

#include "codegen/halide/halide_lower.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

using halide_impl::Lowered;

// Where Debian's libhalide14-0 installs the autoscheduler plugins.
const std::string kAutoschedulerDir = "/usr/lib/x86_64-linux-gnu/halide14";

// Halide reports user errors at compile time through this reporter; it must not return.
class ThrowingReporter : public Halide::CompileTimeErrorReporter {
 public:
  void warning(const char*) override {}
  void error(const char* msg) override { throw Error(fmt::format("Halide: {}", msg)); }
};

void install_reporter() {
  static std::once_flag once;
  static ThrowingReporter reporter;
  std::call_once(once, [] { Halide::set_custom_compile_time_error_reporter(&reporter); });
}

// A JIT context that records the runtime's error message instead of printing it.
struct ErrorContext : Halide::JITUserContext {
  std::string message;
  ErrorContext() {
    handlers.custom_error = [](Halide::JITUserContext* ctx, const char* msg) {
      static_cast<ErrorContext*>(ctx)->message += msg;
    };
    handlers.custom_print = [](Halide::JITUserContext*, const char*) {};
  }
};

std::string strip(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Lowers and schedules; Halide's own exceptions become Errors.
Lowered build(const Graph& kernel, const HalideSchedule* schedule) {
  install_reporter();
  try {
    Lowered lowered = halide_impl::lower_kernel(kernel);
    HalideSchedule fallback;
    if (schedule == nullptr) fallback = default_halide_schedule(kernel);
    halide_impl::apply_schedule(lowered, kernel, schedule ? *schedule : fallback);
    return lowered;
  } catch (const Halide::Error& e) {
    fail("Halide: {}", strip(e.what()));
  }
}

Halide::Buffer<> wrap(const Tensor& t, Halide::Type type) {
  std::vector<int> sizes(t.shape().rbegin(), t.shape().rend());
  // Halide only reads input buffers; the const_cast is its API's.
  return Halide::Buffer<>(type, const_cast<std::byte*>(t.bytes()), sizes);
}

class JitKernel : public Kernel {
 public:
  JitKernel(const Graph& kernel, Lowered lowered) : lowered_(std::move(lowered)) {
    for (ValueId v : kernel.inputs()) inputs_.push_back(kernel.value(v).type);
    for (ValueId v : kernel.outputs()) outputs_.push_back(kernel.value(v).type);
  }

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    check(inputs.size() == inputs_.size(), "the kernel takes {} inputs, got {}", inputs_.size(),
          inputs.size());
    check(outputs.size() == outputs_.size(), "the kernel writes {} outputs, got {}",
          outputs_.size(), outputs.size());
    Halide::ParamMap params;
    for (size_t i = 0; i < inputs.size(); ++i) {
      TensorType t{inputs[i].dtype(), inputs[i].shape()};
      check(t == inputs_[i], "input {} is {}, the kernel takes {}", i, format_type(t),
            format_type(inputs_[i]));
      params.set(lowered_.params[i], wrap(inputs[i], halide_impl::storage_type(t.dtype)));
    }
    std::vector<Halide::Buffer<>> buffers;
    for (size_t i = 0; i < outputs.size(); ++i) {
      TensorType t{outputs[i].dtype(), outputs[i].shape()};
      check(t == outputs_[i], "output {} is {}, the kernel writes {}", i, format_type(t),
            format_type(outputs_[i]));
      buffers.push_back(wrap(outputs[i], halide_impl::storage_type(t.dtype)));
    }
    ErrorContext ctx;
    try {
      Halide::Realization r(buffers);
      lowered_.pipeline.realize(&ctx, r, Halide::Target(), params);
    } catch (const Halide::Error& e) {
      fail("Halide: {}", strip(ctx.message.empty() ? e.what() : ctx.message));
    }
    if (!ctx.message.empty()) fail("Halide: {}", strip(ctx.message));
  }

 private:
  Lowered lowered_;
  std::vector<TensorType> inputs_, outputs_;
};

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string backend_reject(const Graph& kernel) {
  return halide_reject(kernel);
}

std::unique_ptr<Kernel> backend_compile(const Graph& kernel) {
  return halide_jit(kernel).kernel;
}

}  // namespace

HalideKernel halide_jit(const Graph& kernel, const HalideSchedule* schedule) {
  auto start = std::chrono::steady_clock::now();
  double cpu_start = thread_cpu_seconds();
  Lowered lowered = build(kernel, schedule);
  try {
    lowered.pipeline.compile_jit(Halide::get_jit_target_from_environment());
  } catch (const Halide::Error& e) {
    fail("Halide: {}", strip(e.what()));
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {std::make_unique<JitKernel>(kernel, std::move(lowered)), seconds,
          thread_cpu_seconds() - cpu_start};
}

namespace {

// Loads Debian's plugin for `name` once; the autoscheduler registers itself under `name`.
void load_autoscheduler(const std::string& name) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.count(name) != 0) return;
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string path = kAutoschedulerDir + "/libautoschedule_" + lower + ".so";
  if (!std::filesystem::exists(path))
    unsupported("the Halide autoscheduler {} is not installed ({} is missing)", name, path);
  Halide::load_plugin(path);
  loaded.insert(name);
}

// Halide dims innermost first, each [0, extent).
Halide::Region estimates(const Shape& shape) {
  Halide::Region region;
  for (auto it = shape.rbegin(); it != shape.rend(); ++it)
    region.emplace_back(0, static_cast<int>(*it));
  return region;
}

}  // namespace

HalideKernel halide_jit_autoscheduled(const Graph& kernel, const std::string& autoscheduler,
                                      int cores, int64_t llc_bytes) {
  install_reporter();
  auto start = std::chrono::steady_clock::now();
  double cpu_start = thread_cpu_seconds();
  try {
    load_autoscheduler(autoscheduler);
    Lowered lowered = halide_impl::lower_kernel(kernel);
    for (size_t i = 0; i < lowered.params.size(); ++i)
      lowered.params[i].set_estimates(estimates(kernel.value(kernel.inputs()[i]).type.shape));
    for (size_t i = 0; i < lowered.outputs.size(); ++i)
      lowered.outputs[i].set_estimates(estimates(kernel.value(kernel.outputs()[i]).type.shape));
    Halide::Target target = Halide::get_jit_target_from_environment();
    // Halide's default balance (40) for a cache of the given size.
    lowered.pipeline.auto_schedule(autoscheduler, target,
                                   Halide::MachineParams(cores, llc_bytes, 40));
    lowered.pipeline.compile_jit(target);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return {std::make_unique<JitKernel>(kernel, std::move(lowered)), seconds,
            thread_cpu_seconds() - cpu_start};
  } catch (const Halide::Error& e) {
    fail("Halide {}: {}", autoscheduler, strip(e.what()));
  }
}

void halide_compile_to_object(const Graph& kernel, const std::string& path_prefix,
                              const std::string& function_name, const HalideSchedule* schedule) {
  Lowered lowered = build(kernel, schedule);
  std::vector<Halide::Argument> args(lowered.params.begin(), lowered.params.end());
  try {
    Halide::Target target = Halide::get_host_target();
    lowered.pipeline.compile_to_object(path_prefix + ".o", args, function_name, target);
    lowered.pipeline.compile_to_header(path_prefix + ".h", args, function_name, target);
  } catch (const Halide::Error& e) {
    fail("Halide: {}", strip(e.what()));
  }
}

namespace {

// Compiles (never runs: no thread pool starts) a one-value pipeline for the JIT target, which
// builds and caches Halide's JIT runtime; forked children inherit it.
void prepare_fork() {
  try {
    Halide::Func f;
    Halide::Var x;
    f(x) = x;
    f.compile_jit(Halide::get_jit_target_from_environment());
  } catch (const Halide::Error&) {
    // Only a lost speed-up: each child builds the runtime itself.
  }
}

}  // namespace

const Backend& halide_backend() {
  static const Backend backend{"halide", backend_reject, backend_compile, prepare_fork};
  return backend;
}

}  // namespace orch::codegen
