#include "fission_check.h"

#include <cmath>

#include <fmt/format.h>

namespace orch::fission::test {

std::vector<const FissionRule*> sampled_rules() {
  std::vector<const FissionRule*> out;
  for (const FissionRule& r : all_rules())
    if (r.sample != nullptr) out.push_back(&r);
  return out;
}

std::string compare(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.dtype() != b.dtype())
    return fmt::format("dtype {} vs {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
  if (a.shape() != b.shape())
    return fmt::format("shape {} vs {}", format_shape(a.shape()), format_shape(b.shape()));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (!is_float(a.dtype())) {
      if (a.get_int(i) != b.get_int(i))
        return fmt::format("element {}: {} vs {}", i, a.get_int(i), b.get_int(i));
      continue;
    }
    double x = a.get(i), y = b.get(i);
    if ((std::isnan(x) && std::isnan(y)) || x == y) continue;
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
      return fmt::format("element {}: {} vs {}", i, x, y);
  }
  return "";
}

std::string rule_name(const FissionRule& rule, size_t index) {
  return fmt::format("{}_{}", rule.op, index);
}

}  // namespace orch::fission::test
