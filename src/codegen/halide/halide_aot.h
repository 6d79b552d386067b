// Ahead-of-time Halide for compiled modules: kernel objects without the Halide runtime, so that
// many of them link into one shared library with a single runtime object beside them.
#pragma once

#include <string>

#include "codegen/halide/halide_backend.h"

namespace orch::codegen {

/// Writes `object_path` (and the C header `header_path`): a C function `function_name` taking
/// one halide_buffer_t* per kernel input then per kernel output (dims innermost first), for the
/// host target without the Halide runtime. `schedule` null: the default schedule. Throws Error
/// (Unsupported for what halide_reject names) on failure.
void halide_compile_kernel_object(const Graph& kernel, const std::string& object_path,
                                  const std::string& header_path, const std::string& function_name,
                                  const HalideSchedule* schedule = nullptr);

/// Writes the Halide runtime for the host target as one object file. The first call in a
/// process compiles it; later calls (and forked children) write the same bytes again.
void halide_compile_runtime_object(const std::string& object_path);

/// The directory holding HalideRuntime.h, for compiling code that calls AOT kernels; throws
/// Error when it cannot be found.
std::string halide_runtime_include_dir();

}  // namespace orch::codegen
