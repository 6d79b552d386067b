#include "codegen/halide/halide_aot.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "codegen/halide/halide_lower.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

// Kernels share the runtime object linked beside them instead of each carrying a copy.
Halide::Target kernel_target() {
  return Halide::get_host_target().with_feature(Halide::Target::NoRuntime);
}

std::string strip(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

void halide_compile_kernel_object(const Graph& kernel, const std::string& object_path,
                                  const std::string& header_path, const std::string& function_name,
                                  const HalideSchedule* schedule) {
  std::string reason = halide_reject(kernel);
  if (!reason.empty()) unsupported("Halide: {}", reason);
  try {
    halide_impl::Lowered lowered = halide_impl::lower_kernel(kernel);
    HalideSchedule fallback;
    if (schedule == nullptr) fallback = default_halide_schedule(kernel);
    halide_impl::apply_schedule(lowered, kernel, schedule ? *schedule : fallback);
    std::vector<Halide::Argument> args(lowered.params.begin(), lowered.params.end());
    lowered.pipeline.compile_to_object(object_path, args, function_name, kernel_target());
    lowered.pipeline.compile_to_header(header_path, args, function_name, kernel_target());
  } catch (const Halide::Error& e) {
    fail("Halide: {}", strip(e.what()));
  }
}

void halide_compile_runtime_object(const std::string& object_path) {
  // The runtime depends only on the target and costs about a second of LLVM: compiled once per
  // process (and inherited by forked children), then copied.
  static std::mutex mutex;
  static std::map<std::string, std::string> compiled;
  std::lock_guard lock(mutex);
  Halide::Target target = Halide::get_host_target();
  auto it = compiled.find(target.to_string());
  if (it == compiled.end()) {
    try {
      Halide::compile_standalone_runtime(object_path, target);
    } catch (const Halide::Error& e) {
      fail("Halide runtime: {}", strip(e.what()));
    }
    std::ifstream in(object_path, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), {}};
    check(!bytes.empty(), "Halide runtime: cannot read back '{}'", object_path);
    compiled[target.to_string()] = std::move(bytes);
    return;
  }
  std::ofstream out(object_path, std::ios::binary | std::ios::trunc);
  out << it->second;
  check(static_cast<bool>(out), "Halide runtime: cannot write '{}'", object_path);
}

std::string halide_runtime_include_dir() {
  // ORCH_HALIDE_RUNTIME_INCLUDE_DIR: where CMake found HalideRuntime.h.
  std::string dir = ORCH_HALIDE_RUNTIME_INCLUDE_DIR;
  check(std::filesystem::exists(std::filesystem::path(dir) / "HalideRuntime.h"),
        "HalideRuntime.h not found in '{}' (needed to build module drivers)", dir);
  return dir;
}

}  // namespace orch::codegen
