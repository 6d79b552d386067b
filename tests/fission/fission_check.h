// Shared by the fission tests: the samples of every rule, and a tolerant comparison.
#pragma once

#include <string>
#include <vector>

#include "fission/rule.h"

namespace orch::fission::test {

/// Samples per rule in the property tests.
inline constexpr int kSamplesPerRule = 25;

/// The rules that have a sampler, for INSTANTIATE_TEST_SUITE_P.
std::vector<const FissionRule*> sampled_rules();

/// "" when `a` matches `b` (same dtype and shape; floats within atol + rtol*|b|, NaN == NaN);
/// otherwise what differs.
std::string compare(const Tensor& a, const Tensor& b, double rtol, double atol);

/// A readable test name for a rule.
std::string rule_name(const FissionRule& rule, size_t index);

}  // namespace orch::fission::test
