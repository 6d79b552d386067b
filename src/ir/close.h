// The one element comparison every check against the interpreter uses (the profiler's check
// before timing, module validation, conformance).
#pragma once

#include <cmath>

namespace orch {

/// True when `got` matches `want` within |got - want| <= atol + rtol * |want|. Equal values match,
/// infinities included (inf - inf is NaN: a max-pool's -inf padding must not fail), and so do two
/// NaNs; anything else against an infinity does not (its relative tolerance would be infinite).
inline bool close_enough(double got, double want, double rtol, double atol) {
  if (got == want || (std::isnan(got) && std::isnan(want))) return true;
  return std::isfinite(want) && std::abs(got - want) <= atol + rtol * std::abs(want);
}

}  // namespace orch
