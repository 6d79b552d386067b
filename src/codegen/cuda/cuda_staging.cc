// Welder's shared-memory staging in generated CUDA C: before a block computes its thread
// tiles, its threads copy each staged region (schedule/gpu/gpu_staging.h) into an array of the
// block's dynamic shared memory, computing an intermediate on the way, and wait at a barrier.
//
// Example: MatMul f32 [64,32]x[32,64] with block tile 16x16 stages A rows 16*b0.. (16x32) and
// B columns 16*b1.. (32x16); the dot products then read shA and shB instead of global memory.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "codegen/cuda/cuda_impl.h"

namespace orch::codegen::cuda_impl {
namespace {

// Per value: inlined (computed where it is read).
std::vector<bool> inlined(const std::vector<ValueHome>& homes) {
  std::vector<bool> out(homes.size());
  for (size_t v = 0; v < homes.size(); ++v) out[v] = homes[v].kind == ValueHome::inline_;
  return out;
}

// The values the phase of `v` reads: inlined ones it computes, and those it loads.
std::vector<bool> read_by(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  return values_read(kernel, v, inlined(homes));
}

// Producers before consumers: inputs and constants first, then node order.
int64_t order(const Graph& kernel, ValueId v) {
  return kernel.value(v).producer == kNoNode ? -1 : kernel.value(v).producer;
}

// The layout of the array staging `r` (schedule::staged_pitch, staged_array_bytes).
int64_t pitch_of(const schedule::StagedRegion& r, DType dtype) {
  return schedule::staged_pitch(r.size, static_cast<int64_t>(dtype_size(dtype)));
}

int64_t array_bytes(const schedule::StagedRegion& r, DType dtype) {
  return schedule::staged_array_bytes(r.size, static_cast<int64_t>(dtype_size(dtype)));
}

// Threads a block has at most.
constexpr int64_t kMaxThreads = 1024;

// A region's array at `offset` bytes of the block's shared memory, and a loop over its elements
// q with their coordinates.
struct SharedArray {
  std::string declare;  // the origin constants and the array's pointer
  std::string coords;   // statements defining z0.. of element q
  std::string inside;   // whether z0.. lie inside the value
  std::string at;       // the array index of element q
  int64_t elements = 0;
  ValueHome home;
};

SharedArray shared_array(const Graph& kernel, const schedule::StagedRegion& r, int64_t offset) {
  ValueId v = r.value;
  const TensorType& type = kernel.value(v).type;
  SharedArray a;
  std::string name = fmt::format("sh{}", v);
  std::vector<std::string> origin;
  for (size_t j = 0; j < r.size.size(); ++j) {
    std::string o = std::to_string(r.offset[j]);
    for (size_t d = 0; d < r.step[j].size(); ++d)
      if (r.step[j][d] != 0) o += fmt::format(" + {} * b{}", r.step[j][d], d);
    for (size_t k = 0; k < r.reduce_step[j].size(); ++k)
      if (r.reduce_step[j][k] != 0) o += fmt::format(" + {} * ks{}", r.reduce_step[j][k], k);
    origin.push_back(fmt::format("g{}_{}", v, j));
    a.declare += fmt::format("const long long {} = {};\n", origin.back(), o);
  }
  a.elements = 1;
  for (int64_t s : r.size) a.elements *= s;
  int64_t row = r.size.empty() ? 1 : r.size.back(), pitch = pitch_of(r, type.dtype);
  a.declare += shared_declaration(storage_type(type.dtype), name, offset);
  int64_t stride = 1;
  for (size_t j = r.size.size(); j-- > 0;) {
    a.coords =
        fmt::format("const long long z{} = {} + q / {} % {};\n", j, origin[j], stride, r.size[j]) +
        a.coords;
    a.inside = fmt::format("z{0} >= 0 && z{0} < {1}", j, type.shape[j]) +
               (a.inside.empty() ? "" : " && " + a.inside);
    stride *= r.size[j];
  }
  if (a.inside.empty()) a.inside = "true";
  a.at = pitch == row ? "q" : fmt::format("q / {} * {} + q % {}", row, pitch, row);
  a.home = {ValueHome::shared, name, origin, r.size, pitch};
  return a;
}

std::vector<std::string> z_names(size_t rank) {
  std::vector<std::string> z;
  for (size_t j = 0; j < rank; ++j) z.push_back(fmt::format("z{}", j));
  return z;
}

// The block's threads copy region `r` of its value into a shared array at `offset`.
std::string stage(const Graph& kernel, const schedule::StagedRegion& r, int64_t offset,
                  std::vector<ValueHome>& homes, Globals& globals) {
  DType dtype = kernel.value(r.value).type.dtype;
  SharedArray a = shared_array(kernel, r, offset);
  PhaseEmitter emitter(kernel, homes, globals);
  std::string value = emitter.read(r.value, z_names(r.size.size()));
  std::string code = a.declare;
  code += fmt::format("for (long long q = threadIdx.x; q < {}; q += blockDim.x) {{\n", a.elements);
  code += indent(a.coords, 2);
  code += fmt::format("  if ({}) {{\n{}    {}[{}] = {};\n  }}\n}}\n__syncthreads();\n", a.inside,
                      indent(emitter.code(), 4), a.home.name, a.at, to_storage(dtype, value));
  homes[r.value] = a.home;
  return code;
}

// Lanes reducing one element of a computed region together: a power of two up to the whole
// block that divides its `threads`, as many as they spread over its `elements` and the
// reduction's `volume` give; 1 where shuffles cannot combine them (a partial warp, a type
// shuffles do not move). A group must not end past the block: the lane 0 of a group cut short
// (64 lanes in a block of 800 threads) read partials of warps the block does not have (the
// emulator's race check found it).
int64_t group_size(int64_t threads, int64_t elements, int64_t volume, DType acc) {
  if (threads % kWarp != 0 || !shuffled(acc)) return 1;
  int64_t g = 1;
  while (threads % (g * 2) == 0 && g * 2 * elements <= threads && g * 2 <= volume) g *= 2;
  return g;
}

// The block computes region `r` of a reduction's result into a shared array at `offset`: groups
// of lanes (group_size) take its elements in turn, each lane accumulating every g-th term of the
// flattened reduction; shuffles combine a warp's lanes, and a group wider than a warp adds its
// warps' partials through shared memory (an array after the region's). Every thread runs the
// same trip count, as shuffles and barriers need.
std::string compute(const Graph& kernel, const schedule::TileGraph& tg,
                    const schedule::StagedRegion& r, int threads, int64_t offset,
                    std::vector<ValueHome>& homes, Globals& globals) {
  ValueId v = r.value;
  NodeId p = kernel.value(v).producer;
  const Node& reduce = kernel.node(p);
  SharedArray a = shared_array(kernel, r, offset);
  FlatReduce flat = flat_reduce(tg.maps[p]->reduce_extents);
  int64_t volume = flat.volume;
  Accumulation sum =
      accumulate(kernel, v, p, "acc", flat.vars, z_names(r.size.size()), homes, globals);
  int64_t g = group_size(threads, a.elements, volume, kernel.value(reduce.inputs[0]).type.dtype);
  std::string code = a.declare;
  std::string partials = fmt::format("pt{}", v);
  if (g > kWarp)
    code +=
        shared_declaration(sum.type, partials, offset + array_bytes(r, kernel.value(v).type.dtype));
  code += fmt::format("for (long long q0 = 0; q0 < {0}; q0 += {1}) {{\n", a.elements, threads / g);
  code += fmt::format("  const long long q = q0 + threadIdx.x / {};\n", g);
  code += fmt::format("  const long long lane = threadIdx.x % {};\n", g);
  code += indent(a.coords, 2);
  code += fmt::format("  const bool live = q < {} && {};\n", a.elements, a.inside);
  code += fmt::format("  {} acc = {};\n", sum.type, sum.init);
  code += fmt::format("  if (live) {{\n    for (long long rr = lane; rr < {}; rr += {}) {{\n",
                      volume, g);
  code += indent(sum.term, 6) + "    }\n  }\n";
  // A group wider than one lane has g * elements <= threads: the loop runs once and no
  // element overwrites the partials.
  code += indent(group_combine(kernel, reduce, g, partials, sum.type), 2);
  code += fmt::format("  if (live && lane == 0) {{\n{}    {}[{}] = {};\n  }}\n",
                      indent(sum.epilogue, 4), a.home.name, a.at,
                      to_storage(kernel.value(v).type.dtype, sum.result));
  homes[v] = a.home;
  return code + "}\n__syncthreads();\n";
}

// Whether every path from `v` through the kernel's nodes ends at `root` alone.
bool read_for_root_alone(const Graph& kernel, ValueId v, ValueId root,
                         const std::vector<std::vector<NodeId>>& consumers) {
  std::vector<bool> seen(kernel.num_values(), false);
  std::vector<ValueId> work{v};
  while (!work.empty()) {
    ValueId u = work.back();
    work.pop_back();
    if (seen[u]) continue;
    seen[u] = true;
    bool output =
        std::find(kernel.outputs().begin(), kernel.outputs().end(), u) != kernel.outputs().end();
    if (output && u != root) return false;
    for (NodeId c : consumers[u]) work.push_back(kernel.node(c).outputs[0]);
  }
  return true;
}

}  // namespace

std::vector<bool> values_read(const Graph& kernel, ValueId v, const std::vector<bool>& through) {
  std::vector<bool> read(kernel.num_values(), false);
  std::vector<ValueId> work{v};
  while (!work.empty()) {
    NodeId p = kernel.value(work.back()).producer;
    work.pop_back();
    if (p == kNoNode) continue;
    for (ValueId in : kernel.node(p).inputs) {
      if (read[in]) continue;
      read[in] = true;
      if (through[in]) work.push_back(in);
    }
  }
  return read;
}

std::vector<bool> root_phase_reads(const Graph& kernel, ValueId root,
                                   const std::vector<bool>& computed,
                                   const std::vector<ValueHome>& homes) {
  std::vector<bool> read = read_by(kernel, root, homes);
  for (ValueId v = 0; v < static_cast<ValueId>(computed.size()); ++v) {
    if (!computed[v]) continue;
    std::vector<bool> by = read_by(kernel, v, homes);
    for (size_t u = 0; u < read.size(); ++u) read[u] = read[u] || by[u];
  }
  return read;
}

std::vector<bool> block_candidates(const schedule::TileGraph& tg,
                                   const std::vector<bool>& materialized) {
  const Graph& kernel = *tg.graph;
  std::vector<bool> out(kernel.num_values(), false);
  std::vector<bool> affine = schedule::affinely_placed(tg);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v) {
    NodeId p = kernel.value(v).producer;
    if (!materialized[v] || !affine[v] || p == kNoNode || !tg.maps[p]) continue;
    const std::string& op = kernel.node(p).op;
    out[v] = (op == "prim.Reduce" || op == "prim.MatMul" || op == "prim.Conv") &&
             read_for_root_alone(kernel, v, tg.root, tg.consumers);
  }
  return out;
}

std::vector<bool> computed_values(const Graph& kernel, const std::vector<bool>& candidates,
                                  const std::vector<bool>& materialized,
                                  const std::vector<schedule::StagedRegion>& regions,
                                  const std::vector<ValueHome>& homes, int64_t shared_limit) {
  size_t nv = kernel.num_values();
  std::vector<const schedule::StagedRegion*> region_of(nv, nullptr);
  for (const schedule::StagedRegion& r : regions) region_of[r.value] = &r;
  std::vector<bool> computed(nv, false), needed_in_memory(nv, false);
  int64_t bytes = 0;
  // Readers before what they read: a value whose phase stays reads its inputs from memory.
  for (ValueId v = static_cast<ValueId>(nv); v-- > 0;) {
    if (!materialized[v]) continue;
    const schedule::StagedRegion* r = region_of[v];
    int64_t need = r ? array_bytes(*r, kernel.value(v).type.dtype) +
                           schedule::partials_bytes(kMaxThreads, kWarp)
                     : 0;
    if (candidates[v] && r && !r->stepped() && !needed_in_memory[v] &&
        bytes + need <= shared_limit) {
      computed[v] = true;
      bytes += need;
      continue;
    }
    std::vector<bool> read = read_by(kernel, v, homes);
    for (ValueId u = 0; u < static_cast<ValueId>(nv); ++u)
      needed_in_memory[u] = needed_in_memory[u] || read[u];
  }
  return computed;
}

StagedCode stage_regions(const schedule::TileGraph& tg,
                         const std::vector<schedule::StagedRegion>& regions,
                         const std::vector<bool>& computed, int threads, int64_t shared_limit,
                         std::vector<ValueHome>& homes, Globals& globals) {
  const Graph& kernel = *tg.graph;
  size_t nv = kernel.num_values();
  // What the phase reads: the root's computation and each computed value's.
  std::vector<bool> read = root_phase_reads(kernel, tg.root, computed, homes), after(nv, false);
  std::vector<const schedule::StagedRegion*> copies, computing;
  for (const schedule::StagedRegion& r : regions) {
    if (r.value < static_cast<ValueId>(computed.size()) && computed[r.value]) {
      computing.push_back(&r);
      continue;
    }
    if (!read[r.value]) continue;
    copies.push_back(&r);
    // An inlined value computed from a computed one is copied after it.
    if (homes[r.value].kind == ValueHome::inline_) {
      std::vector<bool> by = read_by(kernel, r.value, homes);
      for (ValueId u = 0; u < static_cast<ValueId>(computed.size()); ++u)
        after[r.value] = after[r.value] || (computed[u] && by[u]);
    }
  }
  // What is staged once comes first: its code runs before the step loop, so it must not read
  // a value staged per step.
  std::stable_sort(copies.begin(), copies.end(), [&](const auto* a, const auto* b) {
    return std::tuple(a->stepped(), after[a->value], order(kernel, a->value)) <
           std::tuple(b->stepped(), after[b->value], order(kernel, b->value));
  });
  StagedCode code;
  std::vector<int64_t> computed_at;  // offsets of the computed arrays, laid out first
  for (const schedule::StagedRegion* r : computing) {
    computed_at.push_back(code.bytes);
    code.bytes += array_bytes(*r, kernel.value(r->value).type.dtype) +
                  schedule::partials_bytes(threads, kWarp);
  }
  // Computed after the copies they may read, before those that read them.
  bool placed = false;
  auto place_computed = [&] {
    for (size_t i = 0; i < computing.size(); ++i)
      code.once += compute(kernel, tg, *computing[i], threads, computed_at[i], homes, globals);
    placed = true;
  };
  for (const schedule::StagedRegion* r : copies) {
    int64_t need = array_bytes(*r, kernel.value(r->value).type.dtype);
    if (code.bytes + need > shared_limit) continue;
    if (!placed && (r->stepped() || after[r->value])) place_computed();
    (r->stepped() ? code.per_step : code.once) += stage(kernel, *r, code.bytes, homes, globals);
    code.bytes += need;
  }
  if (!placed) place_computed();
  return code;
}

NodeId inline_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  std::vector<bool> read = read_by(kernel, v, homes);
  read[v] = true;
  NodeId found = kNoNode;
  for (ValueId u = 0; u < static_cast<ValueId>(kernel.num_values()); ++u) {
    NodeId p = kernel.value(u).producer;
    if (!read[u] || p == kNoNode || (u != v && homes[u].kind != ValueHome::inline_)) continue;
    const std::string& op = kernel.node(p).op;
    if (op != "prim.Reduce" && op != "prim.MatMul" && op != "prim.Conv") continue;
    if (found != kNoNode) return kNoNode;
    found = p;
  }
  return found;
}

bool elements_in_order(const Graph& kernel, NodeId r, ValueId v,
                       const std::vector<ValueHome>& homes, bool reshapes) {
  ValueId total = kernel.node(r).outputs[0];
  int64_t n = num_elements(kernel.value(total).type.shape);
  std::vector<bool> read = read_by(kernel, v, homes), from(kernel.num_values(), false);
  from[total] = true;
  for (NodeId p = r + 1; p < static_cast<NodeId>(kernel.num_nodes()); ++p) {
    const Node& node = kernel.node(p);
    ValueId out = node.outputs[0];
    if (out != v && !(homes[out].kind == ValueHome::inline_ && read[out])) continue;
    bool reads = std::any_of(node.inputs.begin(), node.inputs.end(),
                             [&](ValueId in) { return in != kNoValue && from[in]; });
    if (!reads) continue;
    bool in_place = node.op == "prim.Elementwise" || (reshapes && node.op == "prim.Reshape");
    if (!in_place || num_elements(kernel.value(out).type.shape) != n) return false;
    from[out] = true;
  }
  return from[v];
}

NodeId accumulated_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  NodeId r = inline_reduction(kernel, v, homes);
  bool same_shape = r != kNoNode && kernel.value(kernel.node(r).outputs[0]).type.shape ==
                                        kernel.value(v).type.shape;
  return same_shape && elements_in_order(kernel, r, v, homes, false) ? r : kNoNode;
}

}  // namespace orch::codegen::cuda_impl
