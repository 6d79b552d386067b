// The shapes of some rules' outputs, written out by hand: which primitives, in which order.
#include <gtest/gtest.h>

#include "fission/fission.h"
#include "ir/text_format.h"

namespace orch::fission {
namespace {

// "exp", "reduce_sum", "prim.MatMul", ...: one entry per node of the fissioned graph.
std::vector<std::string> ops_of(std::string_view text) {
  Graph g = fission(parse_graph(text));
  std::vector<std::string> ops;
  for (const Node& n : g.nodes())
    ops.push_back(n.op == "prim.Elementwise" ? attr_string(n.attrs, "fn", "")
                  : n.op == "prim.Reduce"    ? "reduce_" + attr_string(n.attrs, "kind", "")
                                             : n.op.substr(5));
  return ops;
}

using Ops = std::vector<std::string>;

TEST(FissionStructure, GemmIsTransposeMatMulScaleAndBiasAdd) {
  EXPECT_EQ(ops_of(R"(graph g(%a: f32[4,3], %b: f32[5,4], %c: f32[5]) {
  %y: f32[3,5] = Gemm(%a, %b, %c) {transA = 1, transB = 1, alpha = 2.0}
  return %y
})"),
            (Ops{"Transpose", "Transpose", "MatMul", "mul", "Reshape", "Broadcast", "add"}));
}

TEST(FissionStructure, ConvBiasIsABroadcastAdd) {
  EXPECT_EQ(ops_of(R"(graph g(%x: f32[1,2,5,5], %w: f32[3,2,3,3], %b: f32[3]) {
  %y: f32[1,3,5,5] = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]}
  return %y
})"),
            (Ops{"Conv", "Reshape", "Broadcast", "add"}));
}

TEST(FissionStructure, BatchNormFoldsConstantsIntoScaleAndShift) {
  EXPECT_EQ(ops_of(R"(graph g(%x: f32[1,2,3,3]) {
  const %s = f32[2]{1, 2}
  const %b = f32[2]{0, 1}
  const %m = f32[2]{0.5, 0.5}
  const %v = f32[2]{1, 4}
  %y: f32[1,2,3,3] = BatchNormalization(%x, %s, %b, %m, %v)
  return %y
})"),
            (Ops{"Reshape", "Broadcast", "mul", "Reshape", "Broadcast", "add"}));
}

TEST(FissionStructure, ReduceMeanIsSumTimesReciprocalCount) {
  EXPECT_EQ(ops_of(R"(graph g(%x: f32[2,6]) {
  %y: f32[2] = ReduceMean(%x) {axes = [1], keepdims = 0}
  return %y
})"),
            (Ops{"reduce_sum", "mul", "Reshape"}));
}

TEST(FissionStructure, SplitIsOneSlicePerOutput) {
  Graph g = fission(parse_graph(R"(graph g(%x: f32[2,6]) {
  const %sizes = i64[2]{2, 4}
  %a: f32[2,2], %b: f32[2,4] = Split(%x, %sizes) {axis = -1}
  return %a, %b
})"));
  ASSERT_EQ(g.num_nodes(), 2u);
  for (const Node& n : g.nodes()) {
    EXPECT_EQ(n.op, "prim.Slice");
    EXPECT_EQ(n.outputs.size(), 1u);
  }
  EXPECT_EQ(attr_ints(g.node(1).attrs, "starts"), (std::vector<int64_t>{0, 2}));
}

TEST(FissionStructure, LayerNormStatisticsOutputsComeFromTheSameChain) {
  Graph g = fission(parse_graph(R"(graph g(%x: f32[2,4], %s: f32[4]) {
  %y: f32[2,4], %mean: f32[2,1], %inv: f32[2,1] = LayerNormalization(%x, %s) {axis = 1}
  return %y, %mean, %inv
})"));
  EXPECT_EQ(g.value(g.outputs()[1]).name, "mean");
  EXPECT_EQ(g.node(g.value(g.outputs()[1]).producer).op, "prim.Elementwise");  // sum * 1/n
  EXPECT_EQ(attr_string(g.node(g.value(g.outputs()[2]).producer).attrs, "fn", ""), "reciprocal");
}

TEST(FissionStructure, MultipleConsumersShareOnePrimitiveGraph) {
  Graph g = fission(parse_graph(R"(graph g(%x: f32[2,3]) {
  %e: f32[2,3] = Exp(%x)
  %a: f32[2,3] = Add(%e, %e)
  %m: f32[2,3] = Mul(%e, %a)
  return %m, %e
})"));
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(g.value(g.outputs()[1]).name, "e");
}

// Each primitive knows its operator: Softmax's seven primitives, then the Relu, then the
// identity that names the graph output `y` (an Identity of the input: no operator computes it).
TEST(FissionStructure, OriginNamesEachPrimitivesOperator) {
  FissionReport report;
  Graph g = fission(parse_graph(R"(graph g(%x: f32[2,5]) {
  %s: f32[2,5] = Softmax(%x) {axis = 1}
  %r: f32[2,5] = Relu(%s)
  %y: f32[2,5] = Identity(%x)
  return %r, %y
})"),
                    {}, &report);
  ASSERT_EQ(report.origin.size(), g.num_nodes());
  EXPECT_EQ(report.origin, (std::vector<NodeId>{0, 0, 0, 0, 0, 0, 0, 1, kNoNode}));
}

}  // namespace
}  // namespace orch::fission
