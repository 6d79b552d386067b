// Runs ONNX backend tests (a folder per test: model.onnx + test_data_set_*/{input,output}_N.pb)
// through import and the reference interpreter, comparing with the shipped outputs; optionally
// also through the whole optimizer into a compiled module (conformance_compiled.cc).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/cuda_target.h"
#include "ir/tensor.h"

namespace orch::driver {

enum class CaseStatus { passed, failed, skipped };

struct CaseResult {
  std::string name;              // the test folder's name
  std::vector<std::string> ops;  // op types the model uses
  CaseStatus status = CaseStatus::passed;
  std::string reason;  // why it failed or was skipped
  double seconds = 0;  // wall time of the test
};

struct ConformanceOptions {
  double rtol = 1e-3;  // ONNX's own tolerances for the backend tests
  double atol = 1e-7;
  /// Only tests whose folder name contains this text.
  std::string filter;
  /// Run the primitive graph (operator fission) instead of the operator graph.
  bool through_fission = false;
  /// Run the primitive graph after fission and the rewrite stage (verified).
  bool through_rewrite = false;
  /// After the interpreter passes, also optimize the model (analytic costs, validation on),
  /// load the compiled module and run it on the test's inputs. A test the interpreter skips is
  /// skipped with its reason, and so is one the target cannot compile (Unsupported: no NVRTC
  /// for the CUDA target); a failure after that names the stage (optimize, load, validate: the
  /// module's one run, kernel by kernel, whose outputs are then compared with the test's).
  bool compiled = false;
  /// With `compiled`: the module's target. cuda: compiled for the H200 with analytic costs
  /// (`orch optimize --target cuda --compile-only`) and run on the host (host_cuda_module.h), so
  /// that each test checks the CUDA code generator and the library calls without a GPU.
  Target target = Target::cpu;
  /// With target cuda: run each module on this machine's GPU (runtime/cuda_module.h) instead of
  /// its code on the host.
  bool on_gpu = false;
  /// Tests run at once, each in its own process (a crash or a hang fails one test, not the run);
  /// 1 with `compiled` still isolates each test in a process.
  int jobs = 1;
  /// Wall seconds a test may take when run in its own process.
  int timeout_s = 600;
  /// Where compiled runs put their module directories (a folder per process, removed after);
  /// "": the system's temp directory.
  std::string temp_dir;
};

/// Runs one test folder. Never throws: every problem becomes a failed or skipped result.
CaseResult run_conformance_case(const std::string& test_dir, const ConformanceOptions& options);

/// The test folders under `dir` (those holding a model.onnx) whose name contains `filter`, in
/// name order.
std::vector<std::string> conformance_tests(const std::string& dir, const std::string& filter);

/// Runs every test folder under `dir` (in name order; with jobs > 1, as they finish), calling
/// `on_result` after each. Returns the results in name order.
std::vector<CaseResult> run_conformance(const std::string& dir, const ConformanceOptions& options,
                                        const std::function<void(const CaseResult&)>& on_result);

/// Empty when `actual` matches `expected` (same dtype and shape, values within
/// |a-e| <= atol + rtol*|e|, NaN matching NaN); otherwise what differs.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace orch::driver
