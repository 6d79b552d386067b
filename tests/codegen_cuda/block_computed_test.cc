// Reductions the root phase's block computes into shared memory (Welder's block-level fusion):
// softmax and layer-norm statistics, and a softmax feeding a MatMul whose reduce steps stage
// the probabilities after the statistics are known. Emulated on the host against the
// interpreter, compiled for sm_90.
#include <fmt/ranges.h>

#include "../common/fused_kernels.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"

namespace orch::codegen {
namespace {

constexpr const char* kLayerNorm = R"(graph g(%x: f32[6,48]) {
  const %inv = f32[]{0.020833333}
  const %eps = f32[]{0.00001}
  %s: f32[6,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  %m: f32[6,1] = prim.Elementwise(%s, %inv) {fn = "mul"}
  %mb: f32[6,48] = prim.Broadcast(%m) {shape = [6, 48]}
  %d: f32[6,48] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %d2: f32[6,48] = prim.Elementwise(%d, %d) {fn = "mul"}
  %v: f32[6,1] = prim.Reduce(%d2) {axes = [1], kind = "sum"}
  %vm: f32[6,1] = prim.Elementwise(%v, %inv) {fn = "mul"}
  %ve: f32[6,1] = prim.Elementwise(%vm, %eps) {fn = "add"}
  %sd: f32[6,1] = prim.Elementwise(%ve) {fn = "sqrt"}
  %r: f32[6,1] = prim.Elementwise(%sd) {fn = "reciprocal"}
  %rb: f32[6,48] = prim.Broadcast(%r) {shape = [6, 48]}
  %y: f32[6,48] = prim.Elementwise(%d, %rb) {fn = "mul"}
  return %y
})";

// Attention's second half: P = softmax(S) rows, then P x V.
constexpr const char* kSoftmaxMatMul = R"(graph g(%s: f32[16,40], %v: f32[40,24]) {
  %m: f32[16,1] = prim.Reduce(%s) {axes = [1], kind = "max"}
  %mb: f32[16,40] = prim.Broadcast(%m) {shape = [16, 40]}
  %d: f32[16,40] = prim.Elementwise(%s, %mb) {fn = "sub"}
  %e: f32[16,40] = prim.Elementwise(%d) {fn = "exp"}
  %t: f32[16,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[16,40] = prim.Broadcast(%t) {shape = [16, 40]}
  %p: f32[16,40] = prim.Elementwise(%e, %tb) {fn = "div"}
  %y: f32[16,24] = prim.MatMul(%p, %v)
  return %y
})";

CudaCase tiled(std::string name, std::string_view text, schedule::GpuTileConfig config) {
  CudaCase c = cuda_case(std::move(name), text, 7);
  c.config = std::move(config);
  return c;
}

struct Expect {
  CudaCase c;
  size_t launches;  // under the config
};

std::vector<Expect> computed_cases() {
  return {
      // A block of 2 rows x 64 of 100 columns: both rows' statistics over all 100 columns,
      // 32 lanes per row.
      {tiled("softmax, partial rows", fused_kernel_text("softmax"), {{2, 64}, {1, 2}, 0}), 1},
      // 64 rows per block, 64 threads: one thread per row, no shuffles.
      {tiled("softmax, one thread per row", fused_kernel_text("softmax"), {{64, 64}, {8, 8}, 0}),
       1},
      // A row per block of 64 threads, and two rows per block of 128: a group of two warps per
      // row, their partials added through shared memory.
      {tiled("softmax, two warps per row", fused_kernel_text("softmax"), {{1, 64}, {1, 1}, 0}), 1},
      {tiled("softmax, two rows of two warps", fused_kernel_text("softmax"), {{2, 64}, {1, 1}, 0}),
       1},
      {tiled("layer norm", kLayerNorm, {{2, 48}, {1, 3}, 0}), 1},
      {tiled("layer norm, edge block", kLayerNorm, {{4, 16}, {1, 2}, 0}), 1},
      // A reduce step where the root has no reduction of its own to step: whole regions.
      {tiled("layer norm, a step to ignore", kLayerNorm, {{2, 16}, {1, 1}, 8}), 1},
      // The mean is also a kernel output: its sum stays a phase of its own (so does the output),
      // the variance is computed per block.
      {tiled("layer norm with a second output", fused_kernel_text("layernorm"),
             {{1, 2, 48}, {1, 1, 3}, 0}),
       3},
      {tiled("softmax then matmul", kSoftmaxMatMul, {{8, 8}, {1, 2}, 0}), 1},
      {tiled("softmax then matmul, steps of 16", kSoftmaxMatMul, {{8, 8}, {1, 2}, 16}), 1}};
}

TEST(CudaBlockComputed, StatisticsAreComputedPerBlockAndMatchTheInterpreter) {
  std::vector<Expect> expects = computed_cases();
  std::vector<CudaCase> cases;
  for (const Expect& e : expects) {
    CudaKernelSource source = cuda_kernel_source(e.c.graph, "k", &*e.c.config);
    EXPECT_EQ(source.launches.size(), e.launches) << e.c.name;
    EXPECT_NE(source.code.find("if (live && lane == 0)"), std::string::npos) << e.c.name;
    cases.push_back(e.c);
  }
  expect_all_match(cases, 1e-4);
}

TEST(CudaBlockComputed, LanesShareARowWhereThreadsOutnumberRows) {
  Graph g = parse_graph(fused_kernel_text("softmax"));
  schedule::GpuTileConfig partial{{2, 64}, {1, 2}, 0}, whole{{64, 64}, {8, 8}, 0};
  // 64 threads over 2 rows: 32 lanes each, combined by five shuffles.
  std::string code = cuda_kernel_source(g, "k", &partial).code;
  EXPECT_NE(code.find("for (int m = 16; m > 0; m /= 2)"), std::string::npos);
  EXPECT_NE(code.find("rr += 32"), std::string::npos);
  // 64 threads over one row: two warps, their partials added in shared memory.
  schedule::GpuTileConfig row{{1, 64}, {1, 1}, 0};
  code = cuda_kernel_source(g, "k", &row).code;
  EXPECT_NE(code.find("rr += 64"), std::string::npos);
  EXPECT_NE(code.find("for (int wp = 1; wp < 2; ++wp)"), std::string::npos);
  // 64 threads over 64 rows: a row each.
  code = cuda_kernel_source(g, "k", &whole).code;
  EXPECT_EQ(code.find("orch_shfl_xor"), std::string::npos);
  EXPECT_NE(code.find("rr += 1"), std::string::npos);
}

// With reduce steps the probabilities are staged per step, after the statistics they read.
TEST(CudaBlockComputed, StagedValuesReadingComputedOnesComeAfterThem) {
  Graph g = parse_graph(kSoftmaxMatMul);
  schedule::GpuTileConfig config{{8, 8}, {1, 2}, 16};
  std::string code = cuda_kernel_source(g, "k", &config).code;
  size_t sum = code.find("ORCH_SHARED(float, sh6, ");
  size_t steps = code.find("for (long long ks0");
  ASSERT_NE(sum, std::string::npos);
  ASSERT_NE(steps, std::string::npos);
  EXPECT_LT(sum, steps);
  EXPECT_NE(code.find("ORCH_SHARED(float, sh8, ", steps), std::string::npos)
      << "the probabilities are not staged per step";
}

TEST(CudaBlockComputed, TheShapeCountsOneLaunchAndNoScratch) {
  CudaKernelShape softmax = cuda_kernel_shape(parse_graph(fused_kernel_text("softmax")));
  EXPECT_EQ(softmax.launches, 1);
  EXPECT_EQ(softmax.scratch_bytes, 0);
  CudaKernelShape norm = cuda_kernel_shape(parse_graph(fused_kernel_text("layernorm")));
  EXPECT_EQ(norm.launches, 3);
  // Without a config every statistic keeps its phase.
  EXPECT_EQ(cuda_kernel_source(parse_graph(kLayerNorm), "k").launches.size(), 3u);
}

TEST(CudaBlockComputed, ComputedKernelsCompileForSm90) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  std::string all = cuda_prelude();
  int index = 0;
  for (const Expect& e : computed_cases())
    all += cuda_kernel_source(e.c.graph, fmt::format("k{}", index++), &*e.c.config).code;
  EXPECT_EQ(cubin_sm_arch(nvrtc_compile(all, "computed.cu", 9, 0).cubin), 90);
}

}  // namespace
}  // namespace orch::codegen
