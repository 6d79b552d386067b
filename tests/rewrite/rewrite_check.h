// Shared by the rewrite tests: comparing graphs' results on random inputs.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/graph.h"

namespace orch::rewrite::test {

/// "" when `a` matches `b` (same dtype and shape; values within atol + rtol*|b|, NaN == NaN).
inline std::string compare(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return fmt::format("type {}{} vs {}{}", dtype_name(a.dtype()), format_shape(a.shape()),
                       dtype_name(b.dtype()), format_shape(b.shape()));
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
      return fmt::format("element {}: {} vs {}", i, x, y);
  }
  return "";
}

/// "" when both graphs give the same outputs on random inputs (seeded), else what differs.
inline std::string same_results(const Graph& before, const Graph& after, uint64_t seed,
                                double rtol = 1e-4, double atol = 1e-5) {
  std::vector<Tensor> inputs = interp::random_inputs(before, seed);
  std::vector<Tensor> want = interp::interpret(before, inputs);
  std::vector<Tensor> got = interp::interpret(after, inputs);
  if (want.size() != got.size()) return "output count differs";
  for (size_t i = 0; i < want.size(); ++i) {
    std::string diff = compare(got[i], want[i], rtol, atol);
    if (!diff.empty()) return fmt::format("output {}: {}", i, diff);
    if (before.value(before.outputs()[i]).name != after.value(after.outputs()[i]).name)
      return fmt::format("output {} renamed", i);
  }
  return "";
}

}  // namespace orch::rewrite::test
