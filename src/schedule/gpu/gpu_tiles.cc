// Welder's GPU configurations: staging, legality, occupancy, coalescing and the analytic time.
#include "schedule/gpu/gpu_tiles.h"

#include "schedule/gpu/gpu_coalescing.h"
#include "schedule/gpu/gpu_staging.h"

#include <algorithm>
#include <limits>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::schedule {
namespace {

// On cc 8.0 and later the system reserves 1 KB of shared memory per resident block (CUDA C
// Programming Guide): 228 KB per SM holds one block of the 227 KB opt-in maximum.
constexpr int64_t kReservedSharedPerBlock = 1024;
// Registers are allocated to a warp in units of 256 (the CUDA occupancy calculator).
constexpr int64_t kRegisterUnitPerWarp = 256;
// Thread tiles above 64 elements would not fit their outputs and accumulators in 255 registers.
constexpr int64_t kMaxThreadElements = 64;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

int64_t reduce_volume(const TileGraph& tg, NodeId n) {
  int64_t v = 1;
  if (tg.maps[n])
    for (int64_t e : tg.maps[n]->reduce_extents) v *= e;
  return v;
}

int64_t esize_of(const Graph& g, ValueId v) {
  return static_cast<int64_t>(dtype_size(g.value(v).type.dtype));
}

// A one-element constant is an immediate in generated code: no memory access at all.
bool immediate(const Value& value) {
  return value.is_constant() && value.constant.numel() == 1;
}

// Everything about a block tile that does not depend on the thread tile.
struct BlockPlan {
  TileRegions tiles;
  int64_t reduce_step = 0;
  std::vector<bool> staged;   // per value
  int64_t shared_bytes = 0;   // interior block, without the computed values' partials
  int64_t computed = 0;       // values computed into shared memory, each with its partials
  int64_t flops = 0;          // all blocks
  int64_t accumulators = 0;   // 32-bit words per output element kept in registers
  std::vector<int64_t> once;  // whole_phase_evaluations, the same for every block tile
};

// Whether some consumer reads `v` with reuse across output elements (an element needed by
// several of them): such a value is worth staging once in shared memory.
bool reused(const TileGraph& tg, const Regions& regions, ValueId v) {
  const Graph& g = *tg.graph;
  for (NodeId c : tg.consumers[v]) {
    const Node& node = g.node(c);
    const std::optional<Box>& out = regions[node.outputs[0]];
    if (!out) continue;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot)
      if (node.inputs[slot] == v &&
          box_elements(*out) * reduce_volume(tg, c) > box_elements(map_box(tg, c, slot, *out)))
        return true;
  }
  return false;
}

// Bytes of the array holding `v` while `stepped` runs a reduce step of `step` (0: whole), laid
// out as the generated code lays it out (staged_array_bytes); 0 when no consumer reads it.
int64_t array_bytes(const TileGraph& tg, const Regions& regions, ValueId v, int64_t step,
                    NodeId stepped) {
  std::optional<Box> box = staged_box(tg, regions, v, step, {}, stepped);
  if (!box) return 0;
  std::vector<int64_t> size;
  for (const Interval& i : *box) size.push_back(i.size());
  return staged_array_bytes(size, esize_of(*tg.graph, v));
}

// Bytes of the values `staged` holds while `stepped` runs a reduce step of `step` (0: whole).
int64_t shared_bytes(const TileGraph& tg, const Regions& regions, const std::vector<bool>& staged,
                     int64_t step, NodeId stepped) {
  int64_t bytes = 0;
  for (ValueId v = 0; v < static_cast<ValueId>(staged.size()); ++v)
    if (staged[v]) bytes += array_bytes(tg, regions, v, step, stepped);
  return bytes;
}

// Whether `form` has the block compute `v` into shared memory.
bool computed_by(const GpuKernelForm& form, ValueId v) {
  return v < static_cast<ValueId>(form.computed.size()) && form.computed[v];
}

// Evaluations of each value when `evals` holds those of the values the phase writes: every
// reader's evaluation reads its window of each input once. A staged value is computed once per
// element of its region (`regions`) whatever its readers, and not at all without one (a value
// another phase stores, read back from memory).
std::vector<int64_t> evaluations(const TileGraph& tg, const std::vector<bool>& staged,
                                 const Regions& regions, std::vector<int64_t> evals) {
  const Graph& g = *tg.graph;
  for (NodeId n = static_cast<NodeId>(g.num_nodes()); n-- > 0;) {
    const Node& node = g.node(n);
    ValueId out = node.outputs[0];
    int64_t e = !staged[out] ? evals[out] : regions[out] ? box_elements(*regions[out]) : 0;
    if (e == 0) continue;
    for (ValueId v : node.inputs)
      if (v != kNoValue) evals[v] += e * reduce_volume(tg, n);
  }
  return evals;
}

// The evaluations of the block writing the root's `tile` in the root's phase, whose values'
// regions are `regions`: each output that follows the root's tiles, its written box once.
std::vector<int64_t> root_phase_evaluations(const TileGraph& tg, const std::vector<bool>& staged,
                                            const Box& tile, const Regions& regions) {
  const Graph& g = *tg.graph;
  std::vector<int64_t> seeds(g.num_values(), 0);
  for (ValueId v : g.outputs())
    if (regions[v] && !tg.whole_output[v]) seeds[v] = box_elements(written_box(tg, v, tile));
  return evaluations(tg, staged, regions, seeds);
}

// The evaluations of the whole outputs' phases (TileGraph::whole_output): each runs once, its
// elements in order, staging nothing; the outputs the root's phase writes it reads back.
std::vector<int64_t> whole_phase_evaluations(const TileGraph& tg) {
  const Graph& g = *tg.graph;
  auto nv = static_cast<ValueId>(g.num_values());
  std::vector<int64_t> whole(nv, 0);
  std::vector<bool> stored(nv, false);
  for (ValueId v : g.outputs()) {
    if (tg.whole_output[v]) whole[v] = num_elements(g.value(v).type.shape);
    stored[v] = !tg.whole_output[v];
  }
  return evaluations(tg, stored, Regions(nv), whole);
}

// Elements of each value that global memory serves: per block of each tile class
// (`per_block[c]`), and once for the kernel (`once`). A staged copy or a write moves its
// region; a direct read at most one element per evaluation of its readers, as the region's
// hull can be far larger (a reshape's floordiv and mod). Whole outputs (TileGraph::whole_output)
// run as phases of their own, each element once, so they and their direct reads count once.
struct Served {
  std::vector<std::vector<int64_t>> per_block;
  std::vector<int64_t> once;
};

Served served_elements(const TileGraph& tg, const BlockPlan& plan,
                       const std::vector<bool>& counted) {
  const Graph& g = *tg.graph;
  auto nv = static_cast<ValueId>(g.num_values());
  Served served;
  const std::vector<int64_t>& whole = plan.once;
  served.once.assign(nv, 0);
  for (ValueId v = 0; v < nv; ++v)
    if (counted[v]) served.once[v] = std::min(whole[v], num_elements(g.value(v).type.shape));
  for (size_t c = 0; c < plan.tiles.regions.size(); ++c) {
    const Regions& regions = plan.tiles.regions[c];
    std::vector<int64_t> evals =
        root_phase_evaluations(tg, plan.staged, plan.tiles.tiles[c], regions);
    std::vector<int64_t>& block = served.per_block.emplace_back(nv, 0);
    for (ValueId v = 0; v < nv; ++v) {
      if (!counted[v] || !regions[v] || tg.whole_output[v]) continue;
      // An output's region also holds what the whole outputs' phases read of it.
      block[v] = g.value(v).producer == kNoNode
                     ? box_elements(*regions[v])
                     : box_elements(written_box(tg, v, plan.tiles.tiles[c]));
      if (!plan.staged[v] && g.value(v).producer == kNoNode)
        block[v] = std::min(block[v], evals[v]);
    }
  }
  return served;
}

// Bytes of the array of each staged value, from the regions the generated code stages
// (staged_regions: the box any block or step of the config needs, laid out by
// staged_array_bytes). A value left without one stays in memory, as in the code: its region
// is not affine at some checked block, or it is computed but moves with the reduce step.
std::vector<int64_t> array_sizes(const TileGraph& tg, const std::vector<int64_t>& block,
                                 const GpuKernelForm& form, NodeId stepped, const BlockPlan& plan) {
  std::vector<int64_t> bytes(plan.staged.size(), 0);
  if (std::find(plan.staged.begin(), plan.staged.end(), true) == plan.staged.end()) return bytes;
  GpuTileConfig config{block, {}, plan.reduce_step};
  for (const StagedRegion& r : staged_regions(tg, config, stepped, form.computed)) {
    if (plan.staged[r.value] && !(computed_by(form, r.value) && r.stepped()))
      bytes[r.value] = staged_array_bytes(r.size, esize_of(*tg.graph, r.value));
  }
  return bytes;
}

// Leaves in memory what does not fit the opt-in shared memory of a block, as the generated code
// lays its arrays out (`bytes`, array_sizes): the computed values first (the last first:
// readers before what they read), each with room for the partials of the largest block, then
// the staged copies in value order, each kept where it still fits.
void fit_shared(const GpuMachine& gpu, const GpuKernelForm& form, const std::vector<int64_t>& bytes,
                BlockPlan& plan) {
  auto nv = static_cast<ValueId>(plan.staged.size());
  for (ValueId v = 0; v < nv; ++v) plan.staged[v] = plan.staged[v] && bytes[v] > 0;
  std::vector<ValueId> order;
  for (ValueId v = nv; v-- > 0;)
    if (plan.staged[v] && computed_by(form, v)) order.push_back(v);
  for (ValueId v = 0; v < nv; ++v)
    if (plan.staged[v] && !computed_by(form, v)) order.push_back(v);
  plan.shared_bytes = 0;
  int64_t reserve = partials_bytes(gpu.max_threads_per_block, gpu.warp_size), reserved = 0;
  for (ValueId v : order) {
    int64_t partials = computed_by(form, v) ? reserve : 0;
    if (plan.shared_bytes + reserved + bytes[v] + partials <= gpu.shared_per_block_optin) {
      plan.shared_bytes += bytes[v];
      reserved += partials;
      plan.computed += computed_by(form, v) ? 1 : 0;
    } else {
      plan.staged[v] = false;
    }
  }
}

// `step` < 0 picks the reduce step.
BlockPlan plan_block(const TileGraph& tg, const GpuMachine& gpu, const std::vector<int64_t>& block,
                     int64_t step, const GpuKernelForm& form) {
  const Graph& g = *tg.graph;
  BlockPlan plan;
  plan.tiles = tile_regions(tg, block);
  const Regions& regions = plan.tiles.regions[plan.tiles.interior];
  std::vector<bool> is_output(g.num_values(), false);
  for (ValueId v : g.outputs()) is_output[v] = true;
  // A block computes each value of the root's phase over its region (an output over the box it
  // writes); a whole output's phase runs once, each evaluation of its inlined values again,
  // reading back the outputs the root's phase wrote.
  std::vector<bool> none(g.num_values(), false), written(g.num_values(), false);
  for (ValueId v : g.outputs()) written[v] = !tg.whole_output[v];
  std::vector<std::vector<int64_t>> in_phase;
  for (size_t c = 0; c < plan.tiles.regions.size(); ++c)
    in_phase.push_back(
        root_phase_evaluations(tg, none, plan.tiles.tiles[c], plan.tiles.regions[c]));
  plan.once = whole_phase_evaluations(tg);
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    ValueId out = g.node(n).outputs[0];
    const OpSchema* schema = find_op(g.node(n).op);
    // A Linear primitive's reduction is a multiply-add per step: two FLOPs.
    int64_t per =
        reduce_volume(tg, n) * (schema != nullptr && schema->category == Category::Linear ? 2 : 1);
    if (!written[out]) plan.flops += plan.once[out] * per;
    for (size_t c = 0; c < plan.tiles.regions.size(); ++c) {
      const std::optional<Box>& r = plan.tiles.regions[c][out];
      if (!r || in_phase[c][out] == 0) continue;
      Box box = written[out] ? written_box(tg, out, plan.tiles.tiles[c]) : *r;
      plan.flops += plan.tiles.counts[c] * box_elements(box) * per;
    }
  }
  // The generated code stages only values whose regions move affinely (gpu_staging.h); the
  // others are read from memory, and so they are modeled.
  plan.staged = staged_values(tg, regions);
  for (ValueId v = 0; v < static_cast<ValueId>(form.computed.size()); ++v)
    plan.staged[v] = plan.staged[v] || (form.computed[v] && regions[v]);
  std::vector<bool> placed = affinely_placed(tg);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    plan.staged[v] = plan.staged[v] && placed[v];
  // The root's phase stages only what it reads; a computed value it computes regardless.
  for (ValueId v = 0; v < static_cast<ValueId>(form.read.size()); ++v)
    plan.staged[v] = plan.staged[v] && (form.read[v] || computed_by(form, v));
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& value = g.value(v);
    if (!regions[v] || immediate(value) || is_output[v]) continue;
    // An accumulator that stays in registers: a reduction each thread finishes itself.
    NodeId p = value.producer;
    if (p != kNoNode && !plan.staged[v] && tg.maps[p] && !tg.maps[p]->reduce_extents.empty())
      plan.accumulators += ceil_div(esize_of(g, v), 4);
  }
  // The longest reduce step whose staging fits the default per-block shared memory: fewer
  // steps mean fewer block-wide barriers, and the default limit leaves room for more blocks
  // per SM. No step shorter than a sector's worth of elements (shorter rows waste sectors).
  // Only form.stepped is walked a step at a time; without it every window is whole.
  NodeId stepped = form.stepped != kNoNode && tg.maps[form.stepped] ? form.stepped : kNoNode;
  int64_t min_step = std::max<int64_t>(gpu.sector_bytes / esize_of(g, tg.root), 1);
  plan.reduce_step = stepped == kNoNode ? 0 : step;
  if (step < 0 && stepped != kNoNode) {
    plan.reduce_step = 0;
    int64_t max_extent = 0;
    for (int64_t e : tg.maps[stepped]->reduce_extents) max_extent = std::max(max_extent, e);
    if (shared_bytes(tg, regions, plan.staged, 0, stepped) > gpu.shared_per_block) {
      int64_t s = 1;
      while (s * 2 < max_extent) s *= 2;
      while (s > min_step &&
             shared_bytes(tg, regions, plan.staged, s, stepped) > gpu.shared_per_block)
        s /= 2;
      if (s >= min_step) plan.reduce_step = s;
    }
  }
  fit_shared(gpu, form, array_sizes(tg, block, form, stepped, plan), plan);
  return plan;
}

// Blocks per SM under each limit; the binding one is named.
void occupancy(const GpuMachine& gpu, GpuTileCost& cost) {
  int64_t warps = ceil_div(cost.threads, gpu.warp_size);
  int64_t reserved = gpu.cc_major >= 8 ? kReservedSharedPerBlock : 0;
  int64_t unit = kRegisterUnitPerWarp;
  int64_t regs_per_warp = ceil_div(cost.registers * gpu.warp_size, unit) * unit;
  int64_t none = std::numeric_limits<int64_t>::max();
  std::pair<int64_t, const char*> limits[] = {
      {gpu.max_threads_per_sm / (warps * gpu.warp_size), "threads"},
      {cost.shared_bytes > 0 ? gpu.shared_per_sm / (cost.shared_bytes + reserved) : none,
       "shared memory"},
      {gpu.registers_per_sm / (warps * regs_per_warp), "registers"},
      {gpu.max_blocks_per_sm, "blocks"}};
  auto best = std::min_element(std::begin(limits), std::end(limits),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
  cost.blocks_per_sm = static_cast<int>(best->first);
  cost.occupancy_limit = best->second;
}

// The first rule a configuration breaks, or "" when it is legal.
std::string illegal(const GpuMachine& gpu, const GpuTileCost& c) {
  if (c.threads > gpu.max_threads_per_block)
    return fmt::format("{} threads per block exceed the limit of {}", c.threads,
                       gpu.max_threads_per_block);
  // A partial warp wastes lanes on every instruction; only a single block may be that small.
  if (c.threads % gpu.warp_size != 0 && c.blocks > 1)
    return fmt::format("{} threads per block are not a whole number of warps of {}", c.threads,
                       gpu.warp_size);
  if (c.registers > gpu.max_registers_per_thread)
    return fmt::format("an estimated {} registers per thread exceed the limit of {}", c.registers,
                       gpu.max_registers_per_thread);
  if (c.registers * c.threads > gpu.registers_per_sm)
    return fmt::format("{} registers per block exceed the {} of an SM", c.registers * c.threads,
                       gpu.registers_per_sm);
  if (c.blocks_per_sm == 0) return fmt::format("no block fits on an SM ({})", c.occupancy_limit);
  return "";
}

std::string check_shapes(const Shape& shape, const GpuTileConfig& c) {
  if (c.block.size() != shape.size() || c.thread.size() != shape.size())
    return fmt::format("block and thread tiles need {} dims", shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (c.block[d] < 1 || c.block[d] > shape[d])
      return fmt::format("block tile {} in dim {} is outside [1, {}]", c.block[d], d, shape[d]);
    if (c.thread[d] < 1 || c.block[d] % c.thread[d] != 0)
      return fmt::format("thread tile {} does not divide block tile {} in dim {}", c.thread[d],
                         c.block[d], d);
  }
  return "";
}

// The global-memory bytes finish counts, without the sector rounding of either access kind:
// every served element's bytes, which both kinds move at least.
int64_t least_global_bytes(const TileGraph& tg, const BlockPlan& plan, const Served& served) {
  const Graph& g = *tg.graph;
  int64_t bytes = 0;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    int64_t elements = served.once[v];
    for (size_t c = 0; c < plan.tiles.regions.size(); ++c)
      elements += plan.tiles.counts[c] * served.per_block[c][v];
    bytes += elements * esize_of(g, v);
  }
  return bytes;
}

// The cost of `config` with `plan`. A legal config whose time cannot come under `prune_at` (its
// compute and its least global traffic, quantized by its waves) is returned illegal, its reason
// "pruned", before the warp access analysis, most of the search's time.
GpuTileCost finish(const TileGraph& tg, const GpuMachine& gpu, const GpuTileConfig& config,
                   const BlockPlan& plan,
                   double prune_at = std::numeric_limits<double>::infinity()) {
  const Graph& g = *tg.graph;
  const Shape& shape = g.value(tg.root).type.shape;
  GpuTileCost cost;
  cost.threads = product(config.block) / product(config.thread);
  cost.blocks = tile_count(shape, config.block);
  cost.shared_bytes =
      plan.shared_bytes + plan.computed * partials_bytes(cost.threads, gpu.warp_size);
  cost.needs_optin = cost.shared_bytes > gpu.shared_per_block;
  cost.staged = plan.staged;
  cost.flops = plan.flops;
  int64_t words = ceil_div(esize_of(g, tg.root), 4);
  cost.registers = kBaseRegisters + product(config.thread) * (words + plan.accumulators);
  occupancy(gpu, cost);
  cost.reason = illegal(gpu, cost);
  cost.legal = cost.reason.empty();
  if (!cost.legal) return cost;
  cost.waves = ceil_div(cost.blocks, int64_t{gpu.sm_count} * cost.blocks_per_sm);
  // Each block gets its share of bandwidth and FLOPs as if whole waves ran: a last partial wave
  // costs as much as a full one.
  double compute_s = static_cast<double>(cost.flops) / (gpu.peak_fp32_gflops * 1e9);
  double slots = static_cast<double>(gpu.sm_count) * cost.blocks_per_sm;
  double quantization = static_cast<double>(cost.waves) * slots / static_cast<double>(cost.blocks);
  // The interior block (index 1 where a dim has three blocks or more) stands for all.
  const Regions& interior = plan.tiles.regions[plan.tiles.interior];
  std::vector<bool> is_output(g.num_values(), false);
  for (ValueId v : g.outputs()) is_output[v] = !tg.hoisted[v];
  std::vector<bool> counted(g.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& value = g.value(v);
    bool input = value.producer == kNoNode && !immediate(value);
    counted[v] = interior[v] && (input || is_output[v]);
  }
  Served served = served_elements(tg, plan, counted);
  if (prune_at < std::numeric_limits<double>::infinity()) {
    double least_memory_s =
        static_cast<double>(least_global_bytes(tg, plan, served)) / (gpu.hbm_gbs * 1e9);
    if (std::max(least_memory_s, compute_s) * quantization * 1e6 >= prune_at) {
      cost.legal = false;
      cost.reason = "pruned";
      return cost;
    }
  }
  std::vector<int64_t> lo(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    lo[d] = ceil_div(shape[d], config.block[d]) >= 3 ? config.block[d] : 0;
  WarpPoints points = warp_points(tg, config.block, config.thread, lo, gpu.warp_size);
  int64_t inner = config.thread.empty() ? 1 : config.thread.back();
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& value = g.value(v);
    if (!counted[v]) continue;
    GlobalAccess a;
    a.value = v;
    a.write = is_output[v];
    a.staged = plan.staged[v];
    int64_t esize = esize_of(g, v);
    a.bytes = box_elements(*interior[v]) * esize;
    WarpAccess w = a.staged ? staged_access(*interior[v], value.type.shape, esize, gpu.warp_size)
                            : direct_access(g, points, inner, v);
    WarpSectors s = warp_sectors(w.offsets, w.access_bytes, gpu.sector_bytes);
    a.warp_sectors = s.touched;
    a.min_sectors = s.minimum;
    // A staged copy is as coalesced as the box's rows allow (line_bytes rounds each run to
    // sectors). A direct access moves, per warp instruction, the sectors it touches for the
    // bytes it uses: the served bytes scale by that ratio (8 for a transposed f32 read). A
    // whole output's phase walks its elements in order: whole sectors.
    for (size_t c = 0; c < plan.tiles.regions.size(); ++c) {
      const std::optional<Box>& r = plan.tiles.regions[c][v];
      int64_t elements = served.per_block[c][v];
      if (!r || elements == 0) continue;
      int64_t moved = line_bytes(*r, value.type.shape, esize, gpu.sector_bytes);
      if (!a.staged && s.bytes > 0)
        moved = ceil_div(elements * esize * s.touched, s.bytes) * gpu.sector_bytes;
      a.moved += plan.tiles.counts[c] * moved;
    }
    a.moved += ceil_div(served.once[v] * esize, gpu.sector_bytes) * gpu.sector_bytes;
    cost.global_bytes += a.moved;
    cost.accesses.push_back(a);
  }
  // The interior block's first warp stands for every warp.
  Regions warp = propagate(tg, warp_box(config.block, config.thread, lo, gpu.warp_size));
  int64_t per_warp = 0;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    if (plan.staged[v] && warp[v]) per_warp += box_elements(*warp[v]) * esize_of(g, v);
  cost.shared_traffic = per_warp * ceil_div(cost.threads, gpu.warp_size) * cost.blocks;
  double memory_s = static_cast<double>(cost.global_bytes) / (gpu.hbm_gbs * 1e9);
  double shared_s =
      static_cast<double>(cost.shared_traffic) / (gpu.shared_gbs_per_sm * gpu.sm_count * 1e9);
  cost.time_us = std::max({memory_s, shared_s, compute_s}) * quantization * 1e6;
  return cost;
}

std::vector<int64_t> pow2_sizes(int64_t extent) {
  std::vector<int64_t> sizes;
  for (int64_t s = 1; s < extent; s *= 2) sizes.push_back(s);
  sizes.push_back(extent);
  return sizes;
}

}  // namespace

std::vector<std::vector<int64_t>> combinations(const std::vector<std::vector<int64_t>>& choices) {
  std::vector<std::vector<int64_t>> out{{}};
  for (const std::vector<int64_t>& dim : choices) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : out)
      for (int64_t c : dim) {
        next.push_back(prefix);
        next.back().push_back(c);
      }
    out = std::move(next);
  }
  return out;
}

std::optional<Box> staged_box(const TileGraph& tg, const Regions& regions, ValueId v, int64_t step,
                              const std::vector<int64_t>& starts, NodeId stepped) {
  const Graph& g = *tg.graph;
  std::optional<Box> box;
  for (NodeId c : tg.consumers[v]) {
    const Node& node = g.node(c);
    const std::optional<Box>& out = regions[node.outputs[0]];
    if (!out) continue;
    std::vector<int64_t> steps, windows;
    if (step > 0 && tg.maps[c] && (stepped == kNoNode || c == stepped)) {
      steps.assign(tg.maps[c]->reduce_extents.size(), step);
      windows = starts;
    }
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] != v) continue;
      Box b = map_box(tg, c, slot, *out, steps, windows);
      // A window wholly in the padding reads the clamped edge (and selects the pad value).
      for (Interval& i : b)
        if (i.lo > i.hi) i = i.lo > 0 ? Interval{i.hi, i.hi} : Interval{0, 0};
      if (!box) box = b;
      for (size_t d = 0; d < b.size(); ++d)
        (*box)[d] = {std::min((*box)[d].lo, b[d].lo), std::max((*box)[d].hi, b[d].hi)};
    }
  }
  return box;
}

std::vector<bool> staged_values(const TileGraph& tg, const Regions& regions) {
  const Graph& g = *tg.graph;
  std::vector<bool> staged(g.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    staged[v] = regions[v] && !immediate(g.value(v)) &&
                std::find(g.outputs().begin(), g.outputs().end(), v) == g.outputs().end() &&
                reused(tg, regions, v);
  return staged;
}

GpuKernelForm default_form(const TileGraph& tg) {
  GpuKernelForm form;
  NodeId p = tg.graph->value(tg.root).producer;
  if (p != kNoNode && tg.maps[p] && !tg.maps[p]->reduce_extents.empty()) form.stepped = p;
  return form;
}

GpuTileCost analyze(const TileGraph& tg, const GpuMachine& gpu, const GpuTileConfig& config) {
  return analyze(tg, gpu, config, default_form(tg));
}

GpuTileCost analyze(const TileGraph& tg, const GpuMachine& gpu, const GpuTileConfig& config,
                    const GpuKernelForm& form) {
  GpuTileCost cost;
  cost.reason = check_shapes(tg.graph->value(tg.root).type.shape, config);
  if (!cost.reason.empty()) {
    cost.legal = false;
    return cost;
  }
  check(config.reduce_step >= 0, "gpu tile config: negative reduce step {}", config.reduce_step);
  return finish(tg, gpu, config, plan_block(tg, gpu, config.block, config.reduce_step, form));
}

std::vector<ScoredGpuConfig> gpu_configs(const TileGraph& tg, const GpuMachine& gpu, int limit) {
  return gpu_configs(tg, gpu, limit, default_form(tg));
}

std::vector<ScoredGpuConfig> gpu_configs(const TileGraph& tg, const GpuMachine& gpu, int limit,
                                         const GpuKernelForm& form) {
  const Shape& shape = tg.graph->value(tg.root).type.shape;
  std::vector<ScoredGpuConfig> found;
  const int64_t keep = std::max(limit, 0);
  if (num_elements(shape) == 0 || keep == 0) return found;
  std::vector<std::vector<int64_t>> block_choices;
  for (int64_t e : shape) block_choices.push_back(pow2_sizes(e));
  for (const std::vector<int64_t>& block : combinations(block_choices)) {
    int64_t elements = product(block);
    int64_t blocks = tile_count(shape, block);
    // Too small for one warp, or too large for the largest block of the largest thread tiles.
    if ((elements < gpu.warp_size && blocks > 1) ||
        elements > int64_t{gpu.max_threads_per_block} * kMaxThreadElements)
      continue;
    std::vector<std::vector<int64_t>> thread_choices;
    for (int64_t b : block) {
      std::vector<int64_t> sizes;
      for (int64_t t = 1; t <= b && t <= kMaxThreadElements; t *= 2)
        if (b % t == 0) sizes.push_back(t);
      thread_choices.push_back(sizes);
    }
    std::optional<BlockPlan> plan;
    for (const std::vector<int64_t>& thread : combinations(thread_choices)) {
      int64_t threads = elements / product(thread);
      if (product(thread) > kMaxThreadElements || threads > gpu.max_threads_per_block ||
          (threads % gpu.warp_size != 0 && blocks > 1))
        continue;
      if (!plan) plan = plan_block(tg, gpu, block, -1, form);
      GpuTileConfig config{block, thread, plan->reduce_step};
      // Once `limit` are kept, a config must beat the slowest of them to be kept.
      double prune_at = static_cast<int64_t>(found.size()) == keep
                            ? found.back().cost.time_us
                            : std::numeric_limits<double>::infinity();
      GpuTileCost cost = finish(tg, gpu, config, *plan, prune_at);
      if (!cost.legal) continue;
      // Only the fastest `limit` are kept, in order, ties in enumeration order (as a stable sort
      // of all of them would leave them): at batch 16 a kernel has 10^5 legal configs.
      auto at =
          std::upper_bound(found.begin(), found.end(), cost.time_us,
                           [](double t, const ScoredGpuConfig& s) { return t < s.cost.time_us; });
      if (at - found.begin() >= keep) continue;
      found.insert(at, {config, std::move(cost)});
      if (static_cast<int64_t>(found.size()) > keep) found.pop_back();
    }
  }
  return found;
}

}  // namespace orch::schedule
