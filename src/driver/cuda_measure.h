// Measuring CUDA kernels for the BLP (orch optimize --target cuda without --compile-only). Each
// candidate kernel is stitched alone into a CUDA module (stitch_cuda: the code, GPU tile config
// and library call the final module gives it), checked against the interpreter on the GPU and
// timed with CUDA events between runs queued back to back (CudaModule::back_to_back_ms, through
// codegen::Kernel::device_times_us): as in a module, no launch waits on an idle stream, and a
// kernel shorter than a launch costs the launch. This runs in the profiler's child processes
// (profile/profiler.h): a kernel that faults or hangs costs that candidate, not the run. The
// tuning process itself never initializes CUDA, which a forked child could not use then: what
// it must know of the GPU it asks a child of its own (detect_gpu_in_child).
#pragma once

#include "codegen/cuda/cuda_source.h"
#include "codegen/kernel.h"
#include "runtime/cuda_driver.h"
#include "schedule/gpu/gpu_machine.h"

namespace orch::driver {

struct CudaMeasureSetup {
  schedule::GpuMachine gpu;  // what the modules are compiled for: this machine's GPU
  codegen::CudaLibraries libraries;
  /// Run the modules on the host (host_cuda_module.h) and time them on the wall clock: the
  /// measured path without a GPU, for tests. The times say nothing about any GPU.
  bool on_host = false;
  /// The driver that runs the modules (runtime::CudaModule::load's); null: this machine's.
  const runtime::CudaDriver* driver = nullptr;
};

/// The backend "cuda" measuring with `setup`, which it keeps for this process and the children
/// it forks (a Backend holds plain functions). It rejects what the CUDA generator rejects.
const codegen::Backend& cuda_measure_backend(const CudaMeasureSetup& setup);

/// GPU 0 of this machine as its driver reports it (schedule::detect_gpu), asked in a child
/// process. Throws Error saying why there is none.
schedule::GpuMachine detect_gpu_in_child();

}  // namespace orch::driver
