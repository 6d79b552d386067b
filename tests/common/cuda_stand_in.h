// A stand-in CudaDriver over host memory, for running runtime::CudaModule (and what loads it:
// measured CUDA tuning) in tests without a GPU. Its launches run the module's kernels.cu compiled
// for the host (codegen::HostKernels), its synchronous copies fail during a capture as on a GPU,
// its CUDA graphs record the launches and replay them, and its events read the host clock. It
// holds one module at a time, as its entry points are plain functions; the modules it loads
// must call no library (cuBLAS, cuDNN), which it does not stand in for.
#pragma once

#include <string>

#include "runtime/cuda_driver.h"

namespace orch::test {

/// What the stand-in saw since the last reset_stand_in().
struct StandInCounts {
  int graph_launches = 0;
  int copies_in_capture = 0;  // synchronous copies refused during a capture
  int failed_launches = 0;    // launches that failed (stand_in_fail_launches, or an Error)
  std::string last_error;     // the Error of the last launch that threw one
};

const runtime::CudaDriver& cuda_stand_in();

StandInCounts& stand_in_counts();

/// Zeroes the counts and stops failing launches.
void reset_stand_in();

/// From now on, every launch of a module whose kernels.cu contains `text` fails with
/// CUDA_ERROR_LAUNCH_FAILED, as a kernel that faults on a GPU.
void stand_in_fail_launches(const std::string& text);

}  // namespace orch::test
