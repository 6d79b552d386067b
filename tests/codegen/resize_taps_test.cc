#include "codegen/resize_taps.h"

#include <gtest/gtest.h>

namespace orch::codegen {
namespace {

Attributes resize(const std::string& mode, const std::string& coordinates, float scale) {
  return {{"mode", mode},
          {"coordinate_transformation_mode", coordinates},
          {"scales", std::vector<float>{1.0f, 1.0f, scale, scale}}};
}

// The taps of the last axis, 8 -> 8 * scale coordinates.
ResizeTaps last_axis(const Attributes& attrs) {
  return resize_taps(attrs, {DType::f32, {1, 1, 8, 8}}).back();
}

TEST(PeriodicTaps, BilinearUpsamplingByTwo) {
  // Output 2q reads q-1 and q (weights 1/4, 3/4), output 2q+1 reads q and q+1 (3/4, 1/4);
  // the first and last outputs clamp their outer tap to the edge.
  std::optional<PeriodicTaps> p =
      periodic_taps(last_axis(resize("linear", "half_pixel", 2)), 8, 16, 8);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->period, 2);
  EXPECT_EQ(p->step, 1);
  // Tap 0: floor((x + 1) / 2) - 1; tap 1: floor((x + 1) / 2).
  EXPECT_EQ(p->shift, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(p->base, (std::vector<int64_t>{-1, 0}));
  EXPECT_EQ(p->weight, (std::vector<float>{0.25f, 0.75f, 0.75f, 0.25f}));
}

TEST(PeriodicTaps, NearestAndDownsampling) {
  std::optional<PeriodicTaps> up =
      periodic_taps(last_axis(resize("nearest", "asymmetric", 4)), 8, 32, 8);
  ASSERT_TRUE(up.has_value());
  EXPECT_EQ(up->period, 4);
  // round_prefer_floor (the default) of x / 4: 0, 0, 0, 1, 1, ... = floor((x + 1) / 4).
  EXPECT_EQ(up->shift, (std::vector<int64_t>{1}));
  EXPECT_EQ(up->base, (std::vector<int64_t>{0}));
  // Halving with bilinear half_pixel: output x reads 2x and 2x+1, 1/2 each.
  std::optional<PeriodicTaps> down =
      periodic_taps(last_axis(resize("linear", "half_pixel", 0.5f)), 8, 4, 8);
  ASSERT_TRUE(down.has_value());
  EXPECT_EQ(down->period, 1);
  EXPECT_EQ(down->step, 2);
  EXPECT_EQ(down->base, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(down->weight, (std::vector<float>{0.5f, 0.5f}));
}

TEST(PeriodicTaps, NoneWhereTheTapsDoNotRepeat) {
  // align_corners maps 8 -> 16 by 7/15: weights vary along the axis.
  EXPECT_FALSE(periodic_taps(last_axis(resize("linear", "align_corners", 2)), 8, 16, 8));
  // Upsampling by 16 has period 16, over the cap.
  EXPECT_FALSE(periodic_taps(last_axis(resize("nearest", "asymmetric", 16)), 8, 128, 8));
}

}  // namespace
}  // namespace orch::codegen
