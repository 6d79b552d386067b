// Welder's GPU tile configurations (issue #15): a kernel's root output is cut into block tiles,
// one per thread block, and each block tile into thread tiles, one per thread. The analysis
// says what a configuration costs on a GpuMachine before anything is compiled:
//
// - Staging: a value a block reads with reuse across its threads (an element needed by several
//   output elements: MatMul operands, a reduction's result broadcast over a row) is staged in
//   shared memory, one reduce step at a time; a value each output element reads once goes from
//   global memory straight to registers, and an intermediate without reuse stays in registers
//   (fused, recomputed per use). A value whose region need not move affinely with the block
//   (affinely_placed, gpu_staging.h) is not staged: the generated code could not. The arrays
//   are the code's (staged_regions): a region as large as any block needs it, a value whose
//   region breaks the affine rule at some block left in memory, and only values the root's
//   phase reads (GpuKernelForm::read).
// - Legality: threads per block within the limit and a whole number of warps (or a single block
//   covering the output); registers within the per-thread and per-block limits. What would
//   take shared memory beyond the opt-in limit per block stays in memory, as in the generated
//   code (computed values first, then staged copies in value order, each where it still fits).
// - Occupancy: blocks per SM, limited by threads, shared memory, registers and the block limit;
//   waves = ceil(blocks / (SMs * blocks per SM)).
// - Shared memory reads: what each warp's thread tiles need of the staged values; larger
//   thread tiles reuse more in registers and read less (Welder's register level).
// - Coalescing: the 32-byte sectors one warp's access touches versus the fewest that could hold
//   the bytes it uses. Threads are numbered row-major over the thread grid (innermost output dim
//   fastest); a thread's contiguous run along the innermost dim is one vector load (<= 16 bytes).
// - Time: the slowest of HBM bytes / bandwidth, shared memory reads / (SMs * their bandwidth)
//   and FLOPs / peak, times waves * SMs * blocks per SM / blocks (each block gets its share as
//   if whole waves ran: a partial wave costs a whole one).
//
// Worked example, MatMul f32 [M,K]x[K,N] with K = 256, block tile 64x64, thread tile 4x4, whole
// reduce: 256 threads; shared memory stages A [64,256] and B [256,64], each row padded to an odd
// pitch as the code lays it out (staged_pitch): (64*257 + 256*65) * 4 = 132352 bytes, over the
// 48 KiB default but within the 227 KiB opt-in of an H200; with a reduce step of 32,
// (64*33 + 32*65) * 4 = 16768 bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedule/gpu/gpu_machine.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {

/// How one kernel is cut for a GPU.
struct GpuTileConfig {
  std::vector<int64_t> block;   // block tile per dim of the root output
  std::vector<int64_t> thread;  // thread tile per dim (divides the block tile)
  /// Elements of each reduce axis staged per step; 0 stages the whole reduce extent.
  int64_t reduce_step = 0;
  bool operator==(const GpuTileConfig&) const = default;
};

/// One global memory access of a block (an input read or an output write).
struct GlobalAccess {
  ValueId value = kNoValue;
  bool write = false;
  bool staged = false;  // copied cooperatively into shared memory (reads only)
  int64_t bytes = 0;    // bytes of the interior block's region
  /// One warp's access: sectors touched, and the fewest sectors its bytes need.
  int64_t warp_sectors = 0;
  int64_t min_sectors = 0;
  /// Bytes all blocks move for this access, in whole sectors: a staged copy its regions' runs
  /// rounded to sectors, a direct access its regions' bytes times the warp's sectors touched
  /// per byte used.
  int64_t moved = 0;
};

/// What a configuration costs.
struct GpuTileCost {
  int64_t threads = 0;  // per block
  int64_t blocks = 0;
  /// Per block: the interior block's staged and computed arrays as the code lays them out
  /// (staged_array_bytes), and each computed value's partials.
  int64_t shared_bytes = 0;
  bool needs_optin = false;  // shared_bytes exceeds the default per-block limit
  int64_t registers = 0;     // per thread, estimated
  int blocks_per_sm = 0;
  std::string occupancy_limit;  // "threads", "shared memory", "registers" or "blocks"
  int64_t waves = 0;
  std::vector<GlobalAccess> accesses;
  int64_t global_bytes = 0;  // sum of the accesses' moved bytes
  /// Bytes all warps read from shared memory: each warp the staged elements its thread tiles
  /// need, once (threads reading one address get it by broadcast; bank conflicts not modeled).
  int64_t shared_traffic = 0;
  int64_t flops = 0;  // of all blocks, recomputation included
  /// Analytic: the slowest of HBM traffic, shared memory reads and FLOPs, scaled by wave
  /// quantization.
  double time_us = 0;
  bool legal = true;
  std::string reason;  // why not, when !legal
  /// Per value: staged in shared memory by a block.
  std::vector<bool> staged;
};

/// Per value: staged in shared memory by a block whose regions are `regions` (the interior
/// block's): read with reuse, neither a kernel output nor a one-element constant.
std::vector<bool> staged_values(const TileGraph& tg, const Regions& regions);

/// The box of `v` a block keeps while its consumers run one reduce step: the hull of what each
/// consumer reads of it, given the block's `regions`. A consumer with reduce axes (only
/// `stepped`, when given) spans the window [starts[a], starts[a] + step) of each axis a (`step`
/// 0: whole axes; `starts` empty: from 0). A window wholly in a padding reads the clamped edge.
/// nullopt when no consumer in the block reads v.
std::optional<Box> staged_box(const TileGraph& tg, const Regions& regions, ValueId v, int64_t step,
                              const std::vector<int64_t>& starts = {}, NodeId stepped = kNoNode);

/// Every combination of per-dim choices, first dim outermost.
std::vector<std::vector<int64_t>> combinations(const std::vector<std::vector<int64_t>>& choices);

/// Per-thread register estimate: the thread tile's outputs and accumulators plus addressing.
constexpr int64_t kBaseRegisters = 16;

/// What the generated code does with a kernel besides staging what is reused, which the model
/// prices the same way (codegen::cuda_tile_form says it for a kernel).
struct GpuKernelForm {
  /// The one reduction a config's reduce step walks a step at a time (the reduction the root's
  /// thread tiles accumulate); every other reduction reads its inputs' whole windows. kNoNode:
  /// none is stepped, and a config's reduce step is 0.
  NodeId stepped = kNoNode;
  /// Per value (empty: none): computed by the block into shared memory, its region whole (the
  /// row statistics of a softmax or a layer norm).
  std::vector<bool> computed;
  /// Per value (empty: every value): read by the root's phase or by what it computes, the only
  /// values its block stages; a horizontally fused output's inputs are read by a phase of
  /// their own, which stages nothing.
  std::vector<bool> read;
};

/// The form of a kernel whose code is not known: the root's own reduction stepped, if it has
/// one; nothing computed.
GpuKernelForm default_form(const TileGraph& tg);

/// Analyzes one configuration of `tg` in `form` (default_form when not given) on `gpu`; illegal
/// configurations say why.
GpuTileCost analyze(const TileGraph& tg, const GpuMachine& gpu, const GpuTileConfig& config);
GpuTileCost analyze(const TileGraph& tg, const GpuMachine& gpu, const GpuTileConfig& config,
                    const GpuKernelForm& form);

struct ScoredGpuConfig {
  GpuTileConfig config;
  GpuTileCost cost;
};

/// Legal configurations with power-of-two block and thread tiles (a dim's full extent counts as
/// a block size too), fastest first by the analytic time, at most `limit`, for a kernel in
/// `form` (default_form when not given). Thread tiles hold at most 64 elements (registers);
/// each block tile's regions are computed once. The reduce step of form.stepped is the whole
/// extent when the shared memory fits the default 48 KiB per block, otherwise the longest power
/// of two (at least one sector of elements) that fits it: fewer steps mean fewer barriers, and
/// the default limit leaves room for several blocks per SM.
std::vector<ScoredGpuConfig> gpu_configs(const TileGraph& tg, const GpuMachine& gpu, int limit);
std::vector<ScoredGpuConfig> gpu_configs(const TileGraph& tg, const GpuMachine& gpu, int limit,
                                         const GpuKernelForm& form);

}  // namespace orch::schedule
