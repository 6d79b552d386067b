// Which kernels a vendor library computes (codegen::library_call_of): the kernel graph the
// stitcher lays out for a library call has every constant as an input.
#include <gtest/gtest.h>

#include "codegen/cuda/cuda_source.h"
#include "ir/text_format.h"

namespace orch::codegen {
namespace {

// A bias of two channels is under any weight threshold, a constant of the kernel graph: the
// library call's extraction reads it from memory all the same.
TEST(LibraryCall, ASmallConstantBiasIsReadFromMemory) {
  Graph g = parse_graph(R"(graph g(%x: f32[1,2,4,4], %w: f32[2,2,1,1]) {
  const %b = f32[1,2,1,1]{0.5, -1}
  %c: f32[1,2,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %e: f32[1,2,4,4] = prim.Broadcast(%b) {shape = [1, 2, 4, 4]}
  %y: f32[1,2,4,4] = prim.Elementwise(%c, %e) {fn = "add"}
  return %y
})");
  EXPECT_FALSE(conv_spec(g).has_value());
  std::vector<NodeId> all = {0, 1, 2};
  std::optional<LibraryCall> call = library_call_of(g, all, g.outputs(), {});
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->backend, "cudnn");
  ASSERT_TRUE(call->launch.conv.has_value());
  EXPECT_GE(call->launch.conv->bias, 0);
  EXPECT_FALSE(call->launch.conv->relu);
}

// The same for a GEMM: a weight of 512 bytes, under the stitcher's 1 KiB threshold.
TEST(LibraryCall, ASmallConstantOperandIsReadFromMemory) {
  Graph g = parse_graph(R"(graph g(%a: f32[4,2]) {
  const %b = f32[2,2]{1, 2, 3, 4}
  %c: f32[4,2] = prim.MatMul(%a, %b)
  return %c
})");
  std::vector<NodeId> all = {0};
  std::optional<LibraryCall> call = library_call_of(g, all, g.outputs(), {});
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->backend, "cublas");
  EXPECT_FALSE(library_call_of(g, all, g.outputs(), {.cublas = false, .cudnn = true}).has_value());
}

// No MatMul or convolution, no call: told before the kernel is extracted again.
TEST(LibraryCall, AKernelWithoutAMatMulOrAConvolutionHasNone) {
  Graph g = parse_graph(R"(graph g(%a: f32[4,2]) {
  %r: f32[4,2] = prim.Elementwise(%a) {fn = "relu"}
  return %r
})");
  std::vector<NodeId> all = {0};
  EXPECT_FALSE(library_call_of(g, all, g.outputs(), {}).has_value());
}

}  // namespace
}  // namespace orch::codegen
