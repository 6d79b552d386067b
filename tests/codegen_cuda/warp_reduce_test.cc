// Reductions over the innermost dims run one warp per output element in phases without a tile
// config: lanes stride the reduction, shuffles combine them (emulated on the host as block
// barriers). Every kind and a few shapes against the interpreter; other reductions stay one
// thread per element.
#include "../common/fused_kernels.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"

namespace orch::codegen {
namespace {

std::string reduce_text(const std::string& kind, const std::string& type) {
  return fmt::format(R"(graph g(%x: {0}[5,40]) {{
  %r: {0}[5,1] = prim.Reduce(%x) {{axes = [1], kind = "{1}"}}
  return %r
}})",
                     type, kind);
}

std::vector<CudaCase> warp_cases() {
  std::vector<CudaCase> cases;
  for (const char* kind : {"sum", "prod", "max", "min"})
    cases.push_back(cuda_case(fmt::format("{} over 40", kind), reduce_text(kind, "f32")));
  cases.push_back(cuda_case("i64 sum over 40", reduce_text("sum", "i64")));
  cases.push_back(cuda_case("f64 max over 40", reduce_text("max", "f64")));
  // Two trailing axes (48 elements a row), and a mean: the sum inlined into its epilogue.
  cases.push_back(cuda_case("mean over the last two dims", R"(graph g(%x: f32[4,6,8]) {
  const %inv = f32[]{0.020833334}
  %s: f32[4,1,1] = prim.Reduce(%x) {axes = [1, 2], kind = "sum"}
  %m: f32[4,1,1] = prim.Elementwise(%s, %inv) {fn = "mul"}
  return %m
})"));
  // More rows than a block's 8 warps and a grid of several blocks.
  cases.push_back(cuda_case("sum of 100 rows", R"(graph g(%x: f32[100,64]) {
  %s: f32[100,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  return %s
})"));
  cases.push_back(cuda_case("softmax", fused_kernel_text("softmax")));
  cases.push_back(cuda_case("layernorm", fused_kernel_text("layernorm")));
  return cases;
}

TEST(CudaWarpReduce, WarpPhasesMatchTheInterpreter) {
  std::vector<CudaCase> cases = warp_cases();
  for (const CudaCase& c : cases)
    EXPECT_NE(cuda_kernel_source(c.graph, "k").code.find("orch_shfl_xor"), std::string::npos)
        << c.name;
  expect_all_match(cases, 1e-4);
}

TEST(CudaWarpReduce, ShortOrStridedReductionsStayOneThreadPerElement) {
  std::vector<CudaCase> cases = {cuda_case("sum over 16", R"(graph g(%x: f32[8,16]) {
  %s: f32[8,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  return %s
})"),
                                 cuda_case("sum over the outer dim", R"(graph g(%x: f32[64,8]) {
  %s: f32[1,8] = prim.Reduce(%x) {axes = [0], kind = "sum"}
  return %s
})")};
  for (const CudaCase& c : cases)
    EXPECT_EQ(cuda_kernel_source(c.graph, "k").code.find("orch_shfl_xor"), std::string::npos)
        << c.name;
  expect_all_match(cases, 1e-4);
}

TEST(CudaWarpReduce, WarpPhasesCompileForSm90) {
  if (!nvrtc_unavailable().empty()) GTEST_SKIP() << nvrtc_unavailable();
  std::string all = cuda_prelude();
  std::vector<CudaCase> cases = warp_cases();
  for (size_t i = 0; i < cases.size(); ++i)
    all += cuda_kernel_source(cases[i].graph, fmt::format("k{}", i)).code;
  EXPECT_EQ(cubin_sm_arch(nvrtc_compile(all, "warp.cu", 9, 0).cubin), 90);
}

}  // namespace
}  // namespace orch::codegen
