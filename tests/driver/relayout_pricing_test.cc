// Pricing for relaid-out modules (driver/unique_kernel.h): a oneDNN kernel measured blocked is
// planned without the reorders of its activations of whole channel blocks, never below half its
// time; other configurations and backends, and every record without relayout, keep their time.
#include <gtest/gtest.h>

#include "codegen/dnnl/dnnl_backend.h"
#include "driver/unique_kernel.h"
#include "interp/random_inputs.h"
#include "ir/builder.h"

namespace orch::driver {
namespace {

// A 1x1 convolution of 32 -> 64 channels at 16x16: 32 KB in, 64 KB out, weights constant.
Graph conv_graph() {
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, 32, 16, 16}});
  ValueId w = b.constant(interp::random_tensor({DType::f32, {64, 32, 1, 1}}, 1));
  b.output(b.op("Conv", {x, w}));
  return g;
}

profile::TuningRecord record(const std::string& backend, const std::string& config, double us) {
  return {.backend = backend, .config = config, .ok = true, .median_us = us};
}

UniqueKernel conv_kernel() {
  UniqueKernel u;
  u.kernel = conv_graph();
  u.library = true;
  return u;
}

TEST(RelayoutPricing, ReordersOfWholeBlocksAtTheMeasuredBandwidth) {
  // 32 and 64 channels are whole blocks of 8 and of 16; (32 + 64) KB at 40 GB/s.
  ASSERT_EQ(32 % codegen::dnnl_channel_block(), 0);
  EXPECT_NEAR(blocked_reorder_us(conv_kernel().kernel), 96.0 * 4 * 256 / 40e3, 1e-9);
}

TEST(RelayoutPricing, OnlyBlockedOneDnnRecordsWhenRelaidOut) {
  const double reorder = blocked_reorder_us(conv_kernel().kernel);
  std::vector<profile::TuningRecord> records = {record("dnnl", "layout=blocked", 20),
                                                record("dnnl", "layout=plain", 19)};
  UniqueKernel plain = conv_kernel();
  apply_records(plain, records, false);
  EXPECT_EQ(plain.choice.config, "layout=plain");
  EXPECT_DOUBLE_EQ(plain.cost_us, 19);
  UniqueKernel relaid = conv_kernel();
  apply_records(relaid, records, true);
  EXPECT_EQ(relaid.choice.config, "layout=blocked");
  EXPECT_DOUBLE_EQ(relaid.cost_us, 20 - reorder);
  UniqueKernel floor = conv_kernel();
  apply_records(floor, {record("dnnl", "layout=blocked", 3)}, true);
  EXPECT_DOUBLE_EQ(floor.cost_us, 1.5) << "never below half the time measured";
  UniqueKernel halide = conv_kernel();
  apply_records(halide, {record("halide", "", 20)}, true);
  EXPECT_DOUBLE_EQ(halide.cost_us, 20);
}

}  // namespace
}  // namespace orch::driver
