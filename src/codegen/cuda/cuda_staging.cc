// Welder's shared-memory staging in generated CUDA C: before a block computes its thread
// tiles, its threads copy each staged region (schedule/gpu/gpu_staging.h) into a __shared__
// array, computing an intermediate on the way, and wait at a barrier.
//
// Example: MatMul f32 [64,32]x[32,64] with block tile 16x16 stages A rows 16*b0.. (16x32) and
// B columns 16*b1.. (32x16); the dot products then read shA and shB instead of global memory.
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "codegen/cuda/cuda_impl.h"

namespace orch::codegen::cuda_impl {
namespace {

// The values the root's phase reads: inlined ones it computes, and those it loads.
std::vector<bool> read_by(const Graph& kernel, ValueId root, const std::vector<ValueHome>& homes) {
  std::vector<bool> read(kernel.num_values(), false);
  std::vector<ValueId> work{root};
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    NodeId p = kernel.value(v).producer;
    if (p == kNoNode) continue;
    for (ValueId in : kernel.node(p).inputs) {
      if (read[in] || homes[in].kind == ValueHome::scalar) continue;
      read[in] = true;
      if (homes[in].kind == ValueHome::inline_) work.push_back(in);
    }
  }
  return read;
}

// Producers before consumers: inputs and constants first, then node order.
int64_t order(const Graph& kernel, ValueId v) {
  return kernel.value(v).producer == kNoNode ? -1 : kernel.value(v).producer;
}

// The row pitch of a staged array: a 4-byte type's rows of an even length get one element more,
// an odd pitch, so that threads reading the same column of different rows (a MatMul operand
// across a warp's rows) hit different banks of shared memory.
int64_t pitch_of(const schedule::StagedRegion& r, DType dtype) {
  int64_t row = r.size.empty() ? 1 : r.size.back(), rows = 1;
  for (size_t j = 0; j + 1 < r.size.size(); ++j) rows *= r.size[j];
  return dtype_size(dtype) == 4 && rows > 1 && row % 2 == 0 ? row + 1 : row;
}

// Bytes of the array staging `r`.
int64_t array_bytes(const schedule::StagedRegion& r, DType dtype) {
  int64_t rows = 1;
  for (size_t j = 0; j + 1 < r.size.size(); ++j) rows *= r.size[j];
  return rows * pitch_of(r, dtype) * static_cast<int64_t>(dtype_size(dtype));
}

std::string stage(const Graph& kernel, const schedule::StagedRegion& r,
                  std::vector<ValueHome>& homes, Globals& globals) {
  ValueId v = r.value;
  const TensorType& type = kernel.value(v).type;
  std::string name = fmt::format("sh{}", v);
  std::string code;
  std::vector<std::string> origin;
  for (size_t j = 0; j < r.size.size(); ++j) {
    std::string o = std::to_string(r.offset[j]);
    for (size_t d = 0; d < r.step[j].size(); ++d)
      if (r.step[j][d] != 0) o += fmt::format(" + {} * b{}", r.step[j][d], d);
    for (size_t a = 0; a < r.reduce_step[j].size(); ++a)
      if (r.reduce_step[j][a] != 0) o += fmt::format(" + {} * ks{}", r.reduce_step[j][a], a);
    origin.push_back(fmt::format("g{}_{}", v, j));
    code += fmt::format("const long long {} = {};\n", origin.back(), o);
  }
  int64_t elements = 1;
  for (int64_t s : r.size) elements *= s;
  int64_t row = r.size.empty() ? 1 : r.size.back(), pitch = pitch_of(r, type.dtype);
  code += fmt::format("__shared__ {} {}[{}];\n", storage_type(type.dtype), name,
                      elements / row * pitch);
  code += fmt::format("for (long long q = threadIdx.x; q < {}; q += blockDim.x) {{\n", elements);
  std::vector<std::string> coords;
  std::string inside, body;
  int64_t stride = 1;
  for (size_t j = r.size.size(); j-- > 0;) {
    coords.insert(coords.begin(), fmt::format("z{}", j));
    body = fmt::format("  const long long z{} = {} + q / {} % {};\n", j, origin[j], stride,
                       r.size[j]) +
           body;
    inside = fmt::format("z{0} >= 0 && z{0} < {1}", j, type.shape[j]) +
             (inside.empty() ? "" : " && " + inside);
    stride *= r.size[j];
  }
  code += body;
  PhaseEmitter emitter(kernel, homes, globals);
  std::string value = emitter.read(v, coords);
  if (type.dtype == DType::boolean) value = fmt::format("({}) ? 1 : 0", value);
  std::string statements;
  for (size_t start = 0, end; start < emitter.code().size(); start = end + 1) {
    end = emitter.code().find('\n', start);
    statements += "    " + emitter.code().substr(start, end - start) + "\n";
  }
  std::string at = pitch == row ? "q" : fmt::format("q / {} * {} + q % {}", row, pitch, row);
  code += fmt::format("  if ({}) {{\n{}    {}[{}] = ({})({});\n  }}\n}}\n__syncthreads();\n",
                      inside.empty() ? "true" : inside, statements, name, at,
                      storage_type(type.dtype), value);
  homes[v] = {ValueHome::shared, name, origin, r.size, pitch};
  return code;
}

}  // namespace

StagedCode stage_regions(const Graph& kernel, ValueId root,
                         const std::vector<schedule::StagedRegion>& regions,
                         std::vector<ValueHome>& homes, Globals& globals) {
  std::vector<bool> read = read_by(kernel, root, homes);
  std::vector<const schedule::StagedRegion*> chosen;
  for (const schedule::StagedRegion& r : regions)
    if (read[r.value]) chosen.push_back(&r);
  // What is staged once comes first: its code runs before the step loop, so it must not read
  // a value staged per step.
  std::stable_sort(chosen.begin(), chosen.end(), [&](const auto* a, const auto* b) {
    return std::pair(a->stepped(), order(kernel, a->value)) <
           std::pair(b->stepped(), order(kernel, b->value));
  });
  StagedCode code;
  for (const schedule::StagedRegion* r : chosen) {
    int64_t need = array_bytes(*r, kernel.value(r->value).type.dtype);
    if (code.bytes + need > kMaxStaticShared) continue;
    code.bytes += need;
    (r->stepped() ? code.per_step : code.once) += stage(kernel, *r, homes, globals);
  }
  return code;
}

NodeId accumulated_reduction(const Graph& kernel, ValueId v, const std::vector<ValueHome>& homes) {
  std::vector<bool> read = read_by(kernel, v, homes);
  read[v] = true;
  NodeId found = kNoNode;
  for (ValueId u = 0; u < static_cast<ValueId>(kernel.num_values()); ++u) {
    NodeId p = kernel.value(u).producer;
    if (!read[u] || p == kNoNode || (u != v && homes[u].kind != ValueHome::inline_)) continue;
    const std::string& op = kernel.node(p).op;
    if (op != "prim.Reduce" && op != "prim.MatMul" && op != "prim.Conv") continue;
    if (found != kNoNode || kernel.value(u).type.shape != kernel.value(v).type.shape)
      return kNoNode;
    found = p;
  }
  return found;
}

}  // namespace orch::codegen::cuda_impl
