// Reductions as CUDA C: a reduction's identity and combine, the accumulation of one total
// (its term and epilogue emitted by PhaseEmitter), and the combines across the lanes of a warp
// (shuffles) and of a wider group (through shared memory).
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "codegen/cuda/cuda_impl.h"

namespace orch::codegen::cuda_impl {

std::string initial_value(const Graph& g, const Node& n) {
  DType t = g.value(n.inputs[0]).type.dtype;
  if (n.op != "prim.Reduce") return literal(t, Tensor::scalar(t, 0.0), 0);
  std::string kind = attr_string(n.attrs, "kind", "");
  double inf = std::numeric_limits<double>::infinity();
  double init = kind == "sum" ? 0.0 : kind == "prod" ? 1.0 : kind == "max" ? -inf : inf;
  return literal(t, Tensor::scalar(t, init), 0);
}

std::string combine(const Graph& g, const Node& n, const std::string& acc, const std::string& x) {
  DType t = g.value(n.inputs[0]).type.dtype;
  std::string kind = n.op == "prim.Reduce" ? attr_string(n.attrs, "kind", "") : "sum";
  return kind == "sum"    ? elementwise_expr("add", {acc, x}, t, t)
         : kind == "prod" ? elementwise_expr("mul", {acc, x}, t, t)
                          : fmt::format("orch_{}({}, {})", kind, acc, x);
}

Accumulation accumulate(const Graph& kernel, ValueId v, NodeId r, const std::string& acc,
                        const std::vector<std::string>& vars,
                        const std::vector<std::string>& coords, std::vector<ValueHome> homes,
                        Globals& globals, const std::vector<std::string>& total_coords) {
  const Node& reduce = kernel.node(r);
  ValueId total = reduce.outputs[0];
  Accumulation a;
  PhaseEmitter term(kernel, homes, globals);
  term.accumulate_into(total, acc, vars);
  term.compute(total, total_coords.empty() ? coords : total_coords);
  a.type = value_type(kernel.value(reduce.inputs[0]).type.dtype);
  a.init = initial_value(kernel, reduce);
  a.term = term.code();
  // The epilogue reads the total as the interpreter stores it: rounded to f16 or bf16.
  homes[total] = {ValueHome::scalar, rounded(kernel.value(total).type.dtype, acc)};
  PhaseEmitter epilogue(kernel, homes, globals);
  a.result = total == v ? acc : epilogue.compute(v, coords);
  a.epilogue = epilogue.code();
  return a;
}

FlatReduce flat_reduce(const std::vector<int64_t>& extents) {
  FlatReduce f;
  f.vars.resize(extents.size());
  for (size_t k = extents.size(); k-- > 0;) {
    f.vars[k] = fmt::format("(rr / {} % {})", f.volume, extents[k]);
    f.volume *= extents[k];
  }
  return f;
}

std::string shuffle_combine(const Graph& g, const Node& reduce, int64_t lanes) {
  return fmt::format("for (int m = {}; m > 0; m /= 2) acc = {};\n", lanes / 2,
                     combine(g, reduce, "acc", "orch_shfl_xor(acc, m)"));
}

std::string group_combine(const Graph& g, const Node& reduce, int64_t lanes,
                          const std::string& partials, const std::string& type) {
  if (lanes <= 1) return "";
  std::string code = shuffle_combine(g, reduce, std::min(lanes, kWarp));
  if (lanes <= kWarp) return code;
  code += fmt::format("if (threadIdx.x % {} == 0) {}[threadIdx.x / {}] = acc;\n", kWarp, partials,
                      kWarp);
  code += "__syncthreads();\n";
  // The partial is cast to the accumulator's type: the host's checked shared arrays hand out a
  // reference that converts to it, which orch_max and orch_min could not deduce their type from.
  std::string partial = fmt::format("({})({}[threadIdx.x / {} + wp])", type, partials, kWarp);
  return code + fmt::format("if (lane == 0)\n  for (int wp = 1; wp < {}; ++wp) acc = {};\n",
                            lanes / kWarp, combine(g, reduce, "acc", partial));
}

std::string shared_declaration(const std::string& type, const std::string& name, int64_t offset) {
  return fmt::format("ORCH_SHARED({}, {}, {});\n", type, name, offset);
}

bool shuffled(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64;
}

}  // namespace orch::codegen::cuda_impl
