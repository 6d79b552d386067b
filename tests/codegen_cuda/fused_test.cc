// Fused kernels (softmax rows, layer norm, MatMul + bias + activation, Conv + bias + ReLU), with
// the H200's best tile config for the root output and without one.
#include "../common/fused_kernels.h"
#include "cuda_util.h"

namespace orch::codegen {
namespace {

TEST(CudaFused, MatchTheInterpreterWithAndWithoutTileConfigs) {
  std::vector<CudaCase> cases;
  for (const FusedKernel& k : fused_kernels()) {
    cases.push_back(cuda_case(k.name, k.text, 7));
    CudaCase tiled = cuda_case(k.name + " tiled", k.text, 8);
    tiled.config = best_h200_config(tiled.graph);
    cases.push_back(std::move(tiled));
  }
  expect_all_match(cases, 1e-4);
}

// Thread tiles larger than one element, block tiles that do not divide the output (edge
// guards), and a tile over a rank-3 output.
TEST(CudaFused, HandPickedTileConfigs) {
  std::vector<CudaCase> cases;
  const std::vector<FusedKernel> kernels = fused_kernels();
  auto add = [&](size_t k, schedule::GpuTileConfig config) {
    CudaCase c =
        cuda_case(fmt::format("{} {}x{}", kernels[k].name, config.block[0], config.thread[0]),
                  kernels[k].text, 9);
    c.config = std::move(config);
    cases.push_back(std::move(c));
  };
  add(0, {{8, 64}, {2, 4}, 0});        // softmax [64,100]: 13 x 8 blocks, the last column partial
  add(1, {{2, 4, 48}, {1, 2, 8}, 0});  // layer norm [3,10,48]
  add(2, {{16, 32}, {4, 4}, 0});       // matmul bias gelu [66,40]: 5 x 2 blocks, 4x4 per thread
  expect_all_match(cases, 1e-4);
}

}  // namespace
}  // namespace orch::codegen
