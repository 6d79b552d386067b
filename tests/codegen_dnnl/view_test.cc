// Strided views through layout primitives (dnnl_plan.h).
#include <gtest/gtest.h>

#include "codegen/dnnl/dnnl_plan.h"
#include "ir/text_format.h"

namespace orch::codegen::dnnl_plan {
namespace {

using Ints = std::vector<int64_t>;

TEST(DnnlView, ReshapeSplitsAndMergesContiguousDims) {
  View v{0, {6, 4}, {4, 1}};
  ASSERT_TRUE(reshape_view(v, {2, 3, 4}));
  EXPECT_EQ(v.strides, (Ints{12, 4, 1}));
  ASSERT_TRUE(reshape_view(v, {24}));
  EXPECT_EQ(v.strides, (Ints{1}));
}

// A transposed [3,4] (strides [1,4]) splits dims but cannot merge them.
TEST(DnnlView, ReshapeOfATransposedView) {
  View v{0, {4, 3}, {1, 4}};
  ASSERT_TRUE(reshape_view(v, {2, 2, 3}));
  EXPECT_EQ(v.strides, (Ints{2, 1, 4}));
  View w{0, {4, 3}, {1, 4}};
  EXPECT_FALSE(reshape_view(w, {12}));
}

TEST(DnnlView, ReshapeKeepsBroadcastDims) {
  View v{0, {5, 3}, {0, 1}};
  ASSERT_TRUE(reshape_view(v, {5, 1, 3}));
  EXPECT_EQ(v.strides[0], 0);
  EXPECT_EQ(v.strides[2], 1);
}

TEST(DnnlView, ThroughLayoutPrimitives) {
  Graph g = parse_graph(R"(graph k(%a: f32[3,4]) {
  %t: f32[4,3] = prim.Transpose(%a) {perm = [1, 0]}
  %r: f32[2,2,1,3] = prim.Reshape(%t) {shape = [2, 2, 1, 3]}
  %b: f32[2,2,5,3] = prim.Broadcast(%r) {shape = [2, 2, 5, 3]}
  return %b
})");
  View v;
  std::vector<NodeId> covered;
  ASSERT_EQ(view_of(g, g.outputs()[0], v, covered), "");
  EXPECT_EQ(v.source, g.inputs()[0]);
  EXPECT_EQ(v.shape, (Ints{2, 2, 5, 3}));
  EXPECT_EQ(v.strides, (Ints{2, 1, 0, 4}));
  EXPECT_EQ(covered, (std::vector<NodeId>{0, 1, 2}));
}

}  // namespace
}  // namespace orch::codegen::dnnl_plan
