// prim.MatMul, prim.Conv and prim.ConvTranspose: groups, depthwise, dilation, strides,
// asymmetric pads, 1-D to 3-D, constant and variable weights, fused epilogues.
#include <random>

#include "../common/conv_cases.h"
#include "cuda_util.h"
#include "ir/builder.h"

namespace orch::codegen {
namespace {

using conv_cases::conv_graph;
using conv_cases::ConvCase;

TEST(CudaLinear, ConvolutionsMatchTheInterpreter) {
  std::vector<CudaCase> cases;
  std::mt19937 rng(11);
  for (int trial = 0; trial < 6; ++trial)
    cases.push_back({fmt::format("conv {}", trial),
                     conv_graph(conv_cases::random_case(rng, 1 + trial % 3, false), false, trial),
                     static_cast<uint64_t>(trial)});
  std::mt19937 rng_t(12);
  for (int trial = 0; trial < 6; ++trial)
    cases.push_back({fmt::format("conv transpose {}", trial),
                     conv_graph(conv_cases::random_case(rng_t, 1 + trial % 2, true), true, trial),
                     static_cast<uint64_t>(trial)});
  cases.push_back({"depthwise",
                   conv_graph({.c = 16, .m = 16, .group = 16, .spatial = {9, 7}}, false, 1, true)});
  ConvCase dilated{.n = 2,
                   .c = 6,
                   .m = 10,
                   .group = 2,
                   .spatial = {13, 11},
                   .strides = {2, 2},
                   .dilations = {2, 1},
                   .pads = {2, 0, 1, 2},
                   .constant_weights = false};
  cases.push_back({"dilated stride 2", conv_graph(dilated, false, 2, true), 2});
  CudaCase tiled{"dilated stride 2 tiled", conv_graph(dilated, false, 3, true), 3};
  tiled.config = best_h200_config(tiled.graph);
  cases.push_back(std::move(tiled));
  for (const CudaCase& c : cases) EXPECT_EQ(cuda_reject(c.graph), "") << c.name;
  expect_all_match(cases, 1e-4);
}

TEST(CudaLinear, MatMulsMatchTheInterpreter) {
  std::vector<CudaCase> cases;
  cases.push_back(cuda_case("batched with epilogue",
                            R"(graph g(%a: f32[2,33,20], %b: f32[2,20,40], %c: f32[2,1,40]) {
  %m: f32[2,33,40] = prim.MatMul(%a, %b)
  %cb: f32[2,33,40] = prim.Broadcast(%c) {shape = [2, 33, 40]}
  %s: f32[2,33,40] = prim.Elementwise(%m, %cb) {fn = "add"}
  %y: f32[2,33,40] = prim.Elementwise(%s) {fn = "relu"}
  return %y
})"));
  cases.push_back(cuda_case("then row softmax", R"(graph g(%a: f32[48,32], %b: f32[32,64]) {
  %m: f32[48,64] = prim.MatMul(%a, %b)
  %x: f32[48,1] = prim.Reduce(%m) {axes = [1], kind = "max"}
  %xb: f32[48,64] = prim.Broadcast(%x) {shape = [48, 64]}
  %s: f32[48,64] = prim.Elementwise(%m, %xb) {fn = "sub"}
  %e: f32[48,64] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[48,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[48,64] = prim.Broadcast(%t) {shape = [48, 64]}
  %y: f32[48,64] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})",
                            2));
  cases.push_back(cuda_case("integer and f64",
                            R"(graph g(%a: i32[5,7], %b: i32[7,3], %c: f64[4,6], %d: f64[6,5]) {
  %m: i32[5,3] = prim.MatMul(%a, %b)
  %n: f64[4,5] = prim.MatMul(%c, %d)
  return %m, %n
})",
                            3));
  CudaCase tiled = cuda_case("then row softmax tiled", print_graph(cases[1].graph), 4);
  tiled.config = best_h200_config(tiled.graph);
  cases.push_back(std::move(tiled));
  expect_all_match(cases, 1e-4);
}

}  // namespace
}  // namespace orch::codegen
