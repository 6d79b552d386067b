// Phases grouped into launches: independent outputs of one kernel share a launch, each phase
// its own range of blocks; a phase reading what another writes runs in a later launch.
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"

namespace orch::codegen {
namespace {

// Two outputs computed from different inputs: a bias add and a MatMul.
constexpr const char* kIndependent =
    R"(graph g(%x: f32[8,40], %b: f32[1,40], %p: f32[12,20], %q: f32[20,16]) {
  %bb: f32[8,40] = prim.Broadcast(%b) {shape = [8, 40]}
  %y: f32[8,40] = prim.Elementwise(%x, %bb) {fn = "add"}
  %m: f32[12,16] = prim.MatMul(%p, %q)
  return %y, %m
})";

// Three outputs: a copy of an input, a row sum, and a sum of squares (the row reductions run a
// warp per row) next to the elementwise root.
constexpr const char* kThreeOutputs = R"(graph g(%x: f32[64,48], %z: f32[64,48]) {
  %s: f32[64,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  %x2: f32[64,48] = prim.Elementwise(%x, %x) {fn = "mul"}
  %q: f32[64,1] = prim.Reduce(%x2) {axes = [1], kind = "sum"}
  %y: f32[64,48] = prim.Elementwise(%z) {fn = "exp"}
  return %y, %s, %q, %z
})";

// The second output reads the first: two launches.
constexpr const char* kDependent = R"(graph g(%x: f32[16,40]) {
  %s: f32[16,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %sb: f32[16,40] = prim.Broadcast(%s) {shape = [16, 40]}
  %y: f32[16,40] = prim.Elementwise(%x, %sb) {fn = "sub"}
  return %y, %s
})";

// Two chains, each a row max and the rows minus it, their nodes interleaved: both maxima in one
// launch, both differences in the next.
constexpr const char* kTwoChains = R"(graph g(%x: f32[16,40], %z: f32[16,40]) {
  %s: f32[16,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %sb: f32[16,40] = prim.Broadcast(%s) {shape = [16, 40]}
  %y: f32[16,40] = prim.Elementwise(%x, %sb) {fn = "sub"}
  %t: f32[16,1] = prim.Reduce(%z) {axes = [1], kind = "max"}
  %tb: f32[16,40] = prim.Broadcast(%t) {shape = [16, 40]}
  %w: f32[16,40] = prim.Elementwise(%z, %tb) {fn = "sub"}
  return %y, %s, %w, %t
})";

struct Expect {
  CudaCase c;
  size_t launches;
};

std::vector<Expect> launch_cases() {
  std::vector<Expect> cases = {{cuda_case("independent", kIndependent, 3), 1},
                               {cuda_case("three outputs", kThreeOutputs, 3), 1},
                               {cuda_case("dependent", kDependent, 3), 2},
                               {cuda_case("two chains", kTwoChains, 3), 2}};
  size_t n = cases.size();
  for (size_t i = 0; i < n; ++i) {
    Expect tiled = cases[i];
    tiled.c.name += " tiled";
    tiled.c.config = best_h200_config(tiled.c.graph);
    cases.push_back(std::move(tiled));
  }
  return cases;
}

TEST(CudaLaunches, IndependentPhasesShareALaunchAndMatchTheInterpreter) {
  std::vector<Expect> expects = launch_cases();
  std::vector<CudaCase> cases;
  for (const Expect& e : expects) {
    CudaKernelSource source =
        cuda_kernel_source(e.c.graph, "k", e.c.config ? &*e.c.config : nullptr);
    EXPECT_EQ(source.launches.size(), e.launches) << e.c.name;
    EXPECT_EQ(cuda_kernel_shape(e.c.graph).launches, static_cast<int>(e.launches)) << e.c.name;
    cases.push_back(e.c);
  }
  expect_all_match(cases, 1e-4);
}

// Each phase of a shared launch takes the blocks after the previous phase's.
TEST(CudaLaunches, PhasesTakeConsecutiveBlockRanges) {
  Graph g = parse_graph(kIndependent);
  CudaKernelSource source = cuda_kernel_source(g, "k");
  ASSERT_EQ(source.launches.size(), 1u);
  // y: 320 elements, 2 blocks of 256 threads; m: 192 elements, 1 block.
  EXPECT_EQ(source.launches[0].blocks, 3);
  EXPECT_NE(source.code.find("if (blockIdx.x >= 0 && blockIdx.x < 2)"), std::string::npos);
  EXPECT_NE(source.code.find("if (blockIdx.x >= 2 && blockIdx.x < 3)"), std::string::npos);
  EXPECT_NE(source.code.find("const long long bx = blockIdx.x - 2;"), std::string::npos);
}

TEST(CudaLaunches, SharedLaunchesCompileForSm90) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  std::string all = cuda_prelude();
  int index = 0;
  for (const Expect& e : launch_cases())
    all += cuda_kernel_source(e.c.graph, fmt::format("k{}", index++),
                              e.c.config ? &*e.c.config : nullptr)
               .code;
  EXPECT_EQ(cubin_sm_arch(nvrtc_compile(all, "launches.cu", 9, 0).cubin), 90);
}

}  // namespace
}  // namespace orch::codegen
