// The enumerator's backend question (driver/backend_check.h) on small primitive graphs.
#include <gtest/gtest.h>

#include "driver/backend_check.h"
#include "ir/text_format.h"

namespace orch::driver {
namespace {

// A MatMul with a broadcast bias and a ReLU, then a row sum: vertices 0 MatMul, 1 Reshape,
// 2 Broadcast, 3 Add, 4 Relu, 5 Reduce.
constexpr const char* kMlp = R"(graph g(%x: f32[4,8]) {
  const %w = f32[8,2]{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
  const %b = f32[2]{0.5, -0.5}
  %h: f32[4,2] = prim.MatMul(%x, %w)
  %br: f32[1,2] = prim.Reshape(%b) {shape = [1, 2]}
  %bb: f32[4,2] = prim.Broadcast(%br) {shape = [4, 2]}
  %hb: f32[4,2] = prim.Elementwise(%h, %bb) {fn = "add"}
  %a: f32[4,2] = prim.Elementwise(%hb) {fn = "relu"}
  %s: f32[4,1] = prim.Reduce(%a) {axes = [1], kind = "sum"}
  return %a, %s
})";

TEST(BackendCheck, AcceptsWhatABackendGenerates) {
  Graph g = parse_graph(kMlp);
  KernelCheck check = backend_check(g);
  EXPECT_EQ(check({0, 3, 4}, {4}), "");              // oneDNN: MatMul + bias + ReLU post-ops
  EXPECT_EQ(check({3, 4, 5}, {4, 5}), "");           // Halide: elementwise chain and a row sum
  EXPECT_EQ(check({0, 1, 2, 3, 4, 5}, {4, 5}), "");  // Halide lowers the MatMul too
}

TEST(BackendCheck, SinglePrimitivesAlwaysPass) {
  Graph g = parse_graph(kMlp);
  KernelCheck check = backend_check(g);
  for (int v = 0; v < 6; ++v) EXPECT_EQ(check({v}, {v}), "") << v;
}

// Halide indexes with 32-bit integers: a fused kernel holding a value of 2^32 elements is not
// generable, and the reason says why (it never reaches the compiler).
TEST(BackendCheck, RejectsWithTheBackendsReason) {
  Graph g = parse_graph(R"(graph g(%x: f32[65536,1]) {
  %b: f32[65536,65536] = prim.Broadcast(%x) {shape = [65536, 65536]}
  %s: f32[65536,1] = prim.Reduce(%b) {axes = [1], kind = "sum"}
  return %s
})");
  std::string reason = backend_check(g)({0, 1}, {1});
  EXPECT_EQ(reason.rfind("not generable: ", 0), 0u) << reason;
  EXPECT_NE(reason.find("2^31 elements"), std::string::npos) << reason;
}

}  // namespace
}  // namespace orch::driver
