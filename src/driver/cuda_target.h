// Planning for an NVIDIA GPU (issue #15). A CUDA plan is measured on this machine's GPU
// (cuda_measure.h) or, with `orch optimize --target cuda --compile-only`, analytic: each
// candidate kernel's CUDA C is generated (codegen/cuda) and costed from the GPU description.
// The BLP picks the kernels, and the stitcher compiles them with NVRTC for the GPU's
// architecture.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "candidates/candidates.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/graph.h"
#include "schedule/gpu/gpu_machine.h"
#include "stitch/stitch.h"

namespace orch::driver {

/// What a module's kernels are generated for.
enum class Target { cpu, cuda };

/// "cpu" or "cuda"; throws Error naming the accepted names.
Target parse_target(std::string_view name);

/// The name of this machine's GPU among target_gpu's: described by its driver.
inline constexpr std::string_view kThisGpu = "this";

/// The GPU description `name_or_path`: a JSON file (schedule/gpu/gpu_machine.h), the name of
/// one shipped in machines/ ("h200", "a100"), or kThisGpu (detect_gpu_in_child, cuda_measure.h).
/// Throws Error listing the shipped names, or saying why this machine has no GPU.
schedule::GpuMachine target_gpu(const std::string& name_or_path);

/// Constants of this many bytes or more are inputs of a CUDA kernel (read from the module's
/// weights) rather than baked into its source: the stitcher's default, which every check and
/// cost here assumes too.
inline const int64_t kCudaMinWeightBytes = stitch::StitchOptions{}.min_weight_bytes;

/// Candidate kernel `members` writing `outputs` as the CUDA stitcher generates it (large
/// constants as inputs).
Graph cuda_kernel_graph(const Graph& graph, std::span<const NodeId> members,
                        std::span<const ValueId> outputs);

/// The enumerator's question for CUDA: a fused candidate is kept when the CUDA generator accepts
/// it (rejected with its reason otherwise); single primitives are always kept: one the generator
/// rejects runs on the host (cuda_host_us).
KernelCheck cuda_backend_check(const Graph& graph);

/// Why the CUDA generator cannot compile candidate graph `kernel` (extract_kernel's, constants
/// baked) as the stitcher passes it, large constants as inputs; "" when it can.
std::string cuda_kernel_reject(const Graph& kernel);

/// Bandwidth of the synchronous copies between the GPU and pageable host memory a host kernel
/// makes (PCIe through a staging buffer), and what each direction's synchronization costs: a
/// guess for the analytic plan until a GPU measures it. Host kernels are single ops the
/// generator lacks, which nothing else can run: their cost changes no choice of the plan, only
/// its objective.
inline constexpr double kCudaHostCopyGbs = 10.0;
inline constexpr double kCudaHostSyncUs = 10.0;

/// A host kernel's estimated time: its inputs copied from the GPU, the reference backend on the
/// host (its roofline bound on `host`), its outputs copied back.
double cuda_host_us(const Graph& kernel, const schedule::Machine& host);

/// Time one launch of a kernel adds on the stream besides its work: back-to-back launches on
/// recent NVIDIA GPUs cost a few microseconds each (a CUDA graph lowers it); an assumption of
/// the analytic plan until a GPU measures it.
inline constexpr double kCudaLaunchUs = 2.0;

/// The fraction of the fp32 peak generated code reaches. Measured on an H200 before the
/// generator staged operands in shared memory (cuda_source.h), when MatMuls and convolutions
/// read every operand from L1/L2 (issue #15, 2026-12-04): YOLOv4 with one kernel per operator ran
/// its 60.3 GFLOP in 16.9 ms, 3.6 TFLOP/s or 5% of the 67 TFLOP/s fp32 peak (its memory-bound
/// kernels included, so its convolutions reach a little more); Candy's reached 1.4%. Kept until
/// a GPU measures the staged code: an unmeasured guess would only move the plans.
inline constexpr double kCudaComputeEfficiency = 0.05;

/// Little's law for generated code: a thread keeps about this many bytes of loads in flight
/// (nvcc unrolls a simple loop 4 times: four 4-byte loads) and waits this long for them (HBM
/// latency under load on recent NVIDIA GPUs is several hundred nanoseconds). Assumptions of the
/// analytic plan until a GPU measures them; they matter only for kernels with few threads, such
/// as a GEMV run one thread per output (EfficientViT-B1's head: 1,600 threads that each read a
/// 1,536-long column), which HBM bandwidth alone priced at 4.1 us and the GPU tile model at
/// 541 us.
inline constexpr double kCudaBytesInFlightPerThread = 16;
inline constexpr double kCudaMemoryLatencyUs = 0.5;

/// The memory bandwidth (GB/s) `threads` threads of generated code draw on `gpu`: HBM's, or
/// less when they cannot keep enough bytes in flight (at most the threads the SMs hold).
double cuda_bandwidth_gbs(const schedule::GpuMachine& gpu, int64_t threads);

/// The FLOPs `kernel`'s generated code performs. A value the generator inlines is computed again
/// at every read: a producer inlined into a MatMul's left operand runs once per output column,
/// into a convolution once per tap of every output element (profile::reduce_volume reads per
/// element). profile::kernel_flops counts each value once, which priced such prologue fusions
/// as free: on the H200 the full plans, made of them, ran 2-4x slower than greedy fusion.
double cuda_kernel_flops(const Graph& kernel);

/// The fraction of the fp32 peak a cuBLAS GEMM (codegen/cublas_gemm.h) is assumed to reach: an
/// assumption of the analytic plan until a GPU measures it (large SGEMMs on recent NVIDIA GPUs
/// run at well over half the peak; small ones are bound by their launch and memory terms).
inline constexpr double kCublasComputeEfficiency = 0.5;

/// The same for a cuDNN convolution (codegen/cudnn_conv.h), lower: small-channel and depthwise
/// convolutions, common in the zoo, keep cuDNN's kernels far from the peak.
inline constexpr double kCudnnComputeEfficiency = 0.3;

/// Estimated latency of `kernel` (a kernel graph the generator accepts once its large constants
/// are inputs; they count the same either way) on `gpu`: kCudaLaunchUs per launch
/// of its generated code, plus the slower of its memory traffic (inputs, constants, outputs and
/// its scratch written and read once, at cuda_bandwidth_gbs of the most threads a phase of it
/// keeps busy, CudaKernelShape::threads) and its cuda_kernel_flops at
/// kCudaComputeEfficiency of the peak. A kernel the stitcher runs as a cuBLAS GEMM or a cuDNN
/// convolution (codegen::library_call among `libraries`): one launch, its FLOPs at
/// kCublasComputeEfficiency or kCudnnComputeEfficiency.
double cuda_cost_us(const Graph& kernel, const schedule::GpuMachine& gpu,
                    const codegen::CudaLibraries& libraries = {});

/// What no code can beat on `gpu`: `kernel`'s unavoidable memory traffic at HBM bandwidth or
/// its FLOPs (each value once) at the fp32 peak, whichever is slower; the measured tuning's
/// roofline bound (TuneOptions::target cuda).
double cuda_lower_bound_us(const Graph& kernel, const schedule::GpuMachine& gpu);

/// Whether `kernel` spends more time computing than moving data at the bound's rates.
bool cuda_compute_bound(const Graph& kernel, const schedule::GpuMachine& gpu);

}  // namespace orch::driver
