// Reductions over the innermost dims run one warp per output element in phases without a tile
// config: lanes stride the reduction, shuffles combine them (emulated on the host as block
// barriers). Every kind and a few shapes against the interpreter; other reductions stay one
// thread per element.
#include "../common/fused_kernels.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "cuda_util.h"

#include <tuple>

namespace orch::codegen {
namespace {

std::string reduce_text(const std::string& kind, const std::string& type) {
  return fmt::format(R"(graph g(%x: {0}[5,40]) {{
  %r: {0}[5,1] = prim.Reduce(%x) {{axes = [1], kind = "{1}"}}
  return %r
}})",
                     type, kind);
}

// The mean of x over `axes`: the sum inlined into its epilogue, a product with 1 / count.
std::string mean_text(const std::string& in, const std::string& out, const std::string& axes,
                      double inverse) {
  return fmt::format(R"(graph g(%x: f32[{0}]) {{
  const %inv = f32[]{{{3}}}
  %s: f32[{1}] = prim.Reduce(%x) {{axes = [{2}], kind = "sum"}}
  %m: f32[{1}] = prim.Elementwise(%s, %inv) {{fn = "mul"}}
  return %m
}})",
                     in, out, axes, inverse);
}

std::vector<CudaCase> warp_cases() {
  std::vector<CudaCase> cases;
  for (const char* kind : {"sum", "prod", "max", "min"})
    cases.push_back(cuda_case(fmt::format("{} over 40", kind), reduce_text(kind, "f32")));
  cases.push_back(cuda_case("i64 sum over 40", reduce_text("sum", "i64")));
  cases.push_back(cuda_case("f64 max over 40", reduce_text("max", "f64")));
  // Two trailing axes (48 elements a row), and a mean: the sum inlined into its epilogue.
  cases.push_back(
      cuda_case("mean over the last two dims", mean_text("4,6,8", "4,1,1", "1, 2", 0.020833334)));
  // More rows than a block's 8 warps and a grid of several blocks.
  cases.push_back(cuda_case("sum of 100 rows", R"(graph g(%x: f32[100,64]) {
  %s: f32[100,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  return %s
})"));
  // Few long sums: groups of 128 lanes (two per block) and of the whole block, combined
  // through shared memory; the mean's epilogue as an instance norm's statistics have it.
  cases.push_back(cuda_case("mean of 8 maps of 64x64",
                            mean_text("1,8,64,64", "1,8,1,1", "2, 3", 0.00024414062)));
  cases.push_back(cuda_case("max of 4 rows of 8192", R"(graph g(%x: f32[4,8192]) {
  %s: f32[4,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  return %s
})"));
  // A classifier head's global average pool, flattened: the lanes reduce the total's element
  // at the output's flat index.
  cases.push_back(cuda_case("pooled and flattened", R"(graph g(%x: f32[1,48,8,8]) {
  const %inv = f32[]{0.015625}
  %s: f32[1,48,1,1] = prim.Reduce(%x) {axes = [2, 3], kind = "sum"}
  %m: f32[1,48,1,1] = prim.Elementwise(%s, %inv) {fn = "mul"}
  %y: f32[1,48] = prim.Reshape(%m) {shape = [1, 48]}
  return %y
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

// Lanes per element double from a warp while the grid has fewer than 128 blocks and each lane
// keeps 32 terms: 8 sums of 4096 take 128 lanes each (2 per block of 256: 4 blocks), 4 of 8192
// the whole block (4 blocks), each block with 8 bytes of partials per warp; 100 sums of 64 stay
// one warp each (13 blocks of 8), without shared memory.
TEST(CudaWarpReduce, FewLongSumsSpreadOverWiderGroups) {
  std::vector<CudaCase> cases = warp_cases();
  auto launch = [&](std::string_view name) {
    for (const CudaCase& c : cases)
      if (c.name == name) return cuda_kernel_source(c.graph, "k").launches.at(0);
    ADD_FAILURE() << "no case " << name;
    return CudaLaunch{};
  };
  CudaLaunch maps = launch("mean of 8 maps of 64x64"), rows = launch("max of 4 rows of 8192"),
             short_rows = launch("sum of 100 rows");
  EXPECT_EQ(std::tuple(maps.blocks, maps.threads, maps.shared_bytes), std::tuple(4, 256, 64));
  EXPECT_EQ(std::tuple(rows.blocks, rows.threads, rows.shared_bytes), std::tuple(4, 256, 64));
  EXPECT_EQ(std::tuple(short_rows.blocks, short_rows.threads, short_rows.shared_bytes),
            std::tuple(13, 256, 0));
}

// A row reduction beside a tiled root shares its launch and its 96 threads (a block tile of a
// full extent of 3 rows): groups of lanes must divide the block, so they stay one warp each.
TEST(CudaWarpReduce, GroupsDivideALaunchOfNinetySixThreads) {
  CudaCase c =
      cuda_case("sums beside a 96-thread root", R"(graph g(%a: f32[3,32], %x: f32[2,4096]) {
  %r: f32[3,32] = prim.Elementwise(%a) {fn = "relu"}
  %s: f32[2,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  return %r, %s
})");
  ASSERT_EQ(schedule::make_tile_graph(c.graph).root, c.graph.outputs()[0]);
  c.config = schedule::GpuTileConfig{{3, 32}, {1, 1}, 0};
  std::vector<CudaLaunch> launches = cuda_kernel_source(c.graph, "k", &*c.config).launches;
  ASSERT_EQ(launches.size(), 1u);
  // The root's one block tile, then one block of three warps for the two sums, without
  // partials. (Groups of 64 lanes would leave a partial group of 32 summing half of a row that
  // another block also writes.)
  EXPECT_EQ(std::tuple(launches[0].threads, launches[0].blocks, launches[0].shared_bytes),
            std::tuple(96, 2, 0));
  expect_all_match({c}, 1e-4);
}

// A kernel whose root is such a reduction gets no tile config from the stitcher: a config
// accumulates each element in one thread (an instance norm's 32 sums: one thread or 32).
TEST(CudaWarpReduce, AReductionRootRunsAsAWarpPhase) {
  auto warp_root = [](std::string_view text) {
    Graph g = parse_graph(text);
    return cuda_warp_root(g, schedule::make_tile_graph(g));
  };
  EXPECT_TRUE(warp_root(R"(graph g(%x: f32[1,32,56,56]) {
  const %eps = f32[]{0.00001}
  %s: f32[1,32,1,1] = prim.Reduce(%x) {axes = [2, 3], kind = "sum"}
  %v: f32[1,32,1,1] = prim.Elementwise(%s, %eps) {fn = "add"}
  %r: f32[1,32,1,1] = prim.Elementwise(%v) {fn = "sqrt"}
  return %r
})"));
  EXPECT_FALSE(warp_root(R"(graph g(%x: f32[64,8]) {
  %s: f32[1,8] = prim.Reduce(%x) {axes = [0], kind = "sum"}
  return %s
})"));
  EXPECT_FALSE(warp_root(fused_kernel_text("softmax")));
  // Transposed, the total's elements are not the output's in order.
  EXPECT_FALSE(warp_root(R"(graph g(%x: f32[6,6,40]) {
  %s: f32[6,6,1] = prim.Reduce(%x) {axes = [2], kind = "sum"}
  %t: f32[6,6,1] = prim.Transpose(%s) {perm = [1, 0, 2]}
  return %t
})"));
  EXPECT_FALSE(warp_root(fused_kernel_text("matmul_bias_gelu")));
}

TEST(CudaWarpReduce, ShortOrStridedReductionsStayOneThreadPerElement) {
  std::vector<CudaCase> cases = {cuda_case("sums transposed", R"(graph g(%x: f32[6,6,40]) {
  %s: f32[6,6,1] = prim.Reduce(%x) {axes = [2], kind = "sum"}
  %t: f32[6,6,1] = prim.Transpose(%s) {perm = [1, 0, 2]}
  return %t
})"),
                                 cuda_case("sum over 16", R"(graph g(%x: f32[8,16]) {
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
