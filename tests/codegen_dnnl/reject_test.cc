// What the oneDNN backend refuses, and the reason it gives.
#include "dnnl_test_util.h"
#include "ir/error.h"

namespace orch::codegen::dnnl_test {
namespace {

std::string reason(std::string_view text) {
  return dnnl_backend().reject(parse_graph(text));
}

TEST(DnnlReject, MatMulsDoNotChain) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,4], %b: f32[4,4]) {
  %x: f32[4,4] = prim.MatMul(%a, %b)
  %y: f32[4,4] = prim.MatMul(%x, %b)
  return %y
})"),
            "2 Linear primitives with a MatMul: only convolutions chain (a MatMul's activations "
            "have no blocked layout to keep between stages)");
}

TEST(DnnlReject, NoLinearPrimitive) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4]) {
  %y: f32[4] = prim.Elementwise(%a) {fn = "relu"}
  return %y
})"),
            "no Linear primitive (prim.MatMul, prim.Conv, prim.ConvTranspose)");
}

TEST(DnnlReject, OnlyF32) {
  EXPECT_EQ(reason(R"(graph k(%a: f16[4,4], %b: f16[4,4]) {
  %y: f16[4,4] = prim.MatMul(%a, %b)
  return %y
})"),
            "value 'a' has dtype f16: the oneDNN backend is f32 only");
}

TEST(DnnlReject, EmptyTensors) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[0,4], %b: f32[4,4]) {
  %y: f32[0,4] = prim.MatMul(%a, %b)
  return %y
})"),
            "value 'a' is empty ([0,4])");
}

TEST(DnnlReject, EpilogueWithoutPostOp) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,4], %b: f32[4,4]) {
  %x: f32[4,4] = prim.MatMul(%a, %b)
  %y: f32[4,4] = prim.Elementwise(%x) {fn = "sin"} @e
  return %y
})"),
            "epilogue fn 'sin' (prim.Elementwise 'e') has no oneDNN post-op");
}

// A where that is not LeakyReLU's (the threshold is not 0).
TEST(DnnlReject, WhereThatIsNotLeakyRelu) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,4], %b: f32[4,4]) {
  const %t = f32[]{0.5}
  const %s = f32[]{0.1}
  %x: f32[4,4] = prim.MatMul(%a, %b)
  %c: bool[4,4] = prim.Elementwise(%x, %t) {fn = "less"}
  %m: f32[4,4] = prim.Elementwise(%x, %s) {fn = "mul"}
  %y: f32[4,4] = prim.Elementwise(%c, %m, %x) {fn = "where"} @w
  return %y
})"),
            "epilogue fn 'where' (prim.Elementwise 'w') has no oneDNN post-op");
}

// A binary post-op reads a kernel input (through layouts), not a computed tensor.
TEST(DnnlReject, BinaryOperandComputed) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,4], %b: f32[4,4], %c: f32[4,4]) {
  %x: f32[4,4] = prim.MatMul(%a, %b)
  %e: f32[4,4] = prim.Elementwise(%c) {fn = "exp"}
  %y: f32[4,4] = prim.Elementwise(%x, %e) {fn = "add"} @add
  return %y
})"),
            "epilogue fn 'add' (prim.Elementwise 'add') has no oneDNN post-op");
}

TEST(DnnlReject, LayoutAfterTheLinearPrimitive) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,3], %b: f32[3,5]) {
  %x: f32[4,5] = prim.MatMul(%a, %b)
  %y: f32[5,4] = prim.Transpose(%x) {perm = [1, 0]} @t
  return %y
})"),
            "prim.Transpose 't' after the Linear primitive has no oneDNN post-op (only operand "
            "layouts are absorbed)");
}

TEST(DnnlReject, OperandNotALayout) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,3], %b: f32[3,5]) {
  %e: f32[4,3] = prim.Elementwise(%a) {fn = "exp"} @e
  %x: f32[4,5] = prim.MatMul(%e, %b)
  return %x
})"),
            "prim.Elementwise 'e' is not a layout oneDNN can absorb as strides");
}

// [3,4] transposed has strides [1,4]: merging its dims into one is not a strided view.
TEST(DnnlReject, ReshapeThatIsNotStrided) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[3,4], %b: f32[6,5]) {
  %t: f32[4,3] = prim.Transpose(%a) {perm = [1, 0]}
  %r: f32[2,6] = prim.Reshape(%t) {shape = [2, 6]} @r
  %x: f32[2,5] = prim.MatMul(%r, %b)
  return %x
})"),
            "prim.Reshape 'r' from [4,3] to [2,6] does not keep strides affine");
}

TEST(DnnlReject, BroadcastConvolutionOperand) {
  EXPECT_EQ(reason(R"(graph k(%x: f32[1,2,5,5], %w: f32[1,2,3,3]) {
  %v: f32[4,2,3,3] = prim.Broadcast(%w) {shape = [4, 2, 3, 3]}
  %y: f32[1,4,3,3] = prim.Conv(%x, %v) {dilations = [1, 1], group = 1, pads = [0, 0, 0, 0], strides = [1, 1]}
  return %y
})"),
            "broadcast operand of prim.Conv");
}

TEST(DnnlReject, TwoOutputs) {
  EXPECT_EQ(reason(R"(graph k(%a: f32[4,4], %b: f32[4,4]) {
  %x: f32[4,4] = prim.MatMul(%a, %b)
  %y: f32[4,4] = prim.Elementwise(%x) {fn = "relu"}
  return %x, %y
})"),
            "kernel has 2 outputs; a oneDNN primitive writes one");
}

TEST(DnnlReject, CompileOfARefusedKernelThrowsTheReason) {
  Graph g = parse_graph(R"(graph k(%a: f32[4]) {
  %y: f32[4] = prim.Elementwise(%a) {fn = "relu"}
  return %y
})");
  try {
    dnnl_backend().compile(g);
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_STREQ(
        e.what(),
        "oneDNN backend: no Linear primitive (prim.MatMul, prim.Conv, prim.ConvTranspose)");
  }
}

TEST(DnnlReject, RunChecksInputShapes) {
  Graph g = parse_graph(R"(graph k(%a: f32[2,3], %b: f32[3,2]) {
  %x: f32[2,2] = prim.MatMul(%a, %b)
  return %x
})");
  std::unique_ptr<Kernel> kernel = dnnl_backend().compile(g);
  std::vector<Tensor> inputs = {Tensor(DType::f32, {3, 2}), Tensor(DType::f32, {3, 2})};
  Tensor out(DType::f32, {2, 2});
  try {
    kernel->run(inputs, std::span<Tensor>(&out, 1));
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 0 must be f32[2,3], got f32[3,2]");
  }
}

}  // namespace
}  // namespace orch::codegen::dnnl_test
