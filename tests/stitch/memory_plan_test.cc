#include "stitch/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

#include "ir/error.h"

namespace orch::stitch {
namespace {

TEST(MemoryPlan, ReusesBuffersThatAreNeverLiveTogether) {
  // The header's example: a and c can share bytes, b lives with both.
  std::vector<BufferRequest> buffers = {{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}};
  MemoryPlan plan = plan_memory(buffers);
  EXPECT_EQ(plan.offsets, (std::vector<int64_t>{0, 4096, 0}));
  EXPECT_EQ(plan.arena_bytes, 8192);
  EXPECT_EQ(plan.total_bytes, 12288);
}

TEST(MemoryPlan, BestFitTakesTheSmallestGapThatHolds) {
  // Live at 5: a [0,4096) and a 1 KiB hole above it... built so two holes exist: 3 KiB and 1 KiB.
  std::vector<BufferRequest> buffers = {
      {8192, 0, 9},  // big, always live: offset 0
      {3072, 0, 1},  // dies at 1: leaves a 3 KiB hole at 8192
      {1024, 0, 9},  // offset 11264, always live
      {1024, 0, 1},  // dies at 1: leaves a 1 KiB hole at 12288
      {1024, 0, 9},  // offset 13312, always live
      {1024, 5, 6},  // best fit: the 1 KiB hole, not the 3 KiB one
  };
  MemoryPlan plan = plan_memory(buffers);
  EXPECT_EQ(plan.offsets[0], 0);
  EXPECT_EQ(plan.offsets[1], 8192);
  EXPECT_EQ(plan.offsets[3], plan.offsets[5]);
  EXPECT_TRUE(memory_plan_is_valid(buffers, plan));
}

TEST(MemoryPlan, AlignsOffsetsAndSizes) {
  std::vector<BufferRequest> buffers = {{10, 0, 0}, {10, 0, 0}, {1, 0, 0}};
  MemoryPlan plan = plan_memory(buffers, 64);
  for (int64_t offset : plan.offsets) EXPECT_EQ(offset % 64, 0);
  EXPECT_EQ(plan.arena_bytes, 192);
}

TEST(MemoryPlan, NoTwoLiveBuffersOverlapOnRandomLifetimes) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int kernels = 1 + static_cast<int>(rng() % 30);
    std::vector<BufferRequest> buffers(1 + rng() % 40);
    for (BufferRequest& b : buffers) {
      b.first = static_cast<int>(rng() % kernels);
      b.last = b.first + static_cast<int>(rng() % (kernels - b.first));
      b.bytes = static_cast<int64_t>(rng() % 5000);
    }
    MemoryPlan plan = plan_memory(buffers);
    ASSERT_TRUE(memory_plan_is_valid(buffers, plan)) << "trial " << trial;
    EXPECT_LE(plan.arena_bytes, plan.total_bytes);
    // The arena is at least the largest set of buffers live at one kernel.
    for (int k = 0; k < kernels; ++k) {
      int64_t live = 0;
      for (const BufferRequest& b : buffers)
        if (b.first <= k && k <= b.last) live += (b.bytes + 63) / 64 * 64;
      EXPECT_GE(plan.arena_bytes, live);
    }
  }
}

TEST(MemoryPlan, RejectsALifetimeEndingBeforeItStarts) {
  std::vector<BufferRequest> buffers = {{64, 3, 1}};
  try {
    plan_memory(buffers);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "buffer 0: 64 bytes live over [3, 1]");
  }
}

}  // namespace
}  // namespace orch::stitch
