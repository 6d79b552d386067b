#include "interp/random_inputs.h"

#include <random>

#include "ir/hash_util.h"

namespace orch::interp {

Tensor random_tensor(const TensorType& type, uint64_t seed) {
  Tensor t(type.dtype, type.shape);
  // mt19937_64's raw output is specified by the standard, unlike std::uniform_*_distribution,
  // so the values are the same on every platform.
  std::mt19937_64 gen(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t bits = gen();
    if (is_float(type.dtype))
      t.set(i, static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);
    else if (type.dtype == DType::boolean)
      t.set_int(i, static_cast<int64_t>(bits & 1));
    else
      t.set_int(i, static_cast<int64_t>(bits % 10));
  }
  return t;
}

std::vector<Tensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    inputs.push_back(random_tensor(graph.value(graph.inputs()[i]).type, hash_combine(seed, i)));
  return inputs;
}

}  // namespace orch::interp
