// A kernel graph as CUDA C (cuda_source.h): which values are materialized, where each lives
// (parameters, the scratch buffer, baked arrays), one phase per materialized value, and each
// phase's launch geometry.
//
// Example: softmax rows of X f32[64,100] (m = max, e = exp(x - m), t = sum e, y = e / t) gives
// three phases without a tile config: m (a reduction over x, into scratch), t (a reduction over
// exp(x - m), e inlined, into scratch) and y (exp(x - m) / t, the root output, one thread per
// thread tile). Under a tile config it is one: each block computes m and t of its rows into
// shared memory, then its tile of y.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "codegen/cuda/cuda_impl.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/error.h"
#include "ir/ops/prim.h"
#include "schedule/gpu/gpu_staging.h"
#include "schedule/gpu/gpu_tiles.h"
#include "schedule/tile_graph.h"

namespace orch::codegen {
namespace {

using cuda_impl::kWarp;
using cuda_impl::ValueHome;

// The primitives the emitter generates.
const std::set<std::string_view> kGeneratedOps = {
    "prim.Elementwise",   "prim.Reduce",    "prim.Broadcast", "prim.MatMul", "prim.Conv",
    "prim.ConvTranspose", "prim.Transpose", "prim.Reshape",   "prim.Slice",  "prim.Tile",
    "prim.Concat",        "prim.Resize",    "prim.Pad",       "prim.Gather", "prim.GatherElements"};

// Values computed by these are materialized when read, unless only an epilogue reads them
// (sole_pointwise_reader): recomputing them per use multiplies work.
const std::set<std::string_view> kMaterializedOps = {"prim.Reduce", "prim.MatMul", "prim.Conv",
                                                     "prim.ConvTranspose"};

// Constants baked into the source as arrays, at most (larger ones are kernel inputs).
constexpr int64_t kMaxBakedBytes = 64 * 1024;

constexpr int kThreads = 256;           // per block, for phases without a tile config
constexpr int64_t kWarpReduceMin = 32;  // reduce volume of a phase run one warp per element
constexpr int64_t kMaxBlocks = 65536;   // for phases without a tile config (grid-stride loop)
constexpr int64_t kScratchAlign = 256;  // bytes, per scratch value

bool supported_dtype(DType t) {
  return t != DType::f16 && t != DType::bf16;
}

std::string node_reason(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v == kNoValue) return "absent optional input";
  if (!prim::is_primitive(n.op)) return fmt::format("'{}' is not a primitive", n.op);
  if (kGeneratedOps.count(n.op) == 0) return fmt::format("'{}' is not generated", n.op);
  for (ValueId v : n.inputs)
    if (!supported_dtype(g.value(v).type.dtype))
      return fmt::format("{} on {} is not generated", n.op, dtype_name(g.value(v).type.dtype));
  DType out = g.value(n.outputs[0]).type.dtype;
  if (!supported_dtype(out)) return fmt::format("{} to {} is not generated", n.op, dtype_name(out));
  DType t = g.value(n.inputs[0]).type.dtype;
  if (n.op == "prim.Elementwise") {
    std::string fn = attr_string(n.attrs, "fn", "");
    return cuda_impl::elementwise_reason(fn, fn == "where" ? g.value(n.inputs[1]).type.dtype : t);
  }
  if ((n.op == "prim.Reduce" || n.op == "prim.MatMul") && t == DType::boolean)
    return fmt::format("{} on bool is not generated", n.op);
  if (n.op == "prim.Resize") {
    if (attr_string(n.attrs, "coordinate_transformation_mode", "") == "tf_crop_and_resize")
      return "prim.Resize with tf_crop_and_resize is not generated";
    if (resize_interpolates(n.attrs) && !is_float(t))
      return fmt::format("interpolating prim.Resize on {} is not generated", dtype_name(t));
  }
  if ((n.op == "prim.Conv" || n.op == "prim.ConvTranspose") && !is_float(t))
    return fmt::format("{} on {} is not generated", n.op, dtype_name(t));
  return "";
}

// Rank >= 1 constants some node reads or the kernel writes: baked as arrays.
bool baked(const Graph& g, ValueId v, const std::vector<std::vector<NodeId>>& consumers) {
  const Value& value = g.value(v);
  if (!value.is_constant() || value.type.shape.empty()) return false;
  return !consumers[v].empty() ||
         std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

std::string sanitize(const std::string& name) {
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
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

// The phase's loops: the element body runs once per element of `shape`, with coordinates
// o0..o{rank-1} and the row-major flat index `e`.
struct Geometry {
  std::string block;  // what a block computes once, before its threads' loops
  std::string head, tail;
  int64_t blocks = 1;
  int threads = 1;
  int64_t shared_bytes = 0;  // what a block stages
};

// The coordinates o0.. of the row-major flat index `e` into `shape`.
std::string coordinates_of_e(const Shape& shape) {
  int64_t stride = 1;
  std::string coords;
  for (size_t d = shape.size(); d-- > 0;) {
    std::string q = stride == 1 ? "e" : fmt::format("(e / {})", stride);
    coords = fmt::format("  const long long o{} = {};\n", d,
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

// "o0", "o1", ...: the coordinate variables of a phase's element body.
std::vector<std::string> coordinate_names(size_t rank) {
  std::vector<std::string> coords;
  for (size_t d = 0; d < rank; ++d) coords.push_back(fmt::format("o{}", d));
  return coords;
}

std::string element_loops(const Geometry& geo, const std::string& body) {
  return geo.head + indent(body, 2) + geo.tail;
}

std::string store(const Graph& kernel, ValueId v, const std::string& dest,
                  const std::string& result) {
  DType t = kernel.value(v).type.dtype;
  std::string value = t == DType::boolean ? fmt::format("({}) ? 1 : 0", result) : result;
  return fmt::format("{}[e] = ({})({});\n", dest, cuda_impl::storage_type(t), value);
}

// What a root phase's block does besides its thread tiles: the one reduction they accumulate
// in registers, the regions it holds in shared memory, and which of them it computes there.
struct RootPlan {
  NodeId reduction = kNoNode;
  std::vector<schedule::StagedRegion> regions;
  std::vector<bool> computed;  // per value
};

// The root's plan under `config`; the values it computes lose their phase (`materialized`).
// `homes` has every materialized value in memory.
RootPlan plan_root(const Graph& kernel, const schedule::TileGraph& tg,
                   const schedule::GpuTileConfig& config, std::vector<bool>& materialized,
                   const std::vector<ValueHome>& homes) {
  RootPlan plan;
  plan.reduction = cuda_impl::accumulated_reduction(kernel, tg.root, homes);
  std::vector<bool> candidates = cuda_impl::block_candidates(tg, materialized);
  NodeId stepped = config.reduce_step > 0 ? plan.reduction : kNoNode;
  plan.regions = schedule::staged_regions(tg, config, stepped, candidates);
  plan.computed = cuda_impl::computed_values(kernel, candidates, materialized, plan.regions, homes);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    materialized[v] = materialized[v] && !plan.computed[v];
  return plan;
}

// The root output's phase under a tile config (its geometry set in `geo`), after the block
// index: what the block stages in shared memory or computes there, then its thread tiles. With
// a reduction the phase computes at the root's coordinates, each thread tile element accumulates
// its total in acc_tile, the reduce loops outside the element loops (Welder's register tile: an
// operand element loaded once serves every element of the thread tile that reads it); with a
// reduce step, those loops run a step at a time, each step starting with a barrier and its
// staging. The epilogue then reads the totals.
std::string root_phase(const Graph& kernel, const schedule::TileGraph& tg,
                       const schedule::GpuTileConfig& config, const RootPlan& plan,
                       const std::string& dest, std::vector<ValueHome> homes,
                       cuda_impl::Globals& globals, Geometry& geo) {
  ValueId root = tg.root;
  NodeId reduction = plan.reduction;
  int64_t step = config.reduce_step;
  geo = tiled(kernel.value(root).type.shape, config, reduction != kNoNode);
  cuda_impl::StagedCode staged =
      cuda_impl::stage_regions(tg, plan.regions, plan.computed, geo.threads, homes, globals);
  geo.shared_bytes = staged.bytes;
  std::vector<std::string> coords = coordinate_names(kernel.value(root).type.shape.size());
  if (reduction == kNoNode) {
    cuda_impl::PhaseEmitter emitter(kernel, homes, globals);
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
  cuda_impl::Accumulation sum =
      cuda_impl::accumulate(kernel, root, reduction, acc, vars, coords, homes, globals);
  std::string code = staged.once;
  code += fmt::format("{} acc_tile[{}];\nfor (long long ui = 0; ui < {}; ++ui) {} = {};\n",
                      sum.type, elements, elements, acc, sum.init);
  std::string accumulate = loops_open + indent(element_loops(geo, sum.term), 2) + loops_close;
  if (step > 0 && !staged.per_step.empty())
    accumulate = "__syncthreads();\n" + staged.per_step + accumulate;
  code += step > 0 ? steps_open + indent(accumulate, 2) + steps_close : accumulate;
  return code + element_loops(geo, sum.epilogue + store(kernel, root, dest, sum.result));
}

// The reduction a phase without a tile config computes one warp per element of `v`: the one
// prim.Reduce it computes at v's coordinates (perhaps under an elementwise epilogue), over the
// innermost dims of its input (so that a warp's lanes read consecutive elements) and at least a
// warp long, on a type warp shuffles move. kNoNode otherwise: one thread per element.
NodeId warp_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  NodeId r = cuda_impl::accumulated_reduction(kernel, v, homes);
  if (r == kNoNode || kernel.node(r).op != "prim.Reduce") return kNoNode;
  const Node& n = kernel.node(r);
  const TensorType& in = kernel.value(n.inputs[0]).type;
  if (!cuda_impl::shuffled(in.dtype)) return kNoNode;
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

// A phase of `v` whose reduction `r` (warp_reduction) runs one warp per element, `threads` (a
// whole number of warps) per block: each lane
// accumulates every 32nd element of the reduction, five shuffles combine the lanes, and lane 0
// applies the epilogue and stores. A block's warps take consecutive elements, and its trip count
// is the same for all its threads (shuffles need every lane).
std::string warp_phase(const Graph& kernel, ValueId v, NodeId r, const std::string& dest,
                       int threads, std::vector<ValueHome> homes, cuda_impl::Globals& globals,
                       Geometry& geo) {
  const Shape& shape = kernel.value(v).type.shape;
  int64_t n = num_elements(shape), warps = threads / kWarp;
  geo.threads = threads;
  geo.blocks = std::min(kMaxBlocks, (n + warps - 1) / warps);
  const Node& reduce = kernel.node(r);
  const Shape& xs = kernel.value(reduce.inputs[0]).type.shape;
  std::vector<int64_t> axes = attr_ints(reduce.attrs, "axes");
  // The reduce axes are the innermost dims: the lane's flat index rr splits into them.
  size_t first = xs.size() - axes.size();
  int64_t volume = 1;
  std::vector<std::string> vars(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    vars[a] = fmt::format("(rr / {} % {})", volume, xs[first + a]);
    volume *= xs[first + a];
  }
  cuda_impl::Accumulation sum = cuda_impl::accumulate(
      kernel, v, r, "acc", vars, coordinate_names(shape.size()), homes, globals);
  std::string code = fmt::format("for (long long w = bx * {0}; w < {1}; w += {2}LL * {0}) {{\n",
                                 warps, n, geo.blocks);
  code += fmt::format(
      "  const long long e = w + threadIdx.x / {0};\n  const int lane = threadIdx.x % {0};\n",
      kWarp);
  code += coordinates_of_e(shape);
  code += fmt::format("  {} acc = {};\n", sum.type, sum.init);
  code += fmt::format("  if (e < {}) {{\n    for (long long rr = lane; rr < {}; rr += {}) {{\n", n,
                      volume, kWarp);
  code += indent(sum.term, 6) + "    }\n  }\n";
  code += fmt::format("  for (int m = {}; m > 0; m /= 2) acc = {};\n", kWarp / 2,
                      cuda_impl::combine(kernel, reduce, "acc", "orch_shfl_xor(acc, m)"));
  code += fmt::format("  if (e < {} && lane == 0) {{\n", n);
  code += indent(sum.epilogue + store(kernel, v, dest, sum.result), 4) + "  }\n}\n";
  return code;
}

// The kernel output whose elements each read `v` once: every path from v goes through
// elementwise nodes of their input's shape (reading at their own coordinates) and layout
// permutations (prim.Transpose, prim.Reshape: one element each), and ends at that one output.
// With a permutation on the way the paths must form a chain (each value read by one node), so
// that no output element reads v at two coordinates. v is then computed once per element,
// inlined there, as Welder fuses a MatMul's epilogue; kNoValue otherwise.
ValueId sole_pointwise_reader(const Graph& kernel, ValueId v,
                              const std::vector<std::vector<NodeId>>& consumers) {
  ValueId reader = kNoValue;
  bool permuted = false, chain = true;
  std::vector<ValueId> work{v};
  std::vector<bool> seen(kernel.num_values(), false);
  while (!work.empty()) {
    ValueId u = work.back();
    work.pop_back();
    if (seen[u]) continue;
    seen[u] = true;
    if (u != v &&
        std::find(kernel.outputs().begin(), kernel.outputs().end(), u) != kernel.outputs().end()) {
      if (reader != kNoValue && reader != u) return kNoValue;
      reader = u;
    }
    chain = chain && consumers[u].size() <= 1;
    for (NodeId c : consumers[u]) {
      const Node& node = kernel.node(c);
      bool layout = node.op == "prim.Transpose" || node.op == "prim.Reshape";
      bool pointwise = node.op == "prim.Elementwise" &&
                       kernel.value(node.outputs[0]).type.shape == kernel.value(u).type.shape;
      if (!layout && !pointwise) return kNoValue;
      permuted = permuted || layout;
      work.push_back(node.outputs[0]);
    }
  }
  return permuted && !chain ? kNoValue : reader;
}

// Intermediate values written to scratch by a phase of their own (not kernel outputs).
std::vector<bool> materialized_values(const Graph& kernel,
                                      const std::vector<std::vector<NodeId>>& consumers) {
  std::vector<bool> materialized(kernel.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v) {
    const Value& value = kernel.value(v);
    materialized[v] = value.producer != kNoNode && !consumers[v].empty() &&
                      kMaterializedOps.count(kernel.node(value.producer).op) != 0 &&
                      sole_pointwise_reader(kernel, v, consumers) == kNoValue;
  }
  for (ValueId v : kernel.outputs()) materialized[v] = false;
  return materialized;
}

int64_t scratch_bytes(const Graph& kernel, ValueId v) {
  int64_t bytes = static_cast<int64_t>(num_elements(kernel.value(v).type.shape) *
                                       dtype_size(kernel.value(v).type.dtype));
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}

// The values with a phase, in dependency order: outputs without a producer (copies) first, then
// node order.
std::vector<ValueId> phase_values(const Graph& kernel, const std::vector<bool>& materialized) {
  std::vector<ValueId> phases;
  for (ValueId v : kernel.outputs())
    if (kernel.value(v).producer == kNoNode) phases.push_back(v);
  for (const Node& n : kernel.nodes()) {
    ValueId v = n.outputs[0];
    bool output =
        std::find(kernel.outputs().begin(), kernel.outputs().end(), v) != kernel.outputs().end();
    if (materialized[v] || output) phases.push_back(v);
  }
  return phases;
}

// What phase `v` reads from memory: the values `written` by a phase (or kernel inputs) that it
// reads directly or through the values it computes itself (inlined, or in shared memory).
std::vector<bool> memory_reads(const Graph& kernel, ValueId v, const std::vector<bool>& written) {
  std::vector<bool> read(kernel.num_values(), false);
  std::vector<ValueId> work{v};
  while (!work.empty()) {
    NodeId p = kernel.value(work.back()).producer;
    work.pop_back();
    if (p == kNoNode) continue;
    for (ValueId in : kernel.node(p).inputs) {
      if (read[in]) continue;
      read[in] = true;
      if (!written[in]) work.push_back(in);
    }
  }
  return read;
}

// The phases grouped into launches: a phase runs in the launch after the last one holding a
// phase whose output it reads (the blocks of one launch run in no set order), so each launch
// holds one level of the phases' dependency graph, in phase order. Korch's horizontal fusion:
// independent outputs of one kernel share a launch.
std::vector<std::vector<ValueId>> launch_groups(const Graph& kernel,
                                                const std::vector<ValueId>& phases,
                                                const std::vector<bool>& written) {
  std::vector<int> level(kernel.num_values(), -1);
  std::vector<std::vector<ValueId>> groups;
  for (ValueId v : phases) {
    std::vector<bool> read = memory_reads(kernel, v, written);
    int l = 0;
    for (ValueId u : phases)
      if (level[u] >= 0 && read[u] && kernel.value(u).producer != kNoNode)
        l = std::max(l, level[u] + 1);
    level[v] = l;
    if (static_cast<size_t>(l) == groups.size()) groups.emplace_back();
    groups[static_cast<size_t>(l)].push_back(v);
  }
  return groups;
}

// Per value: written to memory by a phase (materialized, or a computed kernel output).
std::vector<bool> written_values(const Graph& kernel, const std::vector<bool>& materialized) {
  std::vector<bool> written = materialized;
  for (ValueId v : kernel.outputs()) written[v] = written[v] || kernel.value(v).producer != kNoNode;
  return written;
}

}  // namespace

std::string cuda_reject(const Graph& kernel) {
  std::string sizes = reject_kernel_sizes(kernel);
  if (!sizes.empty()) return sizes;
  for (NodeId id = 0; id < static_cast<NodeId>(kernel.num_nodes()); ++id) {
    std::string reason = node_reason(kernel, kernel.node(id));
    if (!reason.empty()) return fmt::format("{}: {}", kernel.describe(id), reason);
  }
  std::vector<std::vector<NodeId>> consumers = kernel.consumers();
  int64_t bytes = 0;
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v) {
    if (!supported_dtype(kernel.value(v).type.dtype))
      return fmt::format("value '{}' is {}, which is not generated", kernel.value(v).name,
                         dtype_name(kernel.value(v).type.dtype));
    if (baked(kernel, v, consumers))
      bytes += static_cast<int64_t>(kernel.value(v).constant.nbytes());
  }
  if (bytes > kMaxBakedBytes)
    return fmt::format(
        "{} bytes of constants would be baked into the source (at most {}; pass "
        "large constants as kernel inputs)",
        bytes, kMaxBakedBytes);
  return "";
}

CudaKernelShape cuda_kernel_shape(const Graph& kernel) {
  std::vector<bool> materialized = materialized_values(kernel, kernel.consumers());
  CudaKernelShape shape;
  shape.stored.assign(kernel.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    shape.stored[v] = materialized[v] || kernel.value(v).producer == kNoNode;
  for (ValueId v : kernel.outputs()) shape.stored[v] = true;
  // The root phase computes its candidates per block under the config the stitcher picks,
  // presumed to hold them (their regions fit shared memory there).
  try {
    std::vector<bool> computed =
        cuda_impl::block_candidates(schedule::make_tile_graph(kernel), materialized);
    for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
      materialized[v] = materialized[v] && !computed[v];
  } catch (const Error&) {
    // No tile graph: no config, every materialized value keeps its phase.
  }
  shape.launches = static_cast<int>(launch_groups(kernel, phase_values(kernel, materialized),
                                                  written_values(kernel, materialized))
                                        .size());
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    if (materialized[v]) shape.scratch_bytes += scratch_bytes(kernel, v);
  return shape;
}

CudaKernelSource cuda_kernel_source(const Graph& kernel, const std::string& prefix,
                                    const schedule::GpuTileConfig* config) {
  std::string reason = cuda_reject(kernel);
  if (!reason.empty()) throw Unsupported(reason);
  std::vector<std::vector<NodeId>> consumers = kernel.consumers();
  size_t nv = kernel.num_values();
  std::vector<ValueHome> homes(nv);
  CudaKernelSource out;
  cuda_impl::Globals globals{prefix, "", {}};
  std::string scratch_pointers;
  for (size_t i = 0; i < kernel.inputs().size(); ++i)
    homes[kernel.inputs()[i]] = {ValueHome::pointer, fmt::format("in{}", i)};
  std::vector<bool> materialized = materialized_values(kernel, consumers);
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    const Value& value = kernel.value(v);
    if (value.is_constant() && value.type.shape.empty()) {
      homes[v] = {ValueHome::scalar, cuda_impl::literal(value.type.dtype, value.constant, 0)};
    } else if (baked(kernel, v, consumers)) {
      std::string name = fmt::format("{}_c{}", prefix, v);
      std::string items;
      for (int64_t i = 0; i < value.constant.numel(); ++i)
        items += (i ? ", " : "") + cuda_impl::literal(value.type.dtype, value.constant, i);
      globals.text += fmt::format("__device__ const {} {}[{}] = {{{}}};\n",
                                  cuda_impl::storage_type(value.type.dtype), name,
                                  value.constant.numel(), items);
      homes[v] = {ValueHome::array, name};
    }
  }
  // Where each phase writes; a computed output is read back from there by later phases.
  std::vector<std::string> dest(nv);
  for (size_t i = 0; i < kernel.outputs().size(); ++i) {
    ValueId v = kernel.outputs()[i];
    dest[v] = fmt::format("out{}", i);
    if (kernel.value(v).producer != kNoNode) homes[v] = {ValueHome::pointer, dest[v]};
  }
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    dest[v] = materialized[v] ? fmt::format("s{}", v) : dest[v];
    if (materialized[v]) homes[v] = {ValueHome::pointer, dest[v]};
  }
  std::optional<schedule::TileGraph> tg;
  RootPlan plan;
  if (config != nullptr) {
    tg = schedule::make_tile_graph(kernel);
    plan = plan_root(kernel, *tg, *config, materialized, homes);
  }
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    if (!materialized[v]) continue;
    scratch_pointers +=
        fmt::format("{0}* const s{1} = ({0}*)(scratch + {2});\n",
                    cuda_impl::storage_type(kernel.value(v).type.dtype), v, out.scratch_bytes);
    out.scratch_bytes += scratch_bytes(kernel, v);
  }
  std::vector<ValueId> phases = phase_values(kernel, materialized);
  ValueId root = tg ? tg->root : kNoValue;
  std::vector<std::string> params = cuda_impl::parameter_types(kernel);
  std::string signature;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string name = i < kernel.inputs().size() ? fmt::format("in{}", i)
                       : i + 1 < params.size()    ? fmt::format("out{}", i - kernel.inputs().size())
                                                  : "scratch";
    signature += fmt::format("{}{} {}", i ? ", " : "", params[i], name);
  }
  // A group with the root runs the config's block size, which the other phases take too.
  int root_threads = 0;
  if (config != nullptr) {
    root_threads = 1;
    for (size_t d = 0; d < config->block.size(); ++d)
      root_threads *= static_cast<int>(config->block[d] / std::max<int64_t>(config->thread[d], 1));
  }
  std::string functions;
  std::vector<std::vector<ValueId>> groups =
      launch_groups(kernel, phases, written_values(kernel, materialized));
  for (size_t k = 0; k < groups.size(); ++k) {
    const std::vector<ValueId>& group = groups[k];
    bool with_root = std::find(group.begin(), group.end(), root) != group.end();
    int threads = with_root ? root_threads : kThreads;
    std::string body;
    int64_t blocks = 0;
    for (ValueId v : group) {
      const Shape& shape = kernel.value(v).type.shape;
      Geometry geo;
      std::string phase;
      NodeId r = warp_reduction(kernel, v, homes);
      if (v == root) {
        phase = root_phase(kernel, *tg, *config, plan, dest[v], homes, globals, geo);
      } else if (r != kNoNode && threads % kWarp == 0) {
        phase = warp_phase(kernel, v, r, dest[v], threads, homes, globals, geo);
      } else {
        geo = grid_stride(shape, threads);
        cuda_impl::PhaseEmitter emitter(kernel, homes, globals);
        std::string result = emitter.compute(v, coordinate_names(shape.size()));
        phase = element_loops(geo, emitter.code() + store(kernel, v, dest[v], result));
      }
      check(geo.threads == threads, "phase '{}' has {} threads in a launch of {}",
            kernel.value(v).name, geo.threads, threads);
      phase = fmt::format("const long long bx = blockIdx.x{};\n",
                          blocks ? fmt::format(" - {}", blocks) : "") +
              geo.block + phase;
      // Each phase takes its own range of the launch's blocks.
      body += group.size() == 1 ? phase
                                : fmt::format("if (blockIdx.x >= {} && blockIdx.x < {}) {{\n{}}}\n",
                                              blocks, blocks + geo.blocks, indent(phase, 2));
      blocks += geo.blocks;
      out.shared_bytes = std::max(out.shared_bytes, geo.shared_bytes);
    }
    std::string name = fmt::format("{}_{}_{}", prefix, k, sanitize(kernel.value(group[0]).name));
    // The launch's block size as a bound: without it NVRTC may use more registers per thread
    // than a block of that size can have, and the launch would fail on the GPU.
    functions += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{\n",
                             threads, name, signature);
    functions += indent(scratch_pointers + body, 2);
    functions += "}\n";
    out.launches.push_back({name, blocks, threads});
  }
  out.code = globals.text + functions;
  return out;
}

}  // namespace orch::codegen
