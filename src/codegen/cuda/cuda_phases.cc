// The phases of a generated CUDA kernel (cuda_impl.h): each one's launch geometry and code.
// The root output's phase runs under the tile config (Welder's staging, register tiles, values
// computed per block in shared memory); any other phase one thread per element, or one warp per
// element of a row reduction.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "codegen/cuda/cuda_impl.h"
#include "ir/error.h"
#include "schedule/gpu/gpu_staging.h"
#include "schedule/gpu/gpu_tiles.h"

namespace orch::codegen::cuda_impl {
namespace {

constexpr int64_t kWarpReduceMin = 32;  // reduce volume of a phase run one warp per element
constexpr int64_t kMaxBlocks = 65536;   // of a phase without a tile config (grid-stride loop)
// A reduction phase's grid below this many blocks (about one per SM of a large GPU: an H200
// has 132) widens its groups of lanes per element.
constexpr int64_t kWideGroupBlocks = 128;

// The phase's loops: the element body runs once per element of `shape`, with coordinates
// o0..o{rank-1} and the row-major flat index `e`.
struct Geometry {
  std::string block;  // what a block computes once, before its threads' loops
  std::string head, tail;
  int64_t blocks = 1;
  int threads = 1;
  int64_t shared_bytes = 0;  // what a block stages
};

// The coordinates o0.. (`name`0..) of the row-major flat index `e` into `shape`.
std::string coordinates_of_e(const Shape& shape, std::string_view name = "o") {
  int64_t stride = 1;
  std::string coords;
  for (size_t d = shape.size(); d-- > 0;) {
    std::string q = stride == 1 ? "e" : fmt::format("(e / {})", stride);
    coords = fmt::format("  const long long {}{} = {};\n", name, d,
                         d == 0 ? q : fmt::format("{} % {}", q, shape[d])) +
             coords;
    stride *= shape[d];
  }
  return coords;
}

// `threads` per block, each block's index `bx` within its phase.
Geometry grid_stride(const Shape& shape, int threads) {
  int64_t n = num_elements(shape);
  Geometry g;
  g.threads = threads;
  g.blocks = std::min(kMaxBlocks, (n + threads - 1) / threads);
  g.head = fmt::format("for (long long e = bx * {0} + threadIdx.x; e < {1}; e += {2}LL * {0}) {{\n",
                       threads, n, g.blocks);
  g.head += coordinates_of_e(shape);
  g.tail = "}\n";
  return g;
}

// One block per block tile, one thread per thread tile; each thread loops over its tile's
// elements (a contiguous run along each dim), skipping those past the edge.
Geometry tiled(const Shape& shape, const schedule::GpuTileConfig& config, bool tile_index) {
  size_t rank = shape.size();
  check(config.block.size() == rank && config.thread.size() == rank,
        "the tile config has {} dims, the root output {}", config.block.size(), rank);
  std::vector<int64_t> nb(rank), nt(rank);
  Geometry g;
  int64_t threads = 1;
  for (size_t d = 0; d < rank; ++d) {
    check(config.block[d] > 0 && config.thread[d] > 0 && config.block[d] % config.thread[d] == 0,
          "thread tile {} does not divide block tile {} in dim {}", config.thread[d],
          config.block[d], d);
    nb[d] = (shape[d] + config.block[d] - 1) / config.block[d];
    nt[d] = config.block[d] / config.thread[d];
    g.blocks *= nb[d];
    threads *= nt[d];
  }
  check(threads <= 1024, "the tile config has {} threads per block (at most 1024)", threads);
  g.threads = static_cast<int>(threads);
  g.block = "const long long b = bx;\nconst long long t = threadIdx.x;\n";
  int64_t bs = 1, ts = 1;
  for (size_t d = rank; d-- > 0;) {
    g.block += fmt::format("const long long b{0} = (b / {1}) % {2};\n", d, bs, nb[d]);
    g.block += fmt::format("const long long t{0} = (t / {1}) % {2};\n", d, ts, nt[d]);
    bs *= nb[d];
    ts *= nt[d];
  }
  std::string guard;
  for (size_t d = 0; d < rank; ++d) {
    // Unrolled where elements index the accumulators, so that acc_tile stays in registers.
    if (tile_index) g.head += "#pragma unroll\n";
    g.head += fmt::format("for (long long u{0} = 0; u{0} < {1}; ++u{0}) {{\n", d, config.thread[d]);
    g.head += fmt::format("const long long o{0} = b{0} * {1} + t{0} * {2} + u{0};\n", d,
                          config.block[d], config.thread[d]);
    guard += fmt::format("{}o{} >= {}", guard.empty() ? "" : " || ", d, shape[d]);
    g.tail += "}\n";
  }
  if (!guard.empty()) g.head += fmt::format("if ({}) continue;\n", guard);
  std::string flat = "0";
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    flat = d + 1 == rank ? fmt::format("o{}", d) : fmt::format("o{} * {} + {}", d, stride, flat);
    stride *= shape[d];
  }
  g.head += fmt::format("const long long e = {};\n", flat);
  if (tile_index) {
    // The element's index within the thread tile, row-major.
    std::string ui = "0";
    int64_t tile_stride = 1;
    for (size_t d = rank; d-- > 0;) {
      ui = d + 1 == rank ? fmt::format("u{}", d) : fmt::format("u{} * {} + {}", d, tile_stride, ui);
      tile_stride *= config.thread[d];
    }
    g.head += fmt::format("const long long ui = {};\n", ui);
  }
  return g;
}

// "o0", "o1", ... (`name`0, ...): the coordinate variables of a phase's element body.
std::vector<std::string> coordinate_names(size_t rank, std::string_view name = "o") {
  std::vector<std::string> coords;
  for (size_t d = 0; d < rank; ++d) coords.push_back(fmt::format("{}{}", name, d));
  return coords;
}

std::string element_loops(const Geometry& geo, const std::string& body) {
  return geo.head + indent(body, 2) + geo.tail;
}

std::string store(const Graph& kernel, ValueId v, const std::string& dest,
                  const std::string& result) {
  return fmt::format("{}[e] = {};\n", dest, to_storage(kernel.value(v).type.dtype, result));
}

// The root output's phase under a tile config (its geometry set in `geo`), after the block
// index: what the block stages in shared memory or computes there, then its thread tiles. With
// a reduction the phase computes at the root's coordinates, each thread tile element accumulates
// its total in acc_tile, the reduce loops outside the element loops (Welder's register tile: an
// operand element loaded once serves every element of the thread tile that reads it); with a
// reduce step, those loops run a step at a time, each step starting with a barrier and its
// staging. The epilogue then reads the totals.
std::string root_body(const Graph& kernel, const schedule::TileGraph& tg,
                      const schedule::GpuTileConfig& config, const RootPlan& plan,
                      const std::string& dest, std::vector<ValueHome> homes, Globals& globals,
                      Geometry& geo) {
  ValueId root = tg.root;
  NodeId reduction = plan.reduction;
  int64_t step = config.reduce_step;
  geo = tiled(kernel.value(root).type.shape, config, reduction != kNoNode);
  StagedCode staged = stage_regions(tg, plan.regions, plan.computed, geo.threads, plan.shared_limit,
                                    homes, globals);
  geo.shared_bytes = staged.bytes;
  std::vector<std::string> coords = coordinate_names(kernel.value(root).type.shape.size());
  if (reduction == kNoNode) {
    PhaseEmitter emitter(kernel, homes, globals);
    std::string result = emitter.compute(root, coords);
    return staged.once + element_loops(geo, emitter.code() + store(kernel, root, dest, result));
  }
  const std::string acc = "acc_tile[ui]";
  int64_t elements = 1;
  for (int64_t t : config.thread) elements *= t;
  std::string steps_open, steps_close, loops_open, loops_close;
  std::vector<std::string> vars;
  const std::vector<int64_t>& extents = tg.maps[reduction]->reduce_extents;
  for (size_t a = 0; a < extents.size(); ++a) {
    vars.push_back(fmt::format("rk{}", a));
    std::string begin = "0", end = std::to_string(extents[a]);
    if (step > 0) {
      steps_open += fmt::format("for (long long ks{0} = 0; ks{0} < {1}; ++ks{0}) {{\n", a,
                                (extents[a] + step - 1) / step);
      steps_close += "}\n";
      begin = fmt::format("ks{} * {}", a, step);
      end = fmt::format("orch_clamp({} + {}, 0LL, {}LL)", begin, step, extents[a]);
    }
    loops_open +=
        fmt::format("for (long long {0} = {1}; {0} < {2}; ++{0}) {{\n", vars.back(), begin, end);
    loops_close += "}\n";
  }
  Accumulation sum = accumulate(kernel, root, reduction, acc, vars, coords, homes, globals);
  std::string code = staged.once;
  code += fmt::format("{} acc_tile[{}];\nfor (long long ui = 0; ui < {}; ++ui) {} = {};\n",
                      sum.type, elements, elements, acc, sum.init);
  std::string accumulate = loops_open + indent(element_loops(geo, sum.term), 2) + loops_close;
  if (step > 0 && !staged.per_step.empty())
    accumulate = "__syncthreads();\n" + staged.per_step + accumulate;
  code += step > 0 ? steps_open + indent(accumulate, 2) + steps_close : accumulate;
  return code + element_loops(geo, sum.epilogue + store(kernel, root, dest, sum.result));
}

// Lanes reducing one element in a phase of `threads` per block: a warp, widened (doubling,
// while the groups still divide the block: a launch shared with a root phase may have 96
// threads) while the grid of `n` elements would have fewer than kWideGroupBlocks blocks and
// each lane keeps a warp's worth of the `volume` terms. A few long sums (Candy's instance
// norm: 32 of 50176 terms) would otherwise run on a handful of SMs.
int64_t lanes_per_element(int64_t n, int64_t volume, int threads) {
  int64_t g = kWarp;
  while (threads % (g * 2) == 0 && (n * g + threads - 1) / threads < kWideGroupBlocks &&
         volume >= g * 2 * kWarp)
    g *= 2;
  return g;
}

// The extents of a warp reduction's axes, the innermost dims of its input (warp_reduction).
std::vector<int64_t> inner_reduce_extents(const Graph& kernel, const Node& reduce) {
  const Shape& xs = kernel.value(reduce.inputs[0]).type.shape;
  size_t first = xs.size() - attr_ints(reduce.attrs, "axes").size();
  return std::vector<int64_t>(xs.begin() + static_cast<long>(first), xs.end());
}

// A phase of `v` whose reduction `r` (warp_reduction) runs a group of lanes per element
// (lanes_per_element), `threads` (a whole number of warps) per block: each lane accumulates
// every g-th term of the reduction, five shuffles combine a warp's lanes, a group wider than a
// warp adds its warps' partials through shared memory, and the group's lane 0 applies the
// epilogue and stores. A block's groups take consecutive elements, and its trip count is the
// same for all its threads (shuffles and barriers need every lane).
std::string warp_phase(const Graph& kernel, ValueId v, NodeId r, const std::string& dest,
                       int threads, std::vector<ValueHome> homes, Globals& globals, Geometry& geo) {
  const Shape& shape = kernel.value(v).type.shape;
  const Node& reduce = kernel.node(r);
  // The lane's flat index rr splits into the reduce axes.
  FlatReduce flat = flat_reduce(inner_reduce_extents(kernel, reduce));
  int64_t n = num_elements(shape), g = warp_lanes(kernel, v, r, threads);
  int64_t groups = threads / g;
  geo.threads = threads;
  geo.blocks = std::min(kMaxBlocks, (n + groups - 1) / groups);
  // A reshaped total has v's flat index e in its own shape: its coordinates p0.. .
  const Shape& total = kernel.value(reduce.outputs[0]).type.shape;
  std::vector<std::string> total_coords;
  if (total != shape) total_coords = coordinate_names(total.size(), "p");
  Accumulation sum = accumulate(kernel, v, r, "acc", flat.vars, coordinate_names(shape.size()),
                                homes, globals, total_coords);
  std::string code;
  if (g > kWarp) {
    geo.shared_bytes = schedule::partials_bytes(threads, kWarp);
    code += shared_declaration(sum.type, "pt", 0);
  }
  code += fmt::format("for (long long w = bx * {0}; w < {1}; w += {2}LL * {0}) {{\n", groups, n,
                      geo.blocks);
  code += fmt::format(
      "  const long long e = w + threadIdx.x / {0};\n  const int lane = threadIdx.x % {0};\n", g);
  code += coordinates_of_e(shape);
  if (!total_coords.empty()) code += coordinates_of_e(total, "p");
  code += fmt::format("  {} acc = {};\n", sum.type, sum.init);
  code += fmt::format("  if (e < {}) {{\n    for (long long rr = lane; rr < {}; rr += {}) {{\n", n,
                      flat.volume, g);
  code += indent(sum.term, 6) + "    }\n  }\n";
  code += indent(group_combine(kernel, reduce, g, "pt", sum.type), 2);
  // The next element's partials must not overwrite these before the group's lane 0 read them.
  if (g > kWarp) code += "  __syncthreads();\n";
  code += fmt::format("  if (e < {} && lane == 0) {{\n", n);
  code += indent(sum.epilogue + store(kernel, v, dest, sum.result), 4) + "  }\n}\n";
  return code;
}

}  // namespace

int64_t warp_lanes(const Graph& kernel, ValueId v, NodeId r, int threads) {
  return lanes_per_element(num_elements(kernel.value(v).type.shape),
                           num_elements(inner_reduce_extents(kernel, kernel.node(r))), threads);
}

NodeId warp_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  NodeId r = inline_reduction(kernel, v, homes);
  if (r == kNoNode || kernel.node(r).op != "prim.Reduce" ||
      !elements_in_order(kernel, r, v, homes, true))
    return kNoNode;
  const Node& n = kernel.node(r);
  const TensorType& in = kernel.value(n.inputs[0]).type;
  if (!shuffled(in.dtype)) return kNoNode;
  std::vector<int64_t> axes = attr_ints(n.attrs, "axes");
  int64_t rank = static_cast<int64_t>(in.shape.size()), volume = 1;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<int64_t>(axes.size() - i)) return kNoNode;
    volume *= in.shape[static_cast<size_t>(axes[i])];
  }
  return volume >= kWarpReduceMin ? r : kNoNode;
}

std::string indent(const std::string& text, int spaces) {
  std::string pad(static_cast<size_t>(spaces), ' '), out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out += pad + text.substr(start, end - start);
    out += "\n";
    start = end + 1;
  }
  return out;
}

// The root's plan under `config`; the values it computes lose their phase (`materialized`).
// `homes` has every materialized value in memory.
RootPlan plan_root(const Graph& kernel, const schedule::TileGraph& tg,
                   const schedule::GpuTileConfig& config, int64_t shared_limit,
                   std::vector<bool>& materialized, const std::vector<ValueHome>& homes) {
  RootPlan plan;
  plan.shared_limit = shared_limit;
  plan.reduction = accumulated_reduction(kernel, tg.root, homes);
  std::vector<bool> candidates = block_candidates(tg, materialized);
  // The code steps only the root's own reduction: without one, a config's reduce step (the
  // model steps every reduction) leaves whole regions, staged where they fit.
  schedule::GpuTileConfig staging = config;
  if (plan.reduction == kNoNode) staging.reduce_step = 0;
  NodeId stepped = staging.reduce_step > 0 ? plan.reduction : kNoNode;
  plan.regions = schedule::staged_regions(tg, staging, stepped, candidates);
  plan.computed =
      computed_values(kernel, candidates, materialized, plan.regions, homes, shared_limit);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    materialized[v] = materialized[v] && !plan.computed[v];
  return plan;
}

Phase root_phase(const Graph& kernel, const schedule::TileGraph& tg,
                 const schedule::GpuTileConfig& config, const RootPlan& plan,
                 const std::string& dest, const std::vector<ValueHome>& homes, Globals& globals) {
  Geometry geo;
  std::string body = root_body(kernel, tg, config, plan, dest, homes, globals, geo);
  return {geo.block + body, geo.blocks, geo.threads, geo.shared_bytes};
}

Phase value_phase(const Graph& kernel, ValueId v, const std::string& dest, int threads,
                  const std::vector<ValueHome>& homes, Globals& globals) {
  Geometry geo;
  std::string body;
  NodeId r = warp_reduction(kernel, v, homes);
  if (r != kNoNode && threads % kWarp == 0) {
    body = warp_phase(kernel, v, r, dest, threads, homes, globals, geo);
  } else {
    const Shape& shape = kernel.value(v).type.shape;
    geo = grid_stride(shape, threads);
    PhaseEmitter emitter(kernel, homes, globals);
    std::string result = emitter.compute(v, coordinate_names(shape.size()));
    body = element_loops(geo, emitter.code() + store(kernel, v, dest, result));
  }
  return {geo.block + body, geo.blocks, geo.threads, geo.shared_bytes};
}

}  // namespace orch::codegen::cuda_impl
