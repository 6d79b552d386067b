#include "profile/measure.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_backend.h"
#include "codegen/reference_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "schedule/search.h"

namespace orch::profile {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<Tensor> allocate_outputs(const Graph& kernel) {
  std::vector<Tensor> outputs;
  for (ValueId v : kernel.outputs())
    outputs.emplace_back(kernel.value(v).type.dtype, kernel.value(v).type.shape);
  return outputs;
}

// Writes every cache line of `buffer` (outside the timing): evicts the kernel's data.
void flush_caches(std::vector<char>& buffer) {
  for (size_t i = 0; i < buffer.size(); i += 64) buffer[i] = static_cast<char>(buffer[i] + 1);
}

std::unique_ptr<codegen::Kernel> compile_with(const Graph& kernel, const codegen::Backend& backend,
                                              const std::string& config) {
  if (config.empty()) return backend.compile(kernel);
  if (backend.name == "halide") {
    codegen::HalideSchedule schedule = codegen::halide_schedule_from_text(config);
    return codegen::halide_jit(kernel, &schedule).kernel;
  }
  if (backend.name == "dnnl") return codegen::dnnl_compile(kernel, config);
  fail("backend {} has no configuration '{}'", backend.name, config);
}

}  // namespace

BackendSet default_backends() {
  return {{&codegen::dnnl_backend(), &codegen::halide_backend()},
          &codegen::reference_backend(),
          &codegen::dnnl_backend()};
}

std::vector<std::string> halide_configs(const Graph& kernel, const schedule::Machine& machine,
                                        int count) {
  std::vector<std::string> out;
  if (count <= 0) return out;
  schedule::TileGraph tg = schedule::make_tile_graph(kernel);
  schedule::SearchResult result = schedule::search_tiles(tg, machine, {.top_k = count});
  for (const schedule::ScoredConfig& c : result.configs) {
    std::string text = codegen::halide_schedule_to_text(
        codegen::halide_schedule_from_tile_config(kernel, c.config));
    if (!text.empty() && std::find(out.begin(), out.end(), text) == out.end()) out.push_back(text);
  }
  return out;
}

bool narrow_convolution(const Graph& kernel) {
  constexpr int64_t kNarrow = 8;
  for (const Node& n : kernel.nodes()) {
    // A depthwise convolution's output channels are its groups, which oneDNN vectorizes.
    if (n.op != "prim.Conv" || attr_int(n.attrs, "group", 1) != 1) continue;
    const Shape& out = kernel.value(n.outputs[0]).type.shape;
    if (out.size() >= 3 && out[1] < kNarrow) return true;
  }
  return false;
}

std::vector<const codegen::Backend*> accepting_backends(const BackendSet& set,
                                                        const Graph& kernel) {
  std::vector<const codegen::Backend*> out;
  const codegen::Backend* library = set.library_decides;
  bool library_kind =
      (kernel.num_nodes() == 1 || linear_primitives(kernel) > 1) && !narrow_convolution(kernel);
  if (library != nullptr && library_kind && library->reject(kernel).empty()) return {library};
  for (const codegen::Backend* b : set.backends)
    if (b->reject(kernel).empty()) out.push_back(b);
  if (out.empty() && set.fallback) out.push_back(set.fallback);
  return out;
}

std::string compare_outputs(const Graph& kernel, std::span<const Tensor> got,
                            std::span<const Tensor> want, double rtol, double atol) {
  if (got.size() != want.size())
    return fmt::format("{} outputs computed, {} expected", got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::string name = i < kernel.outputs().size() ? kernel.value(kernel.outputs()[i]).name : "";
    if (got[i].shape() != want[i].shape() || got[i].dtype() != want[i].dtype())
      return fmt::format("output {} '{}' has the wrong type", i, name);
    std::vector<double> a = got[i].to_doubles();
    std::vector<double> b = want[i].to_doubles();
    double worst = 0;
    int64_t at = -1;
    for (size_t k = 0; k < a.size(); ++k) {
      if (close_enough(a[k], b[k], rtol, atol)) continue;
      double err = std::abs(a[k] - b[k]);
      if (at < 0 || !(err <= worst)) {
        worst = err;
        at = static_cast<int64_t>(k);
      }
    }
    if (at >= 0)
      return fmt::format("output {} '{}': max error {:.3g} at element {} (got {:.6g}, want {:.6g})",
                         i, name, worst, at, a[at], b[at]);
  }
  return "";
}

PreparedKernel prepare(const Graph& kernel, const codegen::Backend& backend,
                       const std::string& config, std::span<const Tensor> inputs,
                       std::span<const Tensor> reference, const MeasureOptions& options) {
  PreparedKernel p;
  p.result.backend = std::string(backend.name);
  p.result.config = config;
  p.inputs.assign(inputs.begin(), inputs.end());
  Clock::time_point start = Clock::now();
  try {
    p.kernel = compile_with(kernel, backend, config);
  } catch (const std::exception& e) {
    p.result.reason = fmt::format("compile: {}", e.what());
    return p;
  }
  p.result.compile_s = seconds_since(start);
  std::vector<Tensor> outputs = allocate_outputs(kernel);
  try {
    p.kernel->run(p.inputs, outputs);
  } catch (const std::exception& e) {
    p.result.reason = fmt::format("run: {}", e.what());
    p.kernel.reset();
    return p;
  }
  std::string mismatch = compare_outputs(kernel, outputs, reference, options.rtol, options.atol);
  if (!mismatch.empty()) {
    p.result.reason = fmt::format("mismatch with the interpreter: {}", mismatch);
    p.kernel.reset();
    return p;
  }
  p.result.ok = true;
  return p;
}

// Device times of a kernel that times itself (Kernel::device_times_us): one run sizes the batch
// that fills the budget. Empty for a host kernel.
std::vector<double> device_times(codegen::Kernel& kernel, const MeasureOptions& options) {
  std::vector<double> us = kernel.device_times_us(1);
  if (us.empty()) return us;
  double runs = options.budget_ms * 1e3 / std::max(us.front(), 1e-3);
  int more = static_cast<int>(std::clamp(runs, static_cast<double>(options.min_runs),
                                         static_cast<double>(options.max_runs)));
  return kernel.device_times_us(more);
}

void time_kernel(PreparedKernel& p, const Graph& kernel, const MeasureOptions& options) {
  if (!p.kernel) return;
  std::vector<Tensor> outputs = allocate_outputs(kernel);
  std::vector<double> us;
  std::vector<char> flush(static_cast<size_t>(std::max<int64_t>(options.flush_bytes, 0)));
  try {
    p.kernel->run(p.inputs, outputs);  // warm-up
    us = device_times(*p.kernel, options);
    const bool on_device = !us.empty();
    double timed_s = 0;  // the budget counts timed runs, not flushes
    while (!on_device && static_cast<int>(us.size()) < options.max_runs &&
           (static_cast<int>(us.size()) < options.min_runs || timed_s * 1e3 < options.budget_ms)) {
      if (!flush.empty()) flush_caches(flush);
      Clock::time_point t = Clock::now();
      p.kernel->run(p.inputs, outputs);
      double s = seconds_since(t);
      timed_s += s;
      us.push_back(s * 1e6);
    }
  } catch (const std::exception& e) {
    p.result.ok = false;
    p.result.reason = fmt::format("run: {}", e.what());
    return;
  }
  std::sort(us.begin(), us.end());
  p.result.runs = static_cast<int>(us.size());
  p.result.min_us = us.front();
  p.result.max_us = us.back();
  size_t n = us.size();
  p.result.median_us = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
}

void pin_kernel_threads(int threads) {
  if (threads <= 0) return;
  ::setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads")))
    set(threads);
}

Measurement measure(const Graph& kernel, const codegen::Backend& backend, const std::string& config,
                    const MeasureOptions& options) {
  pin_kernel_threads(options.threads);
  std::vector<Tensor> inputs = interp::random_inputs(kernel, options.seed);
  std::vector<Tensor> reference;
  try {
    reference = interp::interpret(kernel, inputs);
  } catch (const std::exception& e) {
    Measurement m{.backend = std::string(backend.name), .config = config};
    m.reason = fmt::format("interpreter: {}", e.what());
    return m;
  }
  PreparedKernel p = prepare(kernel, backend, config, inputs, reference, options);
  time_kernel(p, kernel, options);
  return p.result;
}

}  // namespace orch::profile
