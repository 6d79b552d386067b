// Reference kernels of the linear ops. Integer inputs accumulate exactly in wrapping 64-bit
// arithmetic, float inputs in double; each input is read once into a vector.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "interp/kernels/families.h"
#include "interp/kernels/linear_core.h"
#include "interp/kernels/util.h"
#include "ir/dtype.h"
#include "ir/ops/linear_einsum.h"

namespace orch::interp {
namespace {

template <typename T>
std::vector<T> values(const Tensor& t) {
  if constexpr (std::is_same_v<T, double>) {
    return t.to_doubles();
  } else {
    std::vector<int64_t> v = t.to_ints();
    return {v.begin(), v.end()};
  }
}

void store(Tensor& t, int64_t i, double v) {
  t.set(i, v);
}
void store(Tensor& t, int64_t i, uint64_t v) {
  t.set_int(i, static_cast<int64_t>(v));
}

// Runs `Int` (the uint64_t instance) for integer dtypes and `Float` (double) otherwise.
template <void (*Int)(KernelArgs&), void (*Float)(KernelArgs&)>
void by_dtype(KernelArgs& args) {
  is_integer(args.inputs[0].dtype()) ? Int(args) : Float(args);
}

template <typename T>
std::vector<T> matmul_core(const std::vector<T>& av, Shape a, const std::vector<T>& bv, Shape b,
                           const Shape& y) {
  bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  Shape batch(y.begin(), y.end() - (a_vector ? 0 : 1) - (b_vector ? 0 : 1));
  BroadcastIndex a_index(Shape(a.begin(), a.end() - 2), batch);
  BroadcastIndex b_index(Shape(b.begin(), b.end() - 2), batch);
  std::vector<T> out(num_elements(y));
  for (int64_t p = 0; p < num_elements(batch); ++p) {
    const T* ap = av.data() + a_index(p) * m * k;
    const T* bp = bv.data() + b_index(p) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      T* row = out.data() + (p * m + i) * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        T aik = ap[i * k + kk];
        for (int64_t j = 0; j < n; ++j) row[j] += aik * bp[kk * n + j];
      }
    }
  }
  return out;
}

template <typename T>
void matmul(KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& y = args.outputs[0];
  std::vector<T> out = matmul_core(values<T>(a), a.shape(), values<T>(b), b.shape(), y.shape());
  for (int64_t i = 0; i < y.numel(); ++i) store(y, i, out[i]);
}

// alpha and beta scale in double; an integer result with alpha = beta = 1 stays exact.
template <typename T>
T scaled(double factor, T v) {
  if (factor == 1) return v;
  return static_cast<T>(factor * static_cast<double>(static_cast<std::make_signed_t<T>>(v)));
}
template <>
double scaled(double factor, double v) {
  return factor * v;
}

template <typename T>
void gemm(KernelArgs& args) {
  const Tensor& ta = args.inputs[0];
  const Tensor& tb = args.inputs[1];
  Tensor& y = args.outputs[0];
  bool trans_a = attr_int(args.attrs, "transA", 0) != 0;
  bool trans_b = attr_int(args.attrs, "transB", 0) != 0;
  double alpha = attr_float(args.attrs, "alpha", 1.0f);
  double beta = attr_float(args.attrs, "beta", 1.0f);
  int64_t m = y.shape()[0], n = y.shape()[1];
  int64_t k = trans_a ? ta.shape()[0] : ta.shape()[1];
  std::vector<T> av = values<T>(ta), bv = values<T>(tb);
  bool has_c = args.inputs.size() > 2 && args.inputs[2].defined();
  std::vector<T> cv = has_c ? values<T>(args.inputs[2]) : std::vector<T>{};
  BroadcastIndex c_index(has_c ? args.inputs[2].shape() : Shape{}, y.shape());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += av[trans_a ? kk * m + i : i * k + kk] * bv[trans_b ? j * k + kk : kk * n + j];
      T out = scaled(alpha, acc);
      if (has_c) out += scaled(beta, cv[c_index(i * n + j)]);
      store(y, i * n + j, out);
    }
}

// Walks every label (output labels outermost, then summed ones) with an odometer that keeps each
// operand's element offset; repeated labels in an operand add their strides (diagonals).
template <typename T>
void einsum(KernelArgs& args) {
  std::vector<Shape> shapes;
  for (const Tensor& t : args.inputs) shapes.push_back(t.shape());
  ops::EinsumSpec spec = ops::parse_einsum(attr_string(args.attrs, "equation", ""), shapes);
  std::vector<int> order = spec.output;
  int64_t sum_count = 1;
  for (int label = 0; label < static_cast<int>(spec.sizes.size()); ++label)
    if (std::find(order.begin(), order.end(), label) == order.end()) {
      order.push_back(label);
      sum_count *= spec.sizes[label];
    }
  Tensor& y = args.outputs[0];
  if (sum_count == 0 || y.numel() == 0) return;  // outputs start zero-filled

  size_t n_ops = args.inputs.size();
  std::vector<std::vector<T>> vals;
  std::vector<std::vector<int64_t>> strides(n_ops, std::vector<int64_t>(order.size(), 0));
  for (size_t op = 0; op < n_ops; ++op) {
    vals.push_back(values<T>(args.inputs[op]));
    std::vector<int64_t> dim_strides = row_major_strides(shapes[op]);
    for (size_t d = 0; d < shapes[op].size(); ++d) {
      int label = spec.operands[op][d];
      // A size-1 dim broadcast against a larger '...' dim does not move.
      if (shapes[op][d] == 1 && spec.sizes[label] != 1) continue;
      size_t pos = std::find(order.begin(), order.end(), label) - order.begin();
      strides[op][pos] += dim_strides[d];
    }
  }
  std::vector<int64_t> index(order.size(), 0), offsets(n_ops, 0);
  auto advance = [&] {
    for (size_t d = order.size(); d-- > 0;) {
      int64_t size = spec.sizes[order[d]];
      for (size_t op = 0; op < n_ops; ++op) offsets[op] += strides[op][d];
      if (++index[d] < size) return;
      for (size_t op = 0; op < n_ops; ++op) offsets[op] -= strides[op][d] * size;
      index[d] = 0;
    }
  };
  for (int64_t o = 0; o < y.numel(); ++o) {
    T acc = 0;
    for (int64_t s = 0; s < sum_count; ++s) {
      T prod = 1;
      for (size_t op = 0; op < n_ops; ++op) prod *= vals[op][offsets[op]];
      acc += prod;
      advance();
    }
    store(y, o, acc);
  }
}

}  // namespace

std::vector<double> matmul_doubles(const std::vector<double>& a, const Shape& a_shape,
                                   const std::vector<double>& b, const Shape& b_shape,
                                   const Shape& y) {
  return matmul_core(a, a_shape, b, b_shape, y);
}

void add_linear_kernels(KernelTable& table) {
  table.insert(table.end(), {{"MatMul", by_dtype<matmul<uint64_t>, matmul<double>>},
                             {"Gemm", by_dtype<gemm<uint64_t>, gemm<double>>},
                             {"Einsum", by_dtype<einsum<uint64_t>, einsum<double>>}});
  add_linear_conv_kernels(table);
  add_linear_quant_kernels(table);
}

}  // namespace orch::interp
