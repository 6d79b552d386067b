#include "driver/cost_estimate.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace orch::driver {
namespace {

double median(std::vector<double> values) {
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

}  // namespace

CostEstimate fit_cost_estimate(std::span<const CostSample> samples) {
  CostEstimate e;
  double fastest = INFINITY;
  for (const CostSample& s : samples)
    if (std::isfinite(s.cost_us)) fastest = std::min(fastest, s.cost_us);
  if (!std::isfinite(fastest)) return e;
  e.call_us = fastest;
  // Ratios from the kernels whose bound is not negligible: below a tenth of the call overhead
  // the ratio measures noise in the overhead, not efficiency.
  std::vector<double> singles[kKernelKinds], all[kKernelKinds];
  for (const CostSample& s : samples) {
    if (!std::isfinite(s.cost_us) || s.bound_us <= 0.1 * e.call_us) continue;
    double ratio = std::max(s.cost_us - e.call_us, 0.0) / s.bound_us;
    int k = static_cast<int>(s.kind);
    all[k].push_back(ratio);
    if (s.primitives == 1) singles[k].push_back(ratio);
  }
  bool known[kKernelKinds] = {};
  double largest = 1.0;
  for (int k = 0; k < kKernelKinds; ++k) {
    const std::vector<double>& ratios = singles[k].empty() ? all[k] : singles[k];
    if (ratios.empty()) continue;
    known[k] = true;
    e.slope[k] = std::max(median(ratios), 1.0);
    largest = std::max(largest, e.slope[k]);
  }
  for (int k = 0; k < kKernelKinds; ++k)
    if (!known[k]) e.slope[k] = largest;
  std::vector<double> extra;
  for (const CostSample& s : samples)
    if (std::isfinite(s.cost_us) && s.primitives > 1)
      extra.push_back(std::max(s.cost_us - estimate_cost_us(e, s.bound_us, s.kind), 0.0) /
                      (s.primitives - 1));
  if (!extra.empty()) e.per_primitive_us = median(extra);
  return e;
}

double estimate_cost_us(const CostEstimate& estimate, double bound_us, KernelKind kind,
                        int primitives) {
  return estimate.call_us + estimate.slope[static_cast<int>(kind)] * bound_us +
         estimate.per_primitive_us * std::max(primitives - 1, 0);
}

}  // namespace orch::driver
