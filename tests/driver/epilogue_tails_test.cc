// Which kernels the tuner measures up front beside oneDNN's epilogues (driver/unique_kernel.h):
// the epilogue's elementwise part without its Linear primitive.
#include <gtest/gtest.h>

#include "driver/unique_kernel.h"
#include "ir/text_format.h"

namespace orch::driver {
namespace {

// Vertices 0 MatMul, 1 Broadcast (bias), 2 Add, 3 Sigmoid, 4 Mul: a MatMul with a SiLU.
constexpr const char* kSilu = R"(graph g(%x: f32[4,8], %w: f32[8,2]) {
  const %b = f32[1,2]{0.5, -0.5}
  %h: f32[4,2] = prim.MatMul(%x, %w)
  %bb: f32[4,2] = prim.Broadcast(%b) {shape = [4, 2]}
  %hb: f32[4,2] = prim.Elementwise(%h, %bb) {fn = "add"}
  %s: f32[4,2] = prim.Elementwise(%hb) {fn = "sigmoid"}
  %y: f32[4,2] = prim.Elementwise(%hb, %s) {fn = "mul"}
  return %y
})";

struct Kernels {
  OrchestrationProblem problem;
  std::vector<UniqueKernel> unique;  // one per candidate, in candidate order
  std::vector<size_t> unique_of;
};

// Candidates of `members` (with their last primitive as output), each its own unique kernel;
// those holding the MatMul are oneDNN's, with one Linear primitive.
Kernels kernels(const std::vector<std::vector<int>>& members) {
  Kernels s;
  s.problem.num_primitives = 5;
  for (const std::vector<int>& m : members) {
    s.problem.candidates.push_back({.primitives = m, .outputs = {m.back()}});
    UniqueKernel u;
    u.candidates = {s.unique.size()};
    u.primitives = static_cast<int>(m.size());
    u.linear = m.front() == 0 ? 1 : 0;
    u.library = u.linear == 1;
    s.unique_of.push_back(s.unique.size());
    s.unique.push_back(std::move(u));
  }
  return s;
}

TEST(EpilogueTails, TheEpilogueWithoutItsLinearPrimitive) {
  Graph g = parse_graph(kSilu);
  // 0 the MatMul alone, 1 with bias and SiLU, 2 with the bias, 3 bias and SiLU alone, 4 the bias
  // alone, 5 the SiLU alone (no MatMul kernel has it as its rest).
  Kernels s = kernels({{0}, {0, 1, 2, 3, 4}, {0, 1, 2}, {1, 2, 3, 4}, {1, 2}, {3, 4}});
  EXPECT_EQ(epilogue_tails(s.unique, s.unique_of, s.problem, g), (std::vector<size_t>{3, 4}));
  s.unique[1].known = true;  // a measured epilogue still has its rest measured
  s.unique[4].known = true;  // a measured rest is not measured again
  EXPECT_EQ(epilogue_tails(s.unique, s.unique_of, s.problem, g), (std::vector<size_t>{3}));
}

TEST(EpilogueTails, NoneForKernelsOutsideOneDnn) {
  Graph g = parse_graph(kSilu);
  Kernels s = kernels({{0, 1, 2, 3, 4}, {1, 2, 3, 4}});
  s.unique[0].library = false;  // Halide's alone: no post-op to weigh against
  EXPECT_TRUE(epilogue_tails(s.unique, s.unique_of, s.problem, g).empty());
}

}  // namespace
}  // namespace orch::driver
