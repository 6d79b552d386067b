// `orch run MODULE --repeat N --profile`: where a module's time goes, kernel by kernel.
#pragma once

#include <vector>

#include "driver/kernel_timing.h"
#include "orch/module.h"
#include "runtime/cuda_module.h"

namespace orch::tool {

/// Runs `module` `repeat` times on `feed`, timing each kernel (the wall time between the
/// after-kernel hooks of consecutive kernels), and prints the `top` slowest kernels against the
/// plan's costs, then the totals per backend.
void print_kernel_profile(const Module& module, Context& context, const std::vector<Tensor>& feed,
                          int repeat, int top);

/// The same for a CUDA module, on the inputs of its last run: each kernel's device time (CUDA
/// events between kernels) against its estimated cost.
void print_cuda_kernel_profile(runtime::CudaModule& module, int repeat, int top);

}  // namespace orch::tool
