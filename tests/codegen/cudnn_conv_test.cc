#include "codegen/cudnn_conv.h"

#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/text_format.h"

namespace orch::codegen {
namespace {

// Each form the stitcher hands cuDNN: padded, strided with pads cuDNN cannot express but whose
// output shape it reproduces, depthwise and dilated, grouped 1x1, 3-D; then the fused call's:
// a bias as fission writes it (reshaped, broadcast, added) with its ReLU, a bias already of
// the channel shape added first, and a 3-D one with its ReLU.
const char* kConvolutions[] = {
    R"(graph g(%x: f32[2,4,9,9], %w: f32[8,4,3,3]) {
  %y: f32[2,8,9,9] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  return %y
})",
    R"(graph g(%x: f32[1,3,8,8], %w: f32[4,3,3,3]) {
  %y: f32[1,4,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 0, 0], strides = [2, 2]}
  return %y
})",
    R"(graph g(%x: f32[1,6,7,7], %w: f32[6,1,3,3]) {
  %y: f32[1,6,7,7] = prim.Conv(%x, %w) {dilations = [2, 2], group = 6, pads = [2, 2, 2, 2], strides = [1, 1]}
  return %y
})",
    R"(graph g(%w: f32[6,2,1,1], %x: f32[1,4,5,5]) {
  %y: f32[1,6,5,5] = prim.Conv(%x, %w) {dilations = [1, 1], group = 2, pads = [0, 0, 0, 0], strides = [1, 1]}
  return %y
})",
    R"(graph g(%x: f32[1,2,4,5,5], %w: f32[3,2,2,3,3]) {
  %y: f32[1,3,3,5,5] = prim.Conv(%x, %w) {dilations = [1, 1, 1], group = 1, pads = [0, 1, 1, 0, 1, 1], strides = [1, 1, 1]}
  return %y
})",
    R"(graph g(%x: f32[2,4,6,6], %w: f32[8,4,3,3], %b: f32[8]) {
  %c: f32[2,8,6,6] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  %r: f32[1,8,1,1] = prim.Reshape(%b) {shape = [1, 8, 1, 1]}
  %e: f32[2,8,6,6] = prim.Broadcast(%r) {shape = [2, 8, 6, 6]}
  %s: f32[2,8,6,6] = prim.Elementwise(%c, %e) {fn = "add"}
  %y: f32[2,8,6,6] = prim.Elementwise(%s) {fn = "relu"}
  return %y
})",
    R"(graph g(%b: f32[1,6,1,1], %x: f32[1,6,7,7], %w: f32[6,1,3,3]) {
  %e: f32[1,6,7,7] = prim.Broadcast(%b) {shape = [1, 6, 7, 7]}
  %c: f32[1,6,7,7] = prim.Conv(%x, %w) {dilations = [1, 1], group = 6, pads = [1, 1, 1, 1], strides = [1, 1]}
  %y: f32[1,6,7,7] = prim.Elementwise(%e, %c) {fn = "add"}
  return %y
})",
    R"(graph g(%x: f32[1,2,4,5,5], %w: f32[3,2,2,3,3], %b: f32[1,3,1,1,1]) {
  %c: f32[1,3,3,3,3] = prim.Conv(%x, %w) {dilations = [1, 1, 1], group = 1, pads = [0, 0, 0, 0, 0, 0], strides = [1, 1, 1]}
  %e: f32[1,3,3,3,3] = prim.Broadcast(%b) {shape = [1, 3, 3, 3, 3]}
  %s: f32[1,3,3,3,3] = prim.Elementwise(%c, %e) {fn = "add"}
  %y: f32[1,3,3,3,3] = prim.Elementwise(%s) {fn = "relu"}
  return %y
})",
};

TEST(CudnnConv, CudnnArgumentsComputeWhatTheInterpreterComputes) {
  for (const char* text : kConvolutions) {
    Graph kernel = parse_graph(text);
    std::optional<ConvSpec> spec = conv_spec(kernel);
    ASSERT_TRUE(spec.has_value()) << text;
    std::vector<Tensor> inputs = interp::random_inputs(kernel, 11);
    Tensor want = interp::interpret(kernel, inputs)[0];
    Tensor got(DType::f32, want.shape());
    CudnnConvArgs args =
        cudnn_arguments(*spec, inputs[spec->x].shape(), inputs[spec->w].shape(), want.shape());
    cross_correlation(args, inputs[spec->x].data<float>(), inputs[spec->w].data<float>(),
                      got.mutable_data<float>(),
                      spec->bias < 0 ? nullptr : inputs[spec->bias].data<float>());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_TRUE(close_enough(got.get(i), want.get(i), 1e-5, 1e-5))
          << text << "\nelement " << i << ": " << got.get(i) << " vs " << want.get(i);
  }
}

TEST(CudnnConv, OtherKernelsAreNotConvolutions) {
  const char* kOthers[] = {
      // Trailing pads cuDNN's symmetric padding cannot reproduce: another output shape.
      R"(graph g(%x: f32[1,3,8,8], %w: f32[4,3,3,3]) {
  %y: f32[1,4,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 1, 1], strides = [2, 2]}
  return %y
})",
      // One spatial dim.
      R"(graph g(%x: f32[1,3,8], %w: f32[4,3,3]) {
  %y: f32[1,4,6] = prim.Conv(%x, %w) {dilations = [1], group = 1, pads = [0, 0], strides = [1]}
  return %y
})",
      // An epilogue: generated code fuses it.
      R"(graph g(%x: f32[1,3,8,8], %w: f32[4,3,3,3]) {
  %y: f32[1,4,6,6] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %r: f32[1,4,6,6] = Relu(%y)
  return %r
})",
      // A constant filter: cuDNN reads device memory.
      R"(graph g(%x: f32[1,1,2,2]) {
  const %w = f32[1,1,1,1]{2}
  %y: f32[1,1,2,2] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  return %y
})",
  };
  for (const char* text : kOthers) EXPECT_FALSE(conv_spec(parse_graph(text)).has_value()) << text;
}

TEST(CudnnConv, EpiloguesCudnnCannotFuseAreNotConvolutions) {
  const char* kOthers[] = {
      // A residual: the added tensor varies over the whole output.
      R"(graph g(%x: f32[1,2,4,4], %w: f32[2,2,1,1], %z: f32[1,2,4,4]) {
  %c: f32[1,2,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %y: f32[1,2,4,4] = prim.Elementwise(%c, %z) {fn = "add"}
  return %y
})",
      // As many values as channels, along the last dim.
      R"(graph g(%x: f32[1,2,4,4], %w: f32[4,2,1,1], %b: f32[1,1,1,4]) {
  %c: f32[1,4,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %e: f32[1,4,4,4] = prim.Broadcast(%b) {shape = [1, 4, 4, 4]}
  %y: f32[1,4,4,4] = prim.Elementwise(%c, %e) {fn = "add"}
  return %y
})",
      // A ReLU without a bias, and a bias followed by another activation.
      R"(graph g(%x: f32[1,2,4,4], %w: f32[2,2,1,1]) {
  %c: f32[1,2,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %y: f32[1,2,4,4] = prim.Elementwise(%c) {fn = "relu"}
  return %y
})",
      R"(graph g(%x: f32[1,2,4,4], %w: f32[2,2,1,1], %b: f32[1,2,1,1]) {
  %c: f32[1,2,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %e: f32[1,2,4,4] = prim.Broadcast(%b) {shape = [1, 2, 4, 4]}
  %s: f32[1,2,4,4] = prim.Elementwise(%c, %e) {fn = "add"}
  %y: f32[1,2,4,4] = prim.Elementwise(%s) {fn = "sigmoid"}
  return %y
})",
      // The convolution's own values are written too.
      R"(graph g(%x: f32[1,2,4,4], %w: f32[2,2,1,1], %b: f32[1,2,1,1]) {
  %c: f32[1,2,4,4] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  %e: f32[1,2,4,4] = prim.Broadcast(%b) {shape = [1, 2, 4, 4]}
  %y: f32[1,2,4,4] = prim.Elementwise(%c, %e) {fn = "add"}
  return %c, %y
})",
  };
  for (const char* text : kOthers) EXPECT_FALSE(conv_spec(parse_graph(text)).has_value()) << text;
}

TEST(CudnnConv, MismatchNamesTheProblem) {
  ConvSpec s{{1, 1}, {1, 1}, {1, 1}, 1, 0, 1};
  std::vector<TensorType> in = {{DType::f32, {2, 4, 9, 9}}, {DType::f32, {8, 4, 3, 3}}};
  std::vector<TensorType> out = {{DType::f32, {2, 8, 9, 9}}};
  EXPECT_EQ(conv_mismatch(s, in, out), "");
  s.pads = {0, 1};
  EXPECT_EQ(conv_mismatch(s, in, out), "output dim 2 is 9, cuDNN's padding of 0 gives 7");
  s.pads = {1, 1};
  s.group = 3;
  EXPECT_EQ(conv_mismatch(s, in, out),
            "X [2,4,9,9], W [8,4,3,3] and Y [2,8,9,9] are not a convolution of 3 groups");
  s.group = 1;
  s.strides = {1, 1, 1};
  EXPECT_NE(conv_mismatch(s, in, out).find("are not 2 or 3 spatial dims"), std::string::npos);
  s.strides = {1, 2147483647};
  s.pads = {1, 2147483647};
  EXPECT_NE(conv_mismatch(s, in, out).find("output dim 3 is 9"), std::string::npos);
  s = {{1, 1}, {1, 1}, {1, 1}, 1, 0, 1, 2, true};
  in.push_back({DType::f32, {8}});
  EXPECT_EQ(conv_mismatch(s, in, out), "");
  in[2] = {DType::f32, {4}};
  EXPECT_EQ(conv_mismatch(s, in, out),
            "bias f32[4] is not one f32 per output channel of W [8,4,3,3]");
  s.bias = -1;
  EXPECT_EQ(conv_mismatch(s, in, out), "a ReLU without a bias (cuDNN's fused call takes one)");
}

}  // namespace
}  // namespace orch::codegen
