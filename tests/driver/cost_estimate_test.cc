#include "driver/cost_estimate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace orch::driver {
namespace {

constexpr KernelKind kMemory = KernelKind::memory;
constexpr KernelKind kLibrary = KernelKind::library_compute;
constexpr KernelKind kGenerated = KernelKind::generated_compute;

TEST(CostEstimate, NoSamplesGivesTheBound) {
  CostEstimate e = fit_cost_estimate({});
  EXPECT_DOUBLE_EQ(estimate_cost_us(e, 7.0, kMemory), 7.0);
}

TEST(CostEstimate, OverheadIsTheFastestKernelAndSlopesAreMediansPerKind) {
  // Memory-bound: cost = 2 + 3 x bound; library compute: 2 + 10 x bound; generated compute:
  // only a fused kernel, 2 + 40 x bound.
  std::vector<CostSample> samples = {
      {.bound_us = 0.0, .cost_us = 2.0},
      {.bound_us = 1.0, .cost_us = 5.0},
      {.bound_us = 2.0, .cost_us = 8.0},
      {.bound_us = 4.0, .cost_us = 14.0},
      {.bound_us = 1.0, .cost_us = 12.0, .kind = kLibrary},
      {.bound_us = 3.0, .cost_us = 32.0, .kind = kLibrary},
      {.bound_us = 1.0, .cost_us = 42.0, .kind = kGenerated, .primitives = 3},
      {.bound_us = 5.0, .cost_us = INFINITY},  // failed kernels do not count
  };
  CostEstimate e = fit_cost_estimate(samples);
  EXPECT_DOUBLE_EQ(e.call_us, 2.0);
  EXPECT_DOUBLE_EQ(e.slope[0], 3.0);
  EXPECT_DOUBLE_EQ(e.slope[1], 10.0);
  EXPECT_DOUBLE_EQ(e.slope[2], 40.0);
  EXPECT_DOUBLE_EQ(estimate_cost_us(e, 10.0, kMemory), 32.0);
  EXPECT_DOUBLE_EQ(estimate_cost_us(e, 10.0, kLibrary), 102.0);
}

TEST(CostEstimate, AKindWithoutSamplesTakesTheLargestSlope) {
  std::vector<CostSample> samples = {{.bound_us = 0.0, .cost_us = 1.0},
                                     {.bound_us = 1.0, .cost_us = 4.0},
                                     {.bound_us = 1.0, .cost_us = 9.0, .kind = kLibrary}};
  CostEstimate e = fit_cost_estimate(samples);
  EXPECT_DOUBLE_EQ(e.slope[2], 8.0);
}

TEST(CostEstimate, SlopeNeverBelowOneSoEstimatesNeverUndercutTheBound) {
  std::vector<CostSample> samples = {{.bound_us = 1.0, .cost_us = 1.0},
                                     {.bound_us = 10.0, .cost_us = 5.0}};
  CostEstimate e = fit_cost_estimate(samples);
  EXPECT_GE(estimate_cost_us(e, 10.0, kMemory), 10.0);
}

TEST(CostEstimate, FusedKernelsTeachWhatEachExtraPrimitiveCosts) {
  // Singles: cost = 1 + 2 x bound. Fused kernels of 3 and 5 primitives cost 0.5 us more per
  // extra primitive than that; they do not change the slope.
  std::vector<CostSample> samples = {{.bound_us = 0.0, .cost_us = 1.0},
                                     {.bound_us = 1.0, .cost_us = 3.0},
                                     {.bound_us = 1.0, .cost_us = 4.0, .primitives = 3},
                                     {.bound_us = 1.0, .cost_us = 5.0, .primitives = 5}};
  CostEstimate e = fit_cost_estimate(samples);
  EXPECT_DOUBLE_EQ(e.slope[0], 2.0);
  EXPECT_DOUBLE_EQ(e.per_primitive_us, 0.5);
  EXPECT_DOUBLE_EQ(estimate_cost_us(e, 2.0, kMemory, 3), 1.0 + 4.0 + 1.0);
}

}  // namespace
}  // namespace orch::driver
