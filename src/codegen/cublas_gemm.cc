#include "codegen/cublas_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "codegen/kernel.h"
#include "ir/attribute.h"

namespace orch::codegen {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();

// Whether node `n` is a prim.Transpose swapping the last two of its dims and no other.
bool swaps_last_two(const Node& node) {
  if (node.op != "prim.Transpose") return false;
  std::vector<int64_t> perm = attr_ints(node.attrs, "perm");
  size_t r = perm.size();
  if (r < 2) return false;
  std::vector<int64_t> swapped(r);
  std::iota(swapped.begin(), swapped.end(), 0);
  std::swap(swapped[r - 2], swapped[r - 1]);
  return perm == swapped;
}

// An operand of the product: a kernel input read as it is, or one read through a transpose of
// its last two dims that nothing else reads. Sets `index` and `transposed`; false otherwise.
bool operand(const Graph& kernel, ValueId v, const std::vector<std::vector<NodeId>>& consumers,
             int& index, bool& transposed, int& absorbed) {
  index = kernel_input_index(kernel, v);
  transposed = false;
  if (index >= 0) return true;
  NodeId p = kernel.value(v).producer;
  if (p == kNoNode || !swaps_last_two(kernel.node(p)) || consumers[v].size() != 1) return false;
  index = kernel_input_index(kernel, kernel.node(p).inputs[0]);
  transposed = true;
  absorbed += 1;
  return index >= 0;
}

}  // namespace

std::optional<GemmSpec> gemm_spec(const Graph& kernel) {
  if (kernel.outputs().size() != 1) return std::nullopt;
  ValueId c = kernel.outputs()[0];
  NodeId p = kernel.value(c).producer;
  if (p == kNoNode || kernel.node(p).op != "prim.MatMul") return std::nullopt;
  const Node& matmul = kernel.node(p);
  const Shape& out = kernel.value(c).type.shape;
  for (ValueId v : {matmul.inputs[0], matmul.inputs[1], c})
    if (kernel.value(v).type.dtype != DType::f32) return std::nullopt;
  std::vector<std::vector<NodeId>> consumers = kernel.consumers();
  GemmSpec s;
  int absorbed = 0;
  if (!operand(kernel, matmul.inputs[0], consumers, s.a, s.trans_a, absorbed) ||
      !operand(kernel, matmul.inputs[1], consumers, s.b, s.trans_b, absorbed) ||
      kernel.num_nodes() != static_cast<size_t>(1 + absorbed))
    return std::nullopt;
  size_t r = out.size();
  const Shape& a = kernel.value(matmul.inputs[0]).type.shape;
  s.m = out[r - 2];
  s.n = out[r - 1];
  s.k = a[r - 1];
  s.batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) s.batch *= out[d];
  // cuBLAS takes int extents, leading dims and batch counts; a zero extent has nothing to run.
  for (int64_t e : {s.batch, s.m, s.n, s.k})
    if (e < 1 || e > kIntMax) return std::nullopt;
  return s;
}

std::string gemm_mismatch(const GemmSpec& s, std::span<const TensorType> inputs,
                          std::span<const TensorType> outputs) {
  for (int64_t e : {s.batch, s.m, s.n, s.k})
    if (e < 1 || e > kIntMax) return fmt::format("extent {} is outside 1..{}", e, kIntMax);
  if (s.a < 0 || s.b < 0 || s.a >= static_cast<int>(inputs.size()) ||
      s.b >= static_cast<int>(inputs.size()))
    return fmt::format("operands {} and {} of {} inputs", s.a, s.b, inputs.size());
  if (outputs.size() != 1) return fmt::format("{} outputs, a GEMM writes 1", outputs.size());
  struct Operand {
    const char* name;
    const TensorType& type;
    int64_t rows, cols;
  } operands[] = {
      {"A", inputs[s.a], s.m, s.k}, {"B", inputs[s.b], s.k, s.n}, {"C", outputs[0], s.m, s.n}};
  for (const Operand& o : operands) {
    // The extents are below 2^31 each: rows * cols * batch fits in __int128 and is compared
    // with num_elements, which holds the type's bound.
    __int128 elements = __int128{o.rows} * o.cols * s.batch;
    if (o.type.dtype != DType::f32 || elements != num_elements(o.type.shape))
      return fmt::format("{} is {}, the GEMM reads {} x {} x {} f32", o.name, format_type(o.type),
                         s.batch, o.rows, o.cols);
  }
  return "";
}

CublasGemmArgs cublas_arguments(const GemmSpec& s) {
  // Row-major C [m, n] is column-major C^T [n, m]; C^T = op_b(B)^T op_a(A)^T. B stored [k, n]
  // is column-major n x k (ld n), which is op_b(B)^T as it is; stored [n, k] (trans_b) it is
  // column-major k x n (ld k), transposed. Likewise A, k x m.
  CublasGemmArgs g;
  g.trans_first = s.trans_b;
  g.trans_second = s.trans_a;
  g.m = static_cast<int>(s.n);
  g.n = static_cast<int>(s.m);
  g.k = static_cast<int>(s.k);
  g.ld_first = static_cast<int>(s.trans_b ? s.k : s.n);
  g.ld_second = static_cast<int>(s.trans_a ? s.m : s.k);
  g.ld_c = static_cast<int>(s.n);
  g.stride_first = s.k * s.n;
  g.stride_second = s.m * s.k;
  g.stride_c = s.m * s.n;
  g.batch = static_cast<int>(s.batch);
  g.first = 1;
  g.second = 0;
  return g;
}

void sgemm_strided_batched(const CublasGemmArgs& g, const float* first, const float* second,
                           float* c) {
  for (int64_t b = 0; b < g.batch; ++b) {
    const float* x = first + b * g.stride_first;
    const float* y = second + b * g.stride_second;
    float* z = c + b * g.stride_c;
    for (int64_t j = 0; j < g.n; ++j)
      for (int64_t i = 0; i < g.m; ++i) {
        float sum = 0;
        for (int64_t l = 0; l < g.k; ++l) {
          float op_x = g.trans_first ? x[l + i * g.ld_first] : x[i + l * g.ld_first];
          float op_y = g.trans_second ? y[j + l * g.ld_second] : y[l + j * g.ld_second];
          sum += op_x * op_y;
        }
        z[i + j * g.ld_c] = sum;
      }
  }
}

}  // namespace orch::codegen
