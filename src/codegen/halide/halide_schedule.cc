// Scheduling: outputs tiled and parallel over tiles, the inner dim vectorized; intermediates
// inlined, computed per output tile, or computed whole (root); linear primitives register-blocked.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/halide/halide_lower.h"

namespace orch::codegen {
namespace {

// About this many elements per output tile: a few KiB of f32, well inside L1.
constexpr int64_t kTileElements = 2048;
constexpr int64_t kInnerTile = 256;
// The most iterations of a reduction loop unrolled (a tile config's reduce step can be a row).
constexpr int kMaxUnroll = 8;
// The most window taps a reduction over a stacked window unrolls whole (pooling's 5x5 is 25).
constexpr int kMaxStackUnroll = 32;
// The widest row a default tile keeps whole when the kernel reduces rows.
constexpr int64_t kMaxRowTile = 16384;
// A row reduction's partial results: this many vectors, at most kMaxPartialLanes lanes.
constexpr int kAccumulators = 4;
// A linear stage's register block with few rows: this many accumulators, as many FMA chains as
// keep the FMA units busy. Candy's last convolution (32 -> 3 channels, 9x9) had one accumulator
// per reduction step, each FMA waiting on the one before: 46.8 ms on two threads against
// oneDNN's 11.6.
constexpr int kLinearAccumulators = 8;
constexpr int kMaxPartialLanes = 32;

std::vector<int64_t> default_tile(const Shape& shape) {
  std::vector<int64_t> tile(shape.size(), 1);
  if (shape.empty()) return tile;
  size_t r = shape.size();
  tile[r - 1] = std::min(shape[r - 1], kInnerTile);
  if (r >= 2) tile[r - 2] = std::clamp<int64_t>(kTileElements / tile[r - 1], 1, shape[r - 2]);
  return tile;
}

bool is_conv(const std::string& op) {
  return op == "prim.Conv" || op == "prim.ConvTranspose";
}

// A conv output tile: a block of 8 output channels (dim 1) over about kTileElements / 8 pixels.
std::vector<int64_t> conv_tile(const Shape& shape) {
  std::vector<int64_t> tile = default_tile(shape);
  size_t r = shape.size();
  tile[1] = std::min<int64_t>(shape[1], 8);
  if (r >= 4) tile[r - 2] = std::clamp<int64_t>(kTileElements / (8 * tile[r - 1]), 1, shape[r - 2]);
  return tile;
}

// Whether a Reduce of the kernel reduces the innermost dim of its input (softmax rows).
bool reduces_rows(const Graph& kernel) {
  for (const Node& n : kernel.nodes()) {
    if (n.op != "prim.Reduce") continue;
    int64_t last = static_cast<int64_t>(kernel.value(n.inputs[0]).type.shape.size()) - 1;
    for (int64_t a : attr_ints(n.attrs, "axes"))
      if (a == last || a == -1) return true;
  }
  return false;
}

}  // namespace

HalideSchedule default_halide_schedule(const Graph& kernel) {
  HalideSchedule s;
  bool conv = false;
  for (const Node& n : kernel.nodes()) conv = conv || is_conv(n.op);
  bool rows = reduces_rows(kernel);
  for (ValueId v : kernel.outputs()) {
    const Shape& shape = kernel.value(v).type.shape;
    s.tiles[v] = conv && shape.size() >= 3 ? conv_tile(shape) : default_tile(shape);
    // A tile of part of a row would recompute the row's reductions per tile.
    if (rows && !conv && !shape.empty() && shape.back() <= kMaxRowTile) {
      std::vector<int64_t>& tile = s.tiles[v];
      tile.back() = shape.back();
      if (shape.size() >= 2)
        tile[shape.size() - 2] =
            std::clamp<int64_t>(kTileElements / shape.back(), 1, shape[shape.size() - 2]);
    }
  }
  for (const Node& n : kernel.nodes())
    for (ValueId v : n.outputs)
      s.placement[v] = n.op == "prim.Reduce" || n.op == "prim.MatMul" || is_conv(n.op)
                           ? HalidePlacement::tile
                           : HalidePlacement::inline_;
  return s;
}

namespace halide_impl {
namespace {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;

// Where a stage is computed: -1 at root, otherwise inside the tile loop of output i.
constexpr int kRoot = -1;

struct OutputLoops {
  Halide::LoopLevel tile = Halide::LoopLevel::root();
};

OutputLoops schedule_output(Func& out, const Shape& shape, std::vector<int64_t> tile,
                            const HalideSchedule& s, const std::vector<Var>& vars, int id) {
  size_t r = shape.size();
  OutputLoops loops;
  if (r == 0) return loops;
  tile.resize(r, 0);
  std::vector<Halide::VarOrRVar> inner, outer;
  std::vector<Var> outer_vars;
  int parallel_outer = -1;
  // Tensor dim d is Halide var r-1-d; walk innermost first.
  for (size_t d = r; d-- > 0;) {
    Var v = vars[r - 1 - d];
    int64_t t = tile[d] <= 0 ? shape[d] : std::min(tile[d], shape[d]);
    if (t >= shape[d]) {
      inner.emplace_back(v);
    } else if (t == 1) {
      outer.emplace_back(v);
      outer_vars.push_back(v);
      if (static_cast<int>(d) == s.parallel_dim)
        parallel_outer = static_cast<int>(outer.size()) - 1;
    } else {
      Var o(v.name() + "_o" + std::to_string(id)), i(v.name() + "_i" + std::to_string(id));
      out.split(v, o, i, static_cast<int>(t), TailStrategy::ShiftInwards);
      inner.emplace_back(i);
      outer.emplace_back(o);
      outer_vars.push_back(o);
      if (static_cast<int>(d) == s.parallel_dim)
        parallel_outer = static_cast<int>(outer.size()) - 1;
    }
  }
  std::vector<Halide::VarOrRVar> order = inner;
  order.insert(order.end(), outer.begin(), outer.end());
  if (order.size() > 1) out.reorder(order);
  int64_t inner_extent = tile[r - 1] <= 0 ? shape[r - 1] : std::min(tile[r - 1], shape[r - 1]);
  if (s.vector_width > 1 && inner_extent >= s.vector_width)
    out.vectorize(inner[0].var, s.vector_width, TailStrategy::ShiftInwards);
  if (outer_vars.empty()) {
    loops.tile = Halide::LoopLevel(out, Var::outermost());
    return loops;
  }
  if (s.parallel_dim >= 0) {
    Var tile_loop = outer_vars[0];
    if (parallel_outer >= 0) {
      Var p = outer_vars[parallel_outer];
      int64_t d = s.parallel_dim;
      int64_t t = tile[d] <= 0 ? shape[d] : std::min(tile[d], shape[d]);
      int64_t n = (shape[d] + t - 1) / t;
      if (s.parallel_tasks > 0 && n > s.parallel_tasks) {
        // Contiguous runs of tiles per task: each thread streams one region (what hardware
        // prefetchers follow) and the thread pool dispatches a few tasks instead of every tile.
        Var task(p.name() + "_task"), run(p.name() + "_run");
        out.split(p, task, run, static_cast<int>((n + s.parallel_tasks - 1) / s.parallel_tasks),
                  TailStrategy::GuardWithIf);
        out.parallel(task);
        if (parallel_outer == 0) tile_loop = run;
      } else {
        out.parallel(p);
      }
    }
    loops.tile = Halide::LoopLevel(out, tile_loop);
    return loops;
  }
  Var fused = outer_vars[0];
  for (size_t i = 1; i < outer_vars.size(); ++i) {
    Var f(fmt::format("tile{}_{}", id, i));
    out.fuse(fused, outer_vars[i], f);
    fused = f;
  }
  if (s.parallel_dim == -1) out.parallel(fused);
  loops.tile = Halide::LoopLevel(out, fused);
  return loops;
}

// Register block of a linear stage: vectors of the innermost output dim times up to 4 of `rows`
// (MatMul rows, conv output channels) accumulate in registers while the reduction runs outside.
// With fewer than 4 rows, all of them times several vectors, kLinearAccumulators in all.
void register_block(Halide::Stage u, const LoweredValue& lv, const Shape& shape, Var col, Var rows,
                    int64_t rows_extent, int vw, bool root, const std::vector<Var>& vars) {
  size_t r = shape.size();
  bool vec = vw > 1 && shape[r - 1] >= vw;
  int64_t block_rows = std::min<int64_t>(rows_extent, 4);
  int64_t vectors = 1;
  if (vec && block_rows < 4)
    vectors = std::min((kLinearAccumulators + block_rows - 1) / block_rows, shape[r - 1] / vw);
  Var ji("ji"), jv("jv"), jo("jo"), ii("ii"), io("io");
  std::vector<Halide::VarOrRVar> order;
  if (vec && vectors > 1) {
    // Vectors first, then blocks of them: a block past the row's end is a scalar test of jv.
    Var jw("jw");
    u.split(col, jw, ji, vw, TailStrategy::GuardWithIf);
    u.split(jw, jo, jv, static_cast<int>(vectors), TailStrategy::GuardWithIf);
    order.emplace_back(ji);
    order.emplace_back(jv);
  } else if (vec) {
    u.split(col, jo, ji, vw, TailStrategy::GuardWithIf);
    order.emplace_back(ji);
  } else {
    order.emplace_back(col);
  }
  bool block = block_rows > 1;
  if (block) {
    u.split(rows, io, ii, static_cast<int>(block_rows), TailStrategy::GuardWithIf);
    order.emplace_back(ii);
  } else {
    order.emplace_back(rows);
  }
  for (int k = 0; k < lv.rdom.dimensions(); ++k) order.emplace_back(lv.rdom[k]);
  if (vec) order.emplace_back(jo);
  if (block) order.emplace_back(io);
  u.reorder(order);
  if (vec) u.vectorize(ji);
  if (vectors > 1) u.unroll(jv);
  if (block) u.unroll(ii);
  if (root && r >= 3 && shape[0] > 1)
    u.parallel(vars[r - 1]);
  else if (root && block)
    u.parallel(io);
}

// Whether a Reduce's innermost reduction runs along the innermost input dim (rows of softmax,
// LayerNorm): its output's innermost dim is 1, so only splitting the reduction vectorizes it.
bool row_reduction(const Node& n, const Shape& shape) {
  std::vector<int64_t> axes = attr_ints(n.attrs, "axes");
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  return n.op == "prim.Reduce" &&
         std::any_of(axes.begin(), axes.end(), [&](int64_t a) { return a == last || a == -1; });
}

// Whether Reduce `n` reduces a stack its kernel builds: a Concat, seen through Reshapes (a
// pooling window's strided Slices, stacked on a new axis by fission).
bool reduces_a_stack(const Graph& kernel, const Node& n) {
  if (n.op != "prim.Reduce") return false;
  NodeId p = kernel.value(n.inputs[0]).producer;
  while (p != kNoNode && kernel.node(p).op == "prim.Reshape")
    p = kernel.value(kernel.node(p).inputs[0]).producer;
  return p != kNoNode && kernel.node(p).op == "prim.Concat";
}

// The loops of a stage computed at a tile or root: inner dim vectorized, linear stages
// register-blocked, row reductions split into vector lanes of partial results, reductions over
// a stacked window unrolled.
void schedule_stage(Func& f, const LoweredValue& lv, const Node& n, const Shape& shape,
                    const HalideSchedule& s, bool root, const std::vector<Var>& vars, bool stack) {
  size_t r = shape.size();
  if (r == 0) return;
  int vw = s.vector_width;
  bool vec = vw > 1 && shape[r - 1] >= vw;
  if (vec) f.vectorize(vars[0], vw, TailStrategy::GuardWithIf);
  if (root && r >= 2 && shape[0] > 1) f.parallel(vars[r - 1]);
  if (!f.has_update_definition()) return;
  Halide::Stage u = f.update();
  if (n.op == "prim.MatMul")
    return register_block(u, lv, shape, vars[0], vars[1], shape[r - 2], vw, root, vars);
  if (is_conv(n.op))
    return register_block(u, lv, shape, vars[0], vars[r - 2], shape[1], vw, root, vars);
  if (vec) u.vectorize(vars[0], vw, TailStrategy::GuardWithIf);
  if (root && r >= 2 && shape[0] > 1) u.parallel(vars[r - 1]);
  Halide::RVar inner = lv.rdom[0];
  auto it = s.reduce_steps.find(n.outputs[0]);
  int step = it != s.reduce_steps.end() ? it->second : s.reduce_step;
  const int64_t* extent = Halide::Internal::as_const_int(lv.rdom[0].extent());
  if (extent == nullptr) return;
  // Unrolled, each step's position in the Concat is a constant, so the select among its pieces
  // folds to one load; looped, every step selects among all of them.
  if (stack && *extent <= kMaxStackUnroll) {
    u.unroll(inner);
    return;
  }
  if (!vec && vw > 1 && *extent >= 2 * vw && row_reduction(n, shape)) {
    // Partial results, one per lane, reduced into the row at the end (rfactor); several vectors
    // of them, so that consecutive steps do not wait on one another's latency.
    int lanes = std::max(vw, std::min(vw * kAccumulators, kMaxPartialLanes));
    while (lanes > vw && *extent < 2 * lanes) lanes /= 2;
    Halide::RVar ro("ro"), ri("ri");
    Var lane("lane");
    u.split(inner, ro, ri, lanes, TailStrategy::GuardWithIf);
    Func partial = u.rfactor(ri, lane);
    partial.compute_at(f, vars[0]).vectorize(lane);
    partial.update().vectorize(lane);
    return;
  }
  // Only exact splits: a guarded tail would add a branch to every reduction step. The step is
  // an unroll factor here, so it is capped.
  step = std::min(step, kMaxUnroll);
  if (step > 1 && *extent % step == 0 && *extent > step) {
    Halide::RVar ro("ro"), ri("ri");
    u.split(inner, ro, ri, step).unroll(ri);
  }
}

}  // namespace

void apply_schedule(Lowered& lowered, const Graph& kernel, const HalideSchedule& s) {
  HalideSchedule defaults = default_halide_schedule(kernel);
  std::vector<Halide::LoopLevel> tiles;
  for (size_t i = 0; i < kernel.outputs().size(); ++i) {
    ValueId v = kernel.outputs()[i];
    auto it = s.tiles.find(v);
    std::vector<int64_t> tile = it != s.tiles.end() ? it->second : defaults.tiles.at(v);
    tiles.push_back(schedule_output(lowered.outputs[i], kernel.value(v).type.shape, tile, s,
                                    lowered.vars, static_cast<int>(i))
                        .tile);
  }
  // Walk consumers before producers: each stage's location is the set of output tiles whose
  // loops evaluate it (inline stages inherit their consumers' set); a tile placement needs one.
  std::vector<std::set<int>> where(kernel.num_values());
  for (size_t i = 0; i < kernel.outputs().size(); ++i)
    where[kernel.outputs()[i]].insert(static_cast<int>(i));
  auto consumers = kernel.consumers();
  for (NodeId id = static_cast<NodeId>(kernel.num_nodes()); id-- > 0;) {
    const Node& n = kernel.node(id);
    ValueId v = n.outputs[0];
    std::set<int>& loc = where[v];
    for (NodeId c : consumers[v]) {
      const std::set<int>& cl = where[kernel.node(c).outputs[0]];
      loc.insert(cl.begin(), cl.end());
    }
    auto it = s.placement.find(v);
    HalidePlacement p = it != s.placement.end() ? it->second : defaults.placement.at(v);
    LoweredValue& lv = lowered.values[v];
    const Shape& shape = kernel.value(v).type.shape;
    if (p == HalidePlacement::inline_ && !lv.func.has_update_definition()) continue;
    bool tile = p != HalidePlacement::root && loc.size() == 1 && *loc.begin() != kRoot;
    if (tile) {
      lv.func.compute_at(tiles[*loc.begin()]);
    } else {
      lv.func.compute_root();
      loc = {kRoot};
    }
    schedule_stage(lv.func, lv, n, shape, s, !tile, lowered.vars, reduces_a_stack(kernel, n));
  }
}

}  // namespace halide_impl
}  // namespace orch::codegen
