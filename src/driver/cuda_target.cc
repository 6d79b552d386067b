#include "driver/cuda_target.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "codegen/cuda/cuda_source.h"
#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "driver/cuda_measure.h"
#include "ir/error.h"
#include "profile/roofline.h"

namespace orch::driver {

namespace fs = std::filesystem;

Target parse_target(std::string_view name) {
  if (name == "cpu") return Target::cpu;
  if (name == "cuda") return Target::cuda;
  fail("unknown target '{}' (cpu or cuda)", name);
}

schedule::GpuMachine target_gpu(const std::string& name_or_path) {
  if (name_or_path == kThisGpu) return detect_gpu_in_child();
  if (fs::is_regular_file(name_or_path)) return schedule::load_gpu(name_or_path);
  fs::path shipped = fs::path(ORCH_MACHINES_DIR) / (name_or_path + ".json");
  if (fs::is_regular_file(shipped)) return schedule::load_gpu(shipped.string());
  std::vector<std::string> names;
  if (fs::is_directory(ORCH_MACHINES_DIR))
    for (const fs::directory_entry& e : fs::directory_iterator(ORCH_MACHINES_DIR))
      if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  fail(
      "GPU '{}': no such description file, not one of the shipped GPUs ({}), and not '{}' (this "
      "machine's)",
      name_or_path, fmt::join(names, ", "), kThisGpu);
}

Graph cuda_kernel_graph(const Graph& graph, std::span<const NodeId> members,
                        std::span<const ValueId> outputs) {
  return codegen::extract_kernel_with_weight_inputs(graph, members, outputs, kCudaMinWeightBytes);
}

KernelCheck cuda_backend_check(const Graph& graph) {
  return kernel_check(graph, codegen::cuda_reject, kCudaMinWeightBytes);
}

std::string cuda_kernel_reject(const Graph& kernel) {
  std::vector<NodeId> members(kernel.num_nodes());
  std::iota(members.begin(), members.end(), 0);
  return codegen::cuda_reject(cuda_kernel_graph(kernel, members, kernel.outputs()));
}

double cuda_host_us(const Graph& kernel, const schedule::Machine& host) {
  // Its constants live on the host: what crosses is its inputs and outputs.
  double copied = profile::kernel_output_bytes(kernel);
  for (ValueId in : kernel.inputs())
    copied += static_cast<double>(num_elements(kernel.value(in).type.shape) *
                                  dtype_size(kernel.value(in).type.dtype));
  return 2 * kCudaHostSyncUs + copied / (kCudaHostCopyGbs * 1e3) +
         profile::roofline_lower_bound_us(kernel, host);
}

namespace {

double cuda_flops(const Graph& kernel, const codegen::CudaKernelShape& shape) {
  // Consumers before producers (node order is topological): a value's evaluations are known
  // once every reader of it has been visited.
  std::vector<double> evaluations(kernel.num_values(), 0);
  double flops = 0;
  for (NodeId n = static_cast<NodeId>(kernel.num_nodes()); n-- > 0;) {
    const Node& node = kernel.node(n);
    double evals = 0;
    for (ValueId out : node.outputs)
      evals = std::max(evals, shape.stored[out]
                                  ? static_cast<double>(num_elements(kernel.value(out).type.shape))
                                  : evaluations[out]);
    flops += evals * profile::flops_per_element(kernel, node);
    double reads = evals * profile::reduce_volume(kernel, node);
    for (ValueId in : node.inputs)
      if (in != kNoValue && !shape.stored[in]) evaluations[in] += reads;
  }
  return flops;
}

}  // namespace

double cuda_kernel_flops(const Graph& kernel) {
  return cuda_flops(kernel, codegen::cuda_kernel_shape(kernel));
}

double cuda_bandwidth_gbs(const schedule::GpuMachine& gpu, int64_t threads) {
  double resident = static_cast<double>(gpu.sm_count) * gpu.max_threads_per_sm;
  double in_flight = std::min(static_cast<double>(threads), resident) * kCudaBytesInFlightPerThread;
  return std::min(gpu.hbm_gbs, in_flight / (kCudaMemoryLatencyUs * 1e3));
}

double cuda_cost_us(const Graph& kernel, const schedule::GpuMachine& gpu,
                    const codegen::CudaLibraries& libraries) {
  // As the stitcher sees it, constants as inputs: a product of weights is a GEMM too.
  std::vector<NodeId> members(kernel.num_nodes());
  std::iota(members.begin(), members.end(), 0);
  if (std::optional<codegen::LibraryCall> call =
          codegen::library_call_of(kernel, members, kernel.outputs(), libraries)) {
    double efficiency =
        call->backend == "cublas" ? kCublasComputeEfficiency : kCudnnComputeEfficiency;
    double memory_us = profile::kernel_unavoidable_bytes(kernel) / (gpu.hbm_gbs * 1e3);
    double compute_us = profile::kernel_flops(kernel) / (gpu.peak_fp32_gflops * 1e3 * efficiency);
    return kCudaLaunchUs + std::max(memory_us, compute_us);
  }
  codegen::CudaKernelShape shape = codegen::cuda_kernel_shape(kernel);
  double bytes = profile::kernel_unavoidable_bytes(kernel) + 2.0 * double(shape.scratch_bytes);
  double memory_us = bytes / (cuda_bandwidth_gbs(gpu, shape.threads) * 1e3);
  double compute_us =
      cuda_flops(kernel, shape) / (gpu.peak_fp32_gflops * 1e3 * kCudaComputeEfficiency);
  return kCudaLaunchUs * static_cast<double>(shape.launches) + std::max(memory_us, compute_us);
}

double cuda_lower_bound_us(const Graph& kernel, const schedule::GpuMachine& gpu) {
  double memory_us = profile::kernel_unavoidable_bytes(kernel) / (gpu.hbm_gbs * 1e3);
  double compute_us = profile::kernel_flops(kernel) / (gpu.peak_fp32_gflops * 1e3);
  return std::max(memory_us, compute_us);
}

bool cuda_compute_bound(const Graph& kernel, const schedule::GpuMachine& gpu) {
  return profile::kernel_flops(kernel) / gpu.peak_fp32_gflops >
         profile::kernel_unavoidable_bytes(kernel) / gpu.hbm_gbs;
}

}  // namespace orch::driver
