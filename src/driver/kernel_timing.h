// Timing a compiled module kernel by kernel: `orch run --profile` prints it, and optimize's
// module rounds (module_rounds.h) plan with it.
#pragma once

#include <vector>

#include "orch/module.h"

namespace orch::driver {

/// One timing: `kernel_us[k]` holds kernel k's times, one per run (the wall time between the
/// after-kernel hooks of consecutive kernels; the first kernel's from the start of the run), and
/// `run_us` each whole run.
struct KernelTimes {
  std::vector<std::vector<double>> kernel_us;
  std::vector<double> run_us;
};

/// Runs `module` once to warm up, then `repeat` times on `feed` (at least once, and no more runs
/// are started once `budget_s` seconds of timed runs have passed; 0: no limit).
KernelTimes time_kernels(const Module& module, Context& context, const std::vector<Tensor>& feed,
                         int repeat, double budget_s = 0);

/// The median of `values` (not empty).
double median_of(std::vector<double> values);

}  // namespace orch::driver
