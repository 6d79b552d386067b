// The CUDA backend (issue #15): a candidate kernel graph of primitives becomes CUDA C, compiled
// with NVRTC into sm_XX machine code (cuda_nvrtc.h).
//
// Why CUDA C through NVRTC and not Halide's CUDA target: Debian's Halide 14 knows CUDA
// capabilities up to 8.6 (Target::CUDACapability86), so it can only emit PTX for sm_86 that the
// driver would JIT on an H200; NVRTC (CUDA 13) compiles straight to sm_90 cubin, and the
// generated code is plain text whose launch geometry is Welder's GPU tile config.
//
// Shape of the generated code. Every value the kernel computes is either inlined (an expression
// recomputed where it is read) or materialized (written to global memory by its own phase). A
// value is materialized when it is a kernel output, or the result of prim.Reduce, prim.MatMul,
// prim.Conv or prim.ConvTranspose that other kernel nodes read (recomputing those per use would
// multiply the work), except where only an elementwise epilogue reads it, perhaps through a
// transpose or a reshape, ending at one kernel output: that output computes it once per element,
// inlined. Intermediate materialized values live in one scratch buffer. Each materialized value
// or output is one phase, each thread computing the elements of its thread tile. Phases are
// grouped into launches, one `extern "C" __global__` function each, launched in order on one
// stream: a phase runs in the launch after the last one holding a phase whose output it reads,
// taking the blocks after those of the phases before it there (Korch's horizontal fusion:
// independent outputs of a kernel are one launch).
//
// The root output's phase, under a tile config, is Welder's: its block first stages in shared
// memory what it reads with reuse (schedule/gpu/gpu_staging.h), and computes there the
// materialized reductions no other output reads (a softmax's or layer norm's row statistics:
// each block the rows its tile needs, groups of lanes per row combined by warp shuffles), which
// then have no phase of their own: a softmax is one launch. These arrays lie in the block's
// dynamic shared memory (orch_shared), up to the GPU's opt-in limit per block, which the launch
// asks for (CudaLaunch::shared_bytes). The one reduction it computes at the root's coordinates
// (a MatMul, Conv or Reduce, perhaps under an epilogue) is accumulated per thread tile element
// in acc_tile, the reduce loops outside the element loops (a register tile); with a reduce step
// those loops run a step at a time, each step a barrier and its operands' windows staged. The
// epilogue then runs on the totals. A phase with several such reductions computes them per
// element, reading memory where staging would need steps.
//
// The same source also compiles for the host (cuda_emulate.h), barriers included, which is how
// the generated code is checked against the interpreter on machines without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cublas_gemm.h"
#include "codegen/cudnn_conv.h"
#include "codegen/kernel.h"

namespace orch::schedule {
struct GpuTileConfig;
struct GpuKernelForm;
struct TileGraph;
}  // namespace orch::schedule

namespace orch::codegen {

/// One launch of a generated kernel: a 1-D grid of 1-D blocks; or, with `gemm` or `conv` set,
/// a cuBLAS or cuDNN call (codegen/cublas_gemm.h, codegen/cudnn_conv.h), its kernel's only
/// launch.
struct CudaLaunch {
  std::string function;  // the extern "C" __global__ function's name
  int64_t blocks = 0;
  int threads = 0;
  /// Dynamic shared memory of a block (orch_shared): above 48 KiB the function needs the
  /// opt-in (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before it is launched.
  int64_t shared_bytes = 0;
  std::optional<GemmSpec> gemm;
  std::optional<ConvSpec> conv;
};

/// Which vendor libraries a CUDA module may call (orch optimize --gpu-libraries).
struct CudaLibraries {
  bool cublas = true;
  bool cudnn = true;
};

/// "cublas,cudnn", "cublas", "cudnn" or "none"; throws Error naming the accepted names.
CudaLibraries parse_cuda_libraries(std::string_view list);

/// A kernel one library call computes: its backend ("cublas" or "cudnn") and its launch.
struct LibraryCall {
  std::string backend;
  CudaLaunch launch;
};

/// The library call among `allowed` that computes `kernel` (as the stitcher extracts it,
/// library_call_of): cuBLAS for a lone MatMul (gemm_spec), cuDNN for a convolution, perhaps
/// with its bias and ReLU (conv_spec), rather than generated code (driver/cuda_target.h: far
/// from the peak when measured). nullopt for any other kernel.
std::optional<LibraryCall> library_call(const Graph& kernel, const CudaLibraries& allowed);

/// Constants of this many bytes or more are inputs of a kernel that a library computes: all of
/// them, as a library reads its operands from device memory (a bias of a few channels too);
/// generated code bakes constants under the stitcher's min_weight_bytes into its source.
inline constexpr int64_t kLibraryMinWeightBytes = 1;

/// library_call on candidate `members` of `graph` writing `outputs`, extracted as the stitcher
/// extracts a library call's kernel (kLibraryMinWeightBytes).
std::optional<LibraryCall> library_call_of(const Graph& graph, std::span<const NodeId> members,
                                           std::span<const ValueId> outputs,
                                           const CudaLibraries& allowed);

/// The CUDA C of one kernel graph.
///
/// Every __global__ function of the kernel takes the same parameters: one pointer per kernel
/// input (`const T*`, in the kernel graph's input order), one per kernel output (`T*`, written
/// ORCH_GLOBAL(T) for the host's race check, in output order), then `unsigned char* scratch`
/// (scratch_bytes, may be null when 0). Tensors are dense row-major in their storage type: f32
/// float, f64 double, f16 __half is not supported, i64 long long, i32 int, i8/u8
/// signed/unsigned char, bool unsigned char (0 or 1).
struct CudaKernelSource {
  std::string code;  // device helpers and the __global__ functions; needs cuda_prelude() first
  std::vector<CudaLaunch> launches;  // in order
  int64_t scratch_bytes = 0;
  int64_t shared_bytes = 0;  // dynamic shared memory of a block, the most of any launch
};

/// Shared memory a block may use without the opt-in: where the target GPU is not given.
inline constexpr int64_t kCudaDefaultSharedLimit = 48 * 1024;
/// More shared memory per block than any GPU has (an H200 227 KB): what the host emulation
/// gives a block, and the most a module may ask for.
inline constexpr int64_t kCudaMaxSharedBytes = 256 * 1024;

/// "" when the CUDA emitter can generate `kernel`, otherwise why not (shown to users).
std::string cuda_reject(const Graph& kernel);

/// CUDA C for `kernel`; function names start with `prefix` (a C identifier), so the sources of
/// many kernels can be concatenated into one translation unit. `config` (a GpuTileConfig of the
/// kernel's tile graph, schedule::gpu_configs) sets the launch of the root output's phase: one
/// block per block tile, one thread per thread tile; the other phases of that launch take its
/// block size, those of other launches (or all, with a null config) 256 threads per block, one
/// element (or a warp per reduced element) per thread. The root phase's block holds at most
/// `shared_limit` bytes in shared memory (the target GPU's opt-in limit per block, which the
/// config was chosen under). Throws Unsupported for what cuda_reject names.
CudaKernelSource cuda_kernel_source(const Graph& kernel, const std::string& prefix,
                                    const schedule::GpuTileConfig* config = nullptr,
                                    int64_t shared_limit = kCudaDefaultSharedLimit);

/// Whether the root of `kernel` (its tile graph `tg`) is a reduction over innermost dims that
/// runs one warp per element (coalesced, 32 lanes per sum, as phases without a config run
/// one), which the stitcher then prefers to any tile config: a config accumulates each element
/// in one thread, and a few sums over large rows (Candy's instance norm: 32 sums of 50176
/// terms, the only configs 32 threads or one) would leave nearly every SM idle.
bool cuda_warp_root(const Graph& kernel, const schedule::TileGraph& tg);

/// What the code of `kernel` (its tile graph `tg`) does under any tile config, for the model to
/// price (schedule::gpu_configs): the reduction the root's thread tiles accumulate, which a
/// config's reduce step walks, and the values the root's block computes into shared memory
/// (block_candidates).
schedule::GpuKernelForm cuda_tile_form(const Graph& kernel, const schedule::TileGraph& tg);

/// How many launches cuda_kernel_source gives an accepted `kernel` under a tile config and the
/// scratch they use, without generating the code: what the analytic cost of a candidate needs.
/// The root phase is presumed to compute every candidate (block_candidates) per block; a config
/// whose regions of them do not fit shared memory gives more launches.
struct CudaKernelShape {
  int launches = 0;
  int64_t scratch_bytes = 0;
  /// Per value: written to memory by a phase of its own (materialized or a kernel output), into
  /// shared memory by the root phase, or read from memory (inputs, constants), hence computed
  /// once per element (per block that needs it, in shared memory); the other
  /// values are inlined, computed again at every read of their consumers.
  std::vector<bool> stored;
  /// The most threads one phase of the code can keep busy: one per element of the value it
  /// computes, a group of lanes per element of a row reduction run one warp (or more, where
  /// rows are few) per element. What the root's tile config and the block-computed values make
  /// of it is not known here.
  int64_t threads = 1;
};
CudaKernelShape cuda_kernel_shape(const Graph& kernel);

/// What every translation unit of generated kernels starts with: the element types, the math
/// helpers the generated code calls. The same names exist in the host prelude of cuda_emulate.
std::string cuda_prelude();

}  // namespace orch::codegen
