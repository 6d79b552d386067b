// A CUDA module (orch optimize --target cuda) on an NVIDIA GPU: the cubin loaded through the
// driver API, the weights copied to the device once, one arena and one scratch buffer, and the
// kernels' launches issued in plan order on a stream of the module's own, or replayed as one
// CUDA graph captured from that sequence (set_graph). A kernel that is one GEMM or convolution
// calls cuBLAS or cuDNN (runtime/cublas.h, runtime/cudnn.h) on the same stream. A host kernel
// (an op the CUDA generator lacks) runs through the reference backend between synchronous
// copies from and to the GPU. Checked on an H200 (issue #15, 2026-12-04), except the graph, the
// library calls and the host kernels, written since without a GPU to run them on; without one,
// tests run this runtime through a stand-in driver over host memory whose launches run the
// kernels' code on the CPU (tests/runtime/cuda_module_test.cc): its buffers, arguments, host
// kernels and the graph it captures and replays, not the GPU's behaviour.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "orch/module.h"

namespace orch::runtime {

struct CudaDriver;  // runtime/cuda_driver.h

/// "" when this machine can run CUDA modules (a CUDA driver and a GPU), otherwise why not.
std::string cuda_unavailable();

/// True when `dir` holds a module compiled for CUDA (its manifest's format says so); false for
/// anything else, which Module::load then judges.
bool is_cuda_module(const std::string& dir);

class CudaModule {
 public:
  /// Loads the CUDA module in `dir` onto GPU `device`. Throws Error naming the problem: not a
  /// CUDA module, no driver or GPU, a GPU of another architecture than the cubin's, a function
  /// missing from the cubin, device memory exhausted.
  static CudaModule load(const std::string& dir, int device = 0);
  /// The same through `driver`: the one cuda_driver() loads, or a test's stand-in.
  static CudaModule load(const std::string& dir, const CudaDriver& driver, int device = 0);
  CudaModule(CudaModule&&) noexcept;
  CudaModule& operator=(CudaModule&&) noexcept;
  ~CudaModule();

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  const std::vector<KernelSpec>& kernels() const;

  /// When `on`, run() replays the plan as one CUDA graph, captured from its launch sequence at
  /// the first use: one launch per run instead of one per kernel phase (a few microseconds
  /// each). The graph holds the module's device pointers, which stay fixed for its lifetime. A
  /// plan with a host kernel runs launch by launch all the same (a capture cannot hold its
  /// copies).
  void set_graph(bool on);

  /// Copies the inputs to the device, runs every kernel, waits and copies the outputs back.
  /// `after_kernel`, when set, gets kernel k's outputs (copied back after it ran) before the
  /// next one starts, for checking a module kernel by kernel (launched one by one, not as a
  /// graph).
  std::vector<Tensor> run(std::span<const Tensor> inputs, const KernelHook& after_kernel = {});

  /// The device time of the launch sequence alone (CUDA events around it), on the inputs of
  /// the last run: the median of `repeat` runs after one warm-up, in milliseconds; `graph`:
  /// replayed as the CUDA graph of set_graph instead. With host kernels the time includes their
  /// copies and host work, and `graph` changes nothing (set_graph).
  double median_ms(int repeat, bool graph = false);

  /// Whether a kernel runs on the host (an op the CUDA generator lacks).
  bool has_host_kernels() const;

  /// The device time of each of `repeat` runs of the launch sequence, in milliseconds, the runs
  /// enqueued back to back after one warm-up (an event between consecutive runs, one wait at
  /// the end), on the inputs of the last run: no run starts on a stream the host left idle, as
  /// none does in a module whose launches are queued ahead. What measuring a candidate kernel
  /// alone times (driver/cuda_measure.h), which is never a host kernel.
  std::vector<double> back_to_back_ms(int repeat);

  /// The device time of each kernel's launches, in milliseconds, over `repeat` runs after one
  /// warm-up, on the inputs of the last run: CUDA events recorded between consecutive kernels,
  /// one vector per run. For `orch run DIR --repeat N --profile`.
  std::vector<std::vector<double>> kernel_ms(int repeat);

 private:
  struct Impl;
  explicit CudaModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace orch::runtime
