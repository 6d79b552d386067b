// Halide's own autoschedulers (the benchmark's baseline) on a lowered kernel.
#include <gtest/gtest.h>

#include "halide_util.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch::codegen {
namespace {

constexpr std::string_view kSoftmax = R"(graph g(%x: f32[32,100]) {
  %m: f32[32,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %mb: f32[32,100] = prim.Broadcast(%m) {shape = [32, 100]}
  %s: f32[32,100] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %e: f32[32,100] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[32,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[32,100] = prim.Broadcast(%t) {shape = [32, 100]}
  %y: f32[32,100] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})";

TEST(HalideAutoschedule, MullapudiScheduleMatches) {
  Graph g = parse_graph(kSoftmax);
  HalideKernel hk = halide_jit_autoscheduled(g, "Mullapudi2016", 2, 32 << 20);
  std::vector<Tensor> inputs = interp::random_inputs(g, 4);
  std::vector<Tensor> want = interp::interpret(g, inputs);
  std::vector<Tensor> got{Tensor(DType::f32, {32, 100})};
  hk.kernel->run(inputs, got);
  EXPECT_EQ(compare(want[0], got[0]), "");
}

TEST(HalideAutoschedule, MissingPluginIsUnsupported) {
  Graph g = parse_graph(kSoftmax);
  try {
    halide_jit_autoscheduled(g, "Nobody2030", 2, 32 << 20);
    FAIL() << "no error";
  } catch (const Unsupported& e) {
    EXPECT_EQ(std::string(e.what()),
              "the Halide autoscheduler Nobody2030 is not installed "
              "(/usr/lib/x86_64-linux-gnu/halide14/libautoschedule_nobody2030.so is missing)");
  }
}

}  // namespace
}  // namespace orch::codegen
