#include "codegen/cublas_gemm.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/text_format.h"

namespace orch::codegen {
namespace {

struct Case {
  std::string text;
  GemmSpec spec;
};

// Each form the stitcher hands cuBLAS: plain, batched, either operand transposed, both, the
// operands in the other input order.
const Case kCases[] = {
    {R"(graph g(%a: f32[3,5], %b: f32[5,4]) {
  %c: f32[3,4] = prim.MatMul(%a, %b)
  return %c
})",
     {1, 3, 4, 5, false, false, 0, 1}},
    {R"(graph g(%a: f32[2,3,3,5], %b: f32[2,3,5,7]) {
  %c: f32[2,3,3,7] = prim.MatMul(%a, %b)
  return %c
})",
     {6, 3, 7, 5, false, false, 0, 1}},
    {R"(graph g(%a: f32[2,5,3], %b: f32[2,5,4]) {
  %t: f32[2,3,5] = prim.Transpose(%a) {perm = [0, 2, 1]}
  %c: f32[2,3,4] = prim.MatMul(%t, %b)
  return %c
})",
     {2, 3, 4, 5, true, false, 0, 1}},
    {R"(graph g(%a: f32[2,3,5], %b: f32[2,4,5]) {
  %t: f32[2,5,4] = prim.Transpose(%b) {perm = [0, 2, 1]}
  %c: f32[2,3,4] = prim.MatMul(%a, %t)
  return %c
})",
     {2, 3, 4, 5, false, true, 0, 1}},
    {R"(graph g(%b: f32[4,5], %a: f32[5,3]) {
  %ta: f32[3,5] = prim.Transpose(%a) {perm = [1, 0]}
  %tb: f32[5,4] = prim.Transpose(%b) {perm = [1, 0]}
  %c: f32[3,4] = prim.MatMul(%ta, %tb)
  return %c
})",
     {1, 3, 4, 5, true, true, 1, 0}},
};

TEST(CublasGemm, CublasArgumentsComputeWhatTheInterpreterComputes) {
  for (const Case& c : kCases) {
    Graph kernel = parse_graph(c.text);
    std::optional<GemmSpec> spec = gemm_spec(kernel);
    ASSERT_TRUE(spec.has_value()) << c.text;
    EXPECT_EQ(*spec, c.spec) << c.text;
    std::vector<Tensor> inputs = interp::random_inputs(kernel, 7);
    Tensor want = interp::interpret(kernel, inputs)[0];
    Tensor got(DType::f32, want.shape());
    CublasGemmArgs g = cublas_arguments(*spec);
    const float* operands[] = {inputs[spec->a].data<float>(), inputs[spec->b].data<float>()};
    sgemm_strided_batched(g, operands[g.first], operands[g.second], got.mutable_data<float>());
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_TRUE(close_enough(got.get(i), want.get(i), 1e-5, 1e-5))
          << c.text << "\nelement " << i << ": " << got.get(i) << " vs " << want.get(i);
  }
}

TEST(CublasGemm, OtherKernelsAreNotGemms) {
  const char* kOthers[] = {
      // An epilogue: generated code fuses it.
      R"(graph g(%a: f32[3,5], %b: f32[5,4]) {
  %c: f32[3,4] = prim.MatMul(%a, %b)
  %r: f32[3,4] = Relu(%c)
  return %r
})",
      // A transpose another output also reads.
      R"(graph g(%a: f32[5,3], %b: f32[5,4]) {
  %t: f32[3,5] = prim.Transpose(%a) {perm = [1, 0]}
  %c: f32[3,4] = prim.MatMul(%t, %b)
  return %c, %t
})",
      // A transpose of batch dims.
      R"(graph g(%a: f32[3,2,5], %b: f32[2,5,4]) {
  %t: f32[2,3,5] = prim.Transpose(%a) {perm = [1, 0, 2]}
  %c: f32[2,3,4] = prim.MatMul(%t, %b)
  return %c
})",
      // A constant operand: cuBLAS reads device memory, not code.
      R"(graph g(%a: f32[1,2]) {
  const %w = f32[2,2]{1, 2, 3, 4}
  %c: f32[1,2] = prim.MatMul(%a, %w)
  return %c
})",
      // Not f32.
      R"(graph g(%a: f64[3,5], %b: f64[5,4]) {
  %c: f64[3,4] = prim.MatMul(%a, %b)
  return %c
})",
      // Nothing to multiply.
      R"(graph g(%a: f32[3,0], %b: f32[0,4]) {
  %c: f32[3,4] = prim.MatMul(%a, %b)
  return %c
})",
  };
  for (const char* text : kOthers) EXPECT_FALSE(gemm_spec(parse_graph(text)).has_value()) << text;
}

TEST(CublasGemm, MismatchNamesTheOperand) {
  GemmSpec s{2, 3, 4, 5, false, false, 0, 1};
  std::vector<TensorType> in = {{DType::f32, {2, 3, 5}}, {DType::f32, {2, 5, 4}}};
  std::vector<TensorType> out = {{DType::f32, {2, 3, 4}}};
  EXPECT_EQ(gemm_mismatch(s, in, out), "");
  in[1] = {DType::f32, {2, 5, 3}};
  EXPECT_EQ(gemm_mismatch(s, in, out), "B is f32[2,5,3], the GEMM reads 2 x 5 x 4 f32");
  s.b = 2;
  EXPECT_EQ(gemm_mismatch(s, in, out), "operands 0 and 2 of 2 inputs");
  s = {2, 3, 4, 5, false, false, 0, 1};
  out[0].dtype = DType::f64;
  in[1] = {DType::f32, {2, 5, 4}};
  EXPECT_EQ(gemm_mismatch(s, in, out), "C is f64[2,3,4], the GEMM reads 2 x 3 x 4 f32");
}

}  // namespace
}  // namespace orch::codegen
