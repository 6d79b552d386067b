#include <gtest/gtest.h>

#include "codegen/kernel.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch::codegen {
namespace {

constexpr std::string_view kChain = R"(graph g(%x: f32[4], %y: f32[4]) {
  const %c = f32[4]{1, 2, 3, 4}
  %a: f32[4] = Add(%x, %c)
  %b: f32[4] = Mul(%a, %y)
  %r: f32[4] = Relu(%b)
  %e: f32[4] = Exp(%r)
  return %e, %a
})";

TEST(ExtractKernel, InputsConstantsAndOutputs) {
  Graph g = parse_graph(kChain);
  // Nodes 1 and 2 (Mul, Relu): reads %a and %y from outside, writes %r.
  Graph k = extract_kernel(g, std::vector<NodeId>{2, 1}, std::vector<ValueId>{g.find_value("r")});
  verify(k);
  EXPECT_EQ(print_graph(k), R"(graph kernel(%a: f32[4], %y: f32[4]) {
  %b: f32[4] = Mul(%a, %y)
  %r: f32[4] = Relu(%b)
  return %r
}
)");
}

TEST(ExtractKernel, ComputesWhatTheWholeGraphComputes) {
  Graph g = parse_graph(kChain);
  Graph k = extract_kernel(g, std::vector<NodeId>{0, 1, 2, 3},
                           std::vector<ValueId>{g.find_value("e"), g.find_value("a")});
  EXPECT_EQ(k.inputs().size(), 2u);
  auto inputs = interp::random_inputs(g, 3);
  auto whole = interp::interpret(g, inputs);
  auto part = interp::interpret(k, inputs);
  ASSERT_EQ(part.size(), 2u);
  EXPECT_TRUE(part[0].identical(whole[0]));
  EXPECT_TRUE(part[1].identical(whole[1]));
}

TEST(ExtractKernel, OutputMustBeComputedInside) {
  Graph g = parse_graph(kChain);
  try {
    extract_kernel(g, std::vector<NodeId>{1}, std::vector<ValueId>{g.find_value("a")});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "kernel output 'a' is not computed inside it");
  }
}

}  // namespace
}  // namespace orch::codegen
