// The parts of conformance.cc that live in their own files: the compiled run of a data set and
// running tests in child processes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/conformance.h"
#include "frontend/onnx_import.h"

namespace orch::driver::conformance_detail {

/// ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns: reads `t` as bf16 where
/// the model declares bf16.
Tensor as_declared(const Tensor& t, DType declared);

/// Optimizes the model with `import` (the test's shapes and inputs bound), loads the module and
/// runs it on the test's inputs. Returns "" when every output matches `expected`, otherwise the
/// problem, starting with the stage that failed ("optimize: ", "load: ", "validate: " for the
/// module's one run, kernel by kernel against the interpreter, "run: " when it gives another
/// number of outputs, "compiled output 0"). Throws Unsupported ("optimize: ...") when the target
/// cannot compile the model (no NVRTC for the CUDA target), which skips the test.
std::string run_compiled_data_set(const std::string& model, const frontend::ImportOptions& import,
                                  const std::vector<Tensor>& expected,
                                  const ConformanceOptions& options);

/// Runs each test folder in its own child process, options.jobs at a time, calling `on_result`
/// as each finishes. A child that crashes or runs past options.timeout_s fails its test.
/// Returns the results in the order of `tests`.
std::vector<CaseResult> run_in_processes(const std::vector<std::string>& tests,
                                         const ConformanceOptions& options,
                                         const std::function<void(const CaseResult&)>& on_result);

}  // namespace orch::driver::conformance_detail
