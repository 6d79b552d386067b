// Runs ONNX backend tests (a folder per test: model.onnx + test_data_set_*/{input,output}_N.pb)
// through import and the reference interpreter, comparing with the shipped outputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace orch::driver {

enum class CaseStatus { passed, failed, skipped };

struct CaseResult {
  std::string name;              // the test folder's name
  std::vector<std::string> ops;  // op types the model uses
  CaseStatus status = CaseStatus::passed;
  std::string reason;  // why it failed or was skipped
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
};

/// Runs one test folder. Never throws: every problem becomes a failed or skipped result.
CaseResult run_conformance_case(const std::string& test_dir, const ConformanceOptions& options);

/// Runs every test folder under `dir` in name order, calling `on_result` after each.
std::vector<CaseResult> run_conformance(const std::string& dir, const ConformanceOptions& options,
                                        const std::function<void(const CaseResult&)>& on_result);

/// Empty when `actual` matches `expected` (same dtype and shape, values within
/// |a-e| <= atol + rtol*|e|, NaN matching NaN); otherwise what differs.
std::string compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol);

}  // namespace orch::driver
