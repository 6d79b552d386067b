// Private to src/codegen/cuda: the pieces cuda_source.cc assembles into a kernel's CUDA C.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_source.h"
#include "codegen/resize_taps.h"
#include "ir/graph.h"
#include "schedule/gpu/gpu_staging.h"
#include "schedule/gpu/gpu_tiles.h"
#include "schedule/tile_graph.h"

namespace orch::codegen::cuda_impl {

/// The C type a tensor of `dtype` is stored as (bool as unsigned char, f16 and bf16 as their
/// bits in unsigned short).
std::string storage_type(DType dtype);

/// The C type a value of `dtype` is computed in: the storage type, bool for bool, float for f16
/// and bf16 (rounded to their precision after every primitive, as the interpreter stores them).
std::string value_type(DType dtype);

/// f16 or bf16: stored as bits, computed in float.
bool half_float(DType dtype);

/// An element read from storage (`stored`, an lvalue) as a value, and a value as what to store.
std::string from_storage(DType dtype, const std::string& stored);
std::string to_storage(DType dtype, const std::string& value);

/// `value` (a float) rounded to `dtype`'s precision for f16 and bf16 (orch_rh, orch_rb); as it
/// is otherwise.
std::string rounded(DType dtype, const std::string& value);

/// A float (`single`) or double literal of `v` that round-trips, infinities and NaN included.
std::string float_literal(double v, bool single);

/// A literal of `dtype` holding element `i` of `t`, in the value type.
std::string literal(DType dtype, const Tensor& t, int64_t i);
/// The same in the storage type: f16 and bf16 as their bits.
std::string storage_literal(DType dtype, const Tensor& t, int64_t i);

/// The C parameter types of every __global__ function of `kernel` (cuda_source.h's convention).
std::vector<std::string> parameter_types(const Graph& kernel);

/// The helper functions (orch_*) generated code calls, written once for device and host: they
/// use ORCH_FN, which each prelude defines.
std::string helper_functions();

/// The host prelude's race check (cuda_race_check.cc): ORCH_SHARED, ORCH_GLOBAL and ORCH_SCRATCH
/// arrays whose every access is checked against the block's barriers and the launch's other
/// threads. Expects <stdio.h>, threadIdx, blockIdx, orch_shared and orch_shared_bytes declared
/// before it; ORCH_SCRATCH expects the kernel's `scratch` parameter.
std::string host_race_check();

/// What host-compiled kernel source starts with instead of cuda_prelude(): the CUDA names the
/// generated code uses (__global__, threadIdx, ...) defined for a serial run, then the helpers.
std::string host_prelude();

/// "" when prim.Elementwise `fn` on `dtype` inputs is generated, otherwise why not.
std::string elementwise_reason(const std::string& fn, DType dtype);

/// The C expression of prim.Elementwise `fn` over operand expressions `a` (value types); `in` is
/// the dtype of the operands (of the selected ones for where), `out` the result's.
std::string elementwise_expr(const std::string& fn, const std::vector<std::string>& a, DType in,
                             DType out);

/// prim.Elementwise pow's C expression, as the interpreter computes it: in the base's type, the
/// exponent of its own (ONNX Pow); integers exactly, wrapping, for exponents that are not
/// negative integers.
std::string pow_expr(const std::string& base, const std::string& exponent, DType base_type,
                     DType exponent_type);

/// Reduction node `n`'s accumulator `acc` combined with a term `x` (C expressions): a sum for
/// MatMul and Conv, the Reduce's kind otherwise.
std::string combine(const Graph& g, const Node& n, const std::string& acc, const std::string& x);

/// The identity reduction node `n`'s accumulator starts from (a literal of its value type).
std::string initial_value(const Graph& g, const Node& n);

/// Where the emitter reads a value from.
struct ValueHome {
  enum Kind { inline_, pointer, array, scalar, shared } kind = inline_;
  std::string name;  // the pointer or array name, or the scalar's literal
  /// A shared array holds a box of the value: `size` elements per dim from `origin` (C
  /// expressions); reads are row-major offsets into it, checked on the host (ORCH_IN).
  std::vector<std::string> origin;
  std::vector<int64_t> size;
  int64_t pitch = 0;  // elements a row of the array takes: the innermost size, perhaps padded
};

/// File-scope definitions (baked tables) shared by the phases of one kernel.
struct Globals {
  std::string prefix;
  std::string text;
  std::set<std::string> defined;
};

/// A C expression and the depth of the innermost reduction loop whose variable it reads (0: none).
struct CExpr {
  std::string text;
  int depth = 0;
};

/// The statements of one phase's element body: computes a value at output coordinates whose
/// names are given (long long variables), inlining producers and hoisting what a reduction loop
/// does not change out of it.
class PhaseEmitter {
 public:
  PhaseEmitter(const Graph& kernel, const std::vector<ValueHome>& homes, Globals& globals);

  /// Emits the statements computing `v` (its defining node, even when v has a home) at
  /// coordinates `coords`; returns the expression of the result (value type).
  std::string compute(ValueId v, const std::vector<std::string>& coords);

  /// From now on, the reduction computing `value` is emitted as one term of the caller's loops:
  /// reduce axis a (in its index map's order) is the variable loop_vars[a], and the term is
  /// added into `acc`, which the caller declares and initializes (initial_value).
  void accumulate_into(ValueId value, std::string acc, std::vector<std::string> loop_vars);

  /// Emits the statements reading `v` at `coords`: from its home, computed when inlined.
  std::string read(ValueId v, const std::vector<std::string>& coords);

  /// The statements emitted so far.
  std::string code() const;

 private:
  using Ix = CExpr;
  struct Scope {
    std::vector<std::string> lines;
    std::map<std::string, std::string> memo;
  };

  Ix at(ValueId v, const std::vector<Ix>& idx);
  Ix define(ValueId v, const std::vector<Ix>& idx);
  Ix load(ValueId v, const std::vector<Ix>& idx);
  Ix local(DType dtype, const Ix& e);
  Ix reduce(const Node& n, const std::vector<Ix>& idx);
  Ix matmul(const Node& n, const std::vector<Ix>& idx);
  Ix conv(const Node& n, const std::vector<Ix>& idx);
  Ix resize(const Node& n, const std::vector<Ix>& idx);
  /// A resize's axes: their taps, and the periodic form where one exists.
  struct ResizeAxes {
    std::vector<ResizeTaps> taps;
    std::vector<std::optional<PeriodicTaps>> periodic;
  };
  Ix resize_stage(const Node& n, const ResizeAxes& axes, size_t end, const std::vector<Ix>& idx);
  Ix concat(const Node& n, const std::vector<Ix>& idx);
  Ix pad(const Node& n, const std::vector<Ix>& idx);
  Ix gather(const Node& n, const std::vector<Ix>& idx);
  std::vector<Ix> reshape(const Node& n, const std::vector<Ix>& idx);
  Ix data_index(const Ix& i, int64_t n);
  Ix index_local(const Ix& e);
  Ix open_loop(int64_t extent);
  bool external(const Node& n) const;
  std::string accumulator(const Node& n);
  Ix reduce_loop(const Node& n, size_t axis, int64_t extent);
  void close_reduce_loops(const Node& n, size_t count);
  void close_loop();
  void emit(int depth, std::string line);
  const Shape& shape(ValueId v) const { return g_.value(v).type.shape; }
  DType dtype(ValueId v) const { return g_.value(v).type.dtype; }

  const Graph& g_;
  const std::vector<ValueHome>& homes_;
  Globals& globals_;
  std::vector<Scope> scopes_;
  std::vector<std::string> loop_headers_;  // of scopes_[1..]
  int next_ = 0;
  struct External {
    ValueId value = kNoValue;
    std::string acc;
    std::vector<std::string> loop_vars;
  };
  std::optional<External> external_;
};

/// A reduction accumulated by the caller's loops, and the epilogue that reads its total.
struct Accumulation {
  std::string type, init;  // the accumulator's C type and initial value
  std::string term;        // statements adding one term into the accumulator
  std::string epilogue;    // statements computing the phase's value from the total
  std::string result;      // the phase's value
};

/// Reduction node `r` accumulated into `acc` with its reduce axes the caller's `vars` (C
/// expressions, in its index map's order), and the epilogue computing `v` (at `coords`) from its
/// total; the total's element is `total_coords` (empty: `coords`, the total shaped as v).
Accumulation accumulate(const Graph& kernel, ValueId v, NodeId r, const std::string& acc,
                        const std::vector<std::string>& vars,
                        const std::vector<std::string>& coords, std::vector<ValueHome> homes,
                        Globals& globals, const std::vector<std::string>& total_coords = {});

/// A reduction's terms indexed by one flat variable `rr`, the last axis fastest: the C
/// expression of each reduce axis of `extents` (accumulate's `vars`), and the volume rr spans.
struct FlatReduce {
  std::vector<std::string> vars;
  int64_t volume = 1;
};
FlatReduce flat_reduce(const std::vector<int64_t>& extents);

/// The statement combining reduction node `reduce`'s accumulator `acc` across `lanes`
/// consecutive lanes of a warp (a power of two, at most a warp) with xor shuffles.
std::string shuffle_combine(const Graph& g, const Node& reduce, int64_t lanes);

/// The statements combining `acc` across a group of `lanes` consecutive lanes (a power of two,
/// up to a block; `lane` is a thread's index in its group): shuffles within each warp, then, for
/// a group wider than a warp, each warp's lane 0 leaves its total in `partials` (a shared array
/// of one accumulator, of C type `type`, per warp of the block) and, after a barrier every
/// thread of the block reaches, the group's lane 0 adds those of the group's other warps.
std::string group_combine(const Graph& g, const Node& reduce, int64_t lanes,
                          const std::string& partials, const std::string& type);

/// The statement declaring `name`, an array of `type` at byte `offset` of the block's dynamic
/// shared memory (ORCH_SHARED: a pointer on the device; on the host, one whose every access the
/// emulator checks against the block's barriers).
std::string shared_declaration(const std::string& type, const std::string& name, int64_t offset);

/// Whether warp shuffles move an accumulator of `dtype` (f32, f64, i32, i64).
bool shuffled(DType dtype);

/// Threads of a warp.
inline constexpr int64_t kWarp = 32;

/// What a block of the root phase holds in shared memory: `once` before its thread tiles (after
/// the block index b0.. is defined), `per_step` at the start of each reduce step (after the step
/// index ks0.. is defined). A staged value is copied cooperatively into an array of the block's
/// dynamic shared memory (orch_shared, laid out from offset 0), a computed one reduced into it
/// by groups of lanes; a barrier follows each, and the value's home becomes that array.
struct StagedCode {
  std::string once, per_step;
  int64_t bytes = 0;  // of orch_shared the arrays use
};

/// The values computing `v` (its defining node) reads: its inputs, and those of every value it
/// computes itself, which `through` marks (per value).
std::vector<bool> values_read(const Graph& kernel, ValueId v, const std::vector<bool>& through);

/// The values the phase of `root` reads (values_read through the inlined `homes`), and those
/// the values `computed` marks read: what its block may stage.
std::vector<bool> root_phase_reads(const Graph& kernel, ValueId root,
                                   const std::vector<bool>& computed,
                                   const std::vector<ValueHome>& homes);

/// The materialized values the root phase of `tg` could compute per block into shared memory,
/// instead of a phase of their own writing them to scratch (Welder's block-level fusion: the
/// statistics of a softmax or a layer norm row): results of prim.Reduce, MatMul or Conv with an
/// index map that no kernel output but the root reads, whose regions move affinely with the block
/// (schedule::affinely_placed).
std::vector<bool> block_candidates(const schedule::TileGraph& tg,
                                   const std::vector<bool>& materialized);

/// The candidates the root phase computes, given the config's `regions` (staged_regions with
/// the candidates): each needs a region that does not move with a reduce step, no phase of its
/// own may read it (every materialized value reading it is computed too), and their arrays fit
/// `shared_limit` bytes together, readers chosen first. `homes` gives every materialized value
/// a home that is not inline.
std::vector<bool> computed_values(const Graph& kernel, const std::vector<bool>& candidates,
                                  const std::vector<bool>& materialized,
                                  const std::vector<schedule::StagedRegion>& regions,
                                  const std::vector<ValueHome>& homes, int64_t shared_limit);

/// The code of the root phase's shared memory for `regions`: the `computed` values
/// (computed_values) computed by the block's `threads`, then the staged regions the phase reads
/// copied, within `shared_limit` bytes in all (the rest stays in memory).
StagedCode stage_regions(const schedule::TileGraph& tg,
                         const std::vector<schedule::StagedRegion>& regions,
                         const std::vector<bool>& computed, int threads, int64_t shared_limit,
                         std::vector<ValueHome>& homes, Globals& globals);

/// The reduction a phase computes one warp per element of `v` (value_phase without a tile
/// config, and a root the stitcher gives none, cuda_warp_root): the one prim.Reduce it computes
/// inline (perhaps under an elementwise epilogue, perhaps reshaped: v's elements are its
/// elements in row-major order), over the innermost dims of its input (so that a warp's lanes
/// read consecutive elements) and at least a warp long, on a type warp shuffles move. kNoNode
/// otherwise: one thread per element.
NodeId warp_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes);

/// The lanes per element of `v` in its phase of `threads` per block when `r` (warp_reduction)
/// computes it: a warp, widened while the grid would be small (lanes_per_element).
int64_t warp_lanes(const Graph& kernel, ValueId v, NodeId r, int threads);

/// `text` with every non-empty line indented by `spaces`.
std::string indent(const std::string& text, int spaces);

/// Threads per block of a launch without the root's phase.
inline constexpr int kDefaultThreads = 256;

/// One phase of a kernel: its code, which reads `bx` (the block's index among the phase's
/// blocks) and threadIdx.x, and its share of a launch.
struct Phase {
  std::string code;
  int64_t blocks = 1;
  int threads = 1;
  int64_t shared_bytes = 0;  // dynamic shared memory of a block
};

/// What a root phase's block does besides its thread tiles: the one reduction they accumulate
/// in registers, the regions it holds in shared memory, and which of them it computes there.
struct RootPlan {
  NodeId reduction = kNoNode;
  std::vector<schedule::StagedRegion> regions;
  std::vector<bool> computed;                      // per value
  int64_t shared_limit = kCudaDefaultSharedLimit;  // bytes of shared memory a block may use
};

/// The root's plan under `config`, its block using at most `shared_limit` bytes of shared
/// memory; the values it computes lose their phase (`materialized`). `homes` has every
/// materialized value in memory.
RootPlan plan_root(const Graph& kernel, const schedule::TileGraph& tg,
                   const schedule::GpuTileConfig& config, int64_t shared_limit,
                   std::vector<bool>& materialized, const std::vector<ValueHome>& homes);

/// The root output's phase under `config`, writing `dest`: one block per block tile, one thread
/// per thread tile.
Phase root_phase(const Graph& kernel, const schedule::TileGraph& tg,
                 const schedule::GpuTileConfig& config, const RootPlan& plan,
                 const std::string& dest, const std::vector<ValueHome>& homes, Globals& globals);

/// The phase of any other value `v`, writing `dest` with `threads` per block: one warp per
/// element of a row reduction over at least a warp's elements (when `threads` is whole warps),
/// otherwise one thread per element.
Phase value_phase(const Graph& kernel, ValueId v, const std::string& dest, int threads,
                  const std::vector<ValueHome>& homes, Globals& globals);

/// The one reduction (prim.Reduce, MatMul or Conv) the phase of `v` computes inline, of any
/// shape: v itself or a value only inlined values between it and v read. kNoNode when the
/// phase computes none or several.
NodeId inline_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes);

/// Whether every value the phase of `v` computes from reduction `r`'s total (v included) keeps
/// the total's elements where they are in row-major order: an Elementwise result (or, with
/// `reshapes`, a Reshape result) with the total's count of elements. A transpose, even one that
/// keeps the shape, moves them; a broadcast repeats them.
bool elements_in_order(const Graph& kernel, NodeId r, ValueId v,
                       const std::vector<ValueHome>& homes, bool reshapes);

/// The one reduction the phase of `v` computes inline at v's coordinates (v itself, or what
/// only v's elementwise epilogue reads, its elements in place: elements_in_order): what a root
/// phase's thread tiles accumulate in registers (a reduce step at a time under a config with a
/// reduce step), or a warp reduces. kNoNode when the phase computes none or several.
NodeId accumulated_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes);

}  // namespace orch::codegen::cuda_impl
