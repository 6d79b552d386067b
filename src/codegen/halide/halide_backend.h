// The Halide backend (issue 9): a candidate kernel graph of primitives becomes a Halide pipeline
// (a Func per primitive, an RDom per reduction, one Pipeline with every kernel output), scheduled
// from a HalideSchedule, JIT-compiled for profiling or compiled ahead of time to an object file.
// Halide.h stays inside src/codegen/halide; this header does not include it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/kernel.h"

namespace orch::schedule {
struct TileConfig;
}

namespace orch::codegen {

/// Where an intermediate value of a kernel is computed.
enum class HalidePlacement : uint8_t {
  inline_,  // recomputed in its consumer's expression (register level)
  tile,     // computed per tile of the output that consumes it (L1/L2 level)
  root,     // computed whole before its consumers (memory level)
};

/// A schedule for one kernel; the tile-graph scheduler's config maps onto it.
struct HalideSchedule {
  /// Tile size per dim of each output (row-major order, like the tensor); a missing entry or 0
  /// means the whole dim. Outputs not listed get the default tiling.
  std::map<ValueId, std::vector<int64_t>> tiles;
  /// The output dim whose tile loop runs in parallel; -1: the tile loops of all dims fused into
  /// one parallel loop; -2: no parallelism.
  int parallel_dim = -1;
  /// SIMD lanes for the innermost dim (1: scalar).
  int vector_width = 16;
  /// With parallel_dim >= 0: the tiles along it grouped into this many parallel tasks of
  /// consecutive tiles (0: one task per tile).
  int parallel_tasks = 0;
  /// Placement of intermediate values (produced by a node, not a kernel output); values not
  /// listed get the default placement.
  std::map<ValueId, HalidePlacement> placement;
  /// Split of the innermost reduction loop (0: none), the inner part unrolled (at most 8, exact
  /// splits only: a tile config's step can be a whole row). A row reduction (along the input's
  /// innermost dim, so its output has nothing to vectorize) is split into `vector_width` lanes
  /// of partial results instead (rfactor), reduced at the end.
  int reduce_step = 0;
  /// Per Reduce value, a reduce step overriding `reduce_step`.
  std::map<ValueId, int> reduce_steps;
  bool operator==(const HalideSchedule&) const = default;
};

/// The default schedule for `kernel`, derived from its shapes: each output tiled (rows x the
/// whole or 256-wide inner dim; whole rows when the kernel reduces rows; 8 output channels when
/// it has a convolution), the outer tile loop parallel, the inner dim vectorized by 16;
/// reductions and linear primitives at the output tile (root when several outputs read them),
/// register-blocked; everything else inlined.
HalideSchedule default_halide_schedule(const Graph& kernel);

/// The schedule a tile-graph configuration (schedule::search_tiles over the same kernel graph)
/// stands for: the root output tiled by `config.tile` (other outputs by its projection, size-1
/// dims whole), levels -> placement (0 inline, a cache level -> per output tile, main memory ->
/// root), the innermost reduce step of each reduction, the vector width, the parallel dim and its
/// task count.
HalideSchedule halide_schedule_from_tile_config(const Graph& kernel,
                                                const schedule::TileConfig& config);

/// A stable one-line text form of a schedule (value ids are the kernel graph's), e.g.
/// "parallel=0 vector=8 reduce_step=0 tasks=16 tile.7=1,64 place.3=inline reduce.3=16" (tasks
/// only when set); fields in a fixed order, so equal schedules print equal text.
std::string halide_schedule_to_text(const HalideSchedule& schedule);

/// Parses halide_schedule_to_text's form (exact round trip; "" parses to HalideSchedule{}).
/// Throws Error naming the bad field.
HalideSchedule halide_schedule_from_text(std::string_view text);

/// "" when Halide can generate `kernel`, otherwise why not.
std::string halide_reject(const Graph& kernel);

/// A JIT-compiled kernel plus what compiling it cost.
struct HalideKernel {
  std::unique_ptr<Kernel> kernel;
  double compile_seconds = 0;      // wall clock: lowering, scheduling and LLVM
  double compile_cpu_seconds = 0;  // CPU time of the compiling thread (steady under load)
};

/// Lowers, schedules (`schedule`, or the default when null) and JIT-compiles `kernel`. Throws
/// Error (Unsupported for what halide_reject names) with Halide's message on any failure.
HalideKernel halide_jit(const Graph& kernel, const HalideSchedule* schedule = nullptr);

/// Lowers `kernel`, lets one of Halide's own autoschedulers schedule it ("Mullapudi2016",
/// "Adams2019" or "Li2018": the plugins Debian's libhalide14 ships) for a machine of `cores`
/// cores and a last-level cache of `llc_bytes`, and JIT-compiles it: the baseline the tile-graph
/// schedules are compared with (bench/halide_bench.cc). Throws Unsupported when the plugin is
/// missing, Error when the autoscheduler fails.
HalideKernel halide_jit_autoscheduled(const Graph& kernel, const std::string& autoscheduler,
                                      int cores, int64_t llc_bytes);

/// Writes `<path_prefix>.o` and `<path_prefix>.h`: a C function `function_name` taking one
/// halide_buffer_t* per kernel input then per kernel output (row-major tensors appear with their
/// dims reversed, innermost first). Uses the host target. Throws Error on failure.
void halide_compile_to_object(const Graph& kernel, const std::string& path_prefix,
                              const std::string& function_name,
                              const HalideSchedule* schedule = nullptr);

/// The backend entry (reject + compile with the default schedule).
const Backend& halide_backend();

}  // namespace orch::codegen
