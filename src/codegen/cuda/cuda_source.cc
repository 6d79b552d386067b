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

using cuda_impl::indent;
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

constexpr int64_t kScratchAlign = 256;  // bytes, per scratch value

std::string node_reason(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (v == kNoValue) return "absent optional input";
  if (!prim::is_primitive(n.op)) return fmt::format("'{}' is not a primitive", n.op);
  if (kGeneratedOps.count(n.op) == 0) return fmt::format("'{}' is not generated", n.op);
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

// The phases grouped into launches: a phase runs in the launch after the last one holding a
// phase whose output it reads (the blocks of one launch run in no set order), so each launch
// holds one level of the phases' dependency graph, in phase order. Korch's horizontal fusion:
// independent outputs of one kernel share a launch.
std::vector<std::vector<ValueId>> launch_groups(const Graph& kernel,
                                                const std::vector<ValueId>& phases,
                                                const std::vector<bool>& written) {
  std::vector<int> level(kernel.num_values(), -1);
  std::vector<std::vector<ValueId>> groups;
  // A phase reads from memory directly or through what it computes itself (inlined, or in
  // shared memory): every value no phase writes.
  std::vector<bool> through(written.size());
  for (size_t u = 0; u < written.size(); ++u) through[u] = !written[u];
  for (ValueId v : phases) {
    std::vector<bool> read = cuda_impl::values_read(kernel, v, through);
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

namespace {

// The kinds of the homes cuda_kernel_source gives values (their names left out): every value
// with a producer is inlined unless it is `materialized` or an output.
std::vector<ValueHome> home_kinds(const Graph& kernel, const std::vector<bool>& materialized) {
  std::vector<ValueHome> homes(kernel.num_values());
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    if (materialized[v] || kernel.value(v).producer == kNoNode) homes[v].kind = ValueHome::pointer;
  for (ValueId v : kernel.outputs()) homes[v].kind = ValueHome::pointer;
  return homes;
}

}  // namespace

bool cuda_warp_root(const Graph& kernel, const schedule::TileGraph& tg) {
  std::vector<bool> materialized = materialized_values(kernel, tg.consumers);
  return cuda_impl::warp_reduction(kernel, tg.root, home_kinds(kernel, materialized)) != kNoNode;
}

schedule::GpuKernelForm cuda_tile_form(const Graph& kernel, const schedule::TileGraph& tg) {
  std::vector<bool> materialized = materialized_values(kernel, tg.consumers);
  std::vector<ValueHome> homes = home_kinds(kernel, materialized);
  schedule::GpuKernelForm form;
  form.stepped = cuda_impl::accumulated_reduction(kernel, tg.root, homes);
  form.computed = cuda_impl::block_candidates(tg, materialized);
  form.read = cuda_impl::root_phase_reads(kernel, tg.root, form.computed, homes);
  return form;
}

CudaKernelShape cuda_kernel_shape(const Graph& kernel) {
  std::vector<bool> materialized = materialized_values(kernel, kernel.consumers());
  CudaKernelShape shape;
  shape.stored.assign(kernel.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    shape.stored[v] = materialized[v] || kernel.value(v).producer == kNoNode;
  for (ValueId v : kernel.outputs()) shape.stored[v] = true;
  // The root phase computes its candidates per block under the config the stitcher picks,
  // presumed to hold them (their regions fit shared memory there); a warp root has no config.
  try {
    schedule::TileGraph tg = schedule::make_tile_graph(kernel);
    std::vector<bool> computed = cuda_warp_root(kernel, tg)
                                     ? std::vector<bool>(kernel.num_values(), false)
                                     : cuda_impl::block_candidates(tg, materialized);
    for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
      materialized[v] = materialized[v] && !computed[v];
  } catch (const Error&) {
    // No tile graph: no config, every materialized value keeps its phase.
  }
  shape.launches = static_cast<int>(launch_groups(kernel, phase_values(kernel, materialized),
                                                  written_values(kernel, materialized))
                                        .size());
  std::vector<ValueHome> homes = home_kinds(kernel, materialized);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v) {
    if (materialized[v]) shape.scratch_bytes += scratch_bytes(kernel, v);
    if (!shape.stored[v] || kernel.value(v).producer == kNoNode) continue;
    NodeId r = cuda_impl::warp_reduction(kernel, v, homes);
    int64_t lanes =
        r != kNoNode ? cuda_impl::warp_lanes(kernel, v, r, cuda_impl::kDefaultThreads) : 1;
    shape.threads = std::max(shape.threads, num_elements(kernel.value(v).type.shape) * lanes);
  }
  return shape;
}

CudaKernelSource cuda_kernel_source(const Graph& kernel, const std::string& prefix,
                                    const schedule::GpuTileConfig* config, int64_t shared_limit) {
  check(shared_limit <= kCudaMaxSharedBytes,
        "{} bytes of shared memory per block: more than any GPU has ({} at most here)",
        shared_limit, kCudaMaxSharedBytes);
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
        items += (i ? ", " : "") + cuda_impl::storage_literal(value.type.dtype, value.constant, i);
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
  cuda_impl::RootPlan plan;
  if (config != nullptr) {
    tg = schedule::make_tile_graph(kernel);
    plan = cuda_impl::plan_root(kernel, *tg, *config, shared_limit, materialized, homes);
  }
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
    if (!materialized[v]) continue;
    scratch_pointers +=
        fmt::format("ORCH_SCRATCH({}, s{}, {});\n",
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
    int threads = with_root ? root_threads : cuda_impl::kDefaultThreads;
    std::string body;
    int64_t blocks = 0, shared_bytes = 0;
    for (ValueId v : group) {
      cuda_impl::Phase phase =
          v == root ? cuda_impl::root_phase(kernel, *tg, *config, plan, dest[v], homes, globals)
                    : cuda_impl::value_phase(kernel, v, dest[v], threads, homes, globals);
      check(phase.threads == threads, "phase '{}' has {} threads in a launch of {}",
            kernel.value(v).name, phase.threads, threads);
      std::string code = fmt::format("const long long bx = blockIdx.x{};\n",
                                     blocks ? fmt::format(" - {}", blocks) : "") +
                         phase.code;
      // Each phase takes its own range of the launch's blocks.
      body += group.size() == 1 ? code
                                : fmt::format("if (blockIdx.x >= {} && blockIdx.x < {}) {{\n{}}}\n",
                                              blocks, blocks + phase.blocks, indent(code, 2));
      blocks += phase.blocks;
      shared_bytes = std::max(shared_bytes, phase.shared_bytes);
    }
    out.shared_bytes = std::max(out.shared_bytes, shared_bytes);
    std::string name = fmt::format("{}_{}_{}", prefix, k, sanitize(kernel.value(group[0]).name));
    // The launch's block size as a bound: without it NVRTC may use more registers per thread
    // than a block of that size can have, and the launch would fail on the GPU.
    functions += fmt::format("extern \"C\" __global__ void __launch_bounds__({}) {}({}) {{\n",
                             threads, name, signature);
    functions += indent(scratch_pointers + body, 2);
    functions += "}\n";
    out.launches.push_back({name, blocks, threads, shared_bytes});
  }
  out.code = globals.text + functions;
  return out;
}

}  // namespace orch::codegen
