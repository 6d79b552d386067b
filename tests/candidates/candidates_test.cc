// Structural counts on small hand-made graphs, rejection reasons, the state-cap report, the
// DAG of an IR graph.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "candidates/candidates.h"
#include "dag_util.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch {
namespace {

using testing::make_dag;
using testing::mask_of;

SubgraphCandidates enumerate_whole(const Dag& dag, Feasibility feasible = {}) {
  return enumerate_candidates(sub_dag(dag, 0, dag.size),
                              {.max_states = 1000, .feasible = std::move(feasible)});
}

std::set<uint32_t> members(const SubgraphCandidates& result) {
  std::set<uint32_t> out;
  for (const KernelCandidate& k : result.kept) out.insert(mask_of(k.members));
  return out;
}

TEST(Candidates, ChainOfThreeHasFourStatesAndSixCandidates) {
  SubgraphCandidates result = enumerate_whole(make_dag(3, {{0, 1}, {1, 2}}));
  EXPECT_EQ(result.states, 4);
  EXPECT_EQ(result.kept.size(), 6u);
  EXPECT_EQ(members(result), (std::set<uint32_t>{0b001, 0b010, 0b100, 0b011, 0b110, 0b111}));
}

TEST(Candidates, DiamondHasSixStatesAndTwelveCandidates) {
  // 0 -> {1, 2} -> 3: {0,3}, {0,1,3}, {0,2,3} are not convex.
  SubgraphCandidates result = enumerate_whole(make_dag(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
  EXPECT_EQ(result.states, 6);
  EXPECT_EQ(result.kept.size(), 12u);
  std::set<uint32_t> found = members(result);
  EXPECT_FALSE(found.contains(0b1001));
  EXPECT_TRUE(found.contains(0b0110));  // the two branches side by side
}

TEST(Candidates, MultiOutputKernelsWriteEveryValueReadOutside) {
  SubgraphCandidates result = enumerate_whole(make_dag(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
  std::map<uint32_t, uint32_t> outputs;
  for (const KernelCandidate& k : result.kept) outputs[mask_of(k.members)] = mask_of(k.outputs);
  EXPECT_EQ(outputs.at(0b0011), 0b0011u);  // 0 feeds 2, 1 feeds 3
  EXPECT_EQ(outputs.at(0b0111), 0b0110u);
  EXPECT_EQ(outputs.at(0b1111), 0b1000u);  // the graph output
}

// The backend check sees global vertex numbers (subgraph [2, 5) of a chain of five) and its
// reasons are counted like the shape rules' ones.
TEST(Candidates, GenerableCheckSeesGlobalVerticesAndCountsReasons) {
  Dag dag = make_dag(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  std::set<std::vector<int>> asked;
  EnumerationOptions options{.max_states = 100};
  options.generable = [&](const std::vector<int>& members, const std::vector<int>& outputs) {
    asked.insert(members);
    EXPECT_EQ(outputs, std::vector<int>{members.back()});
    return members.size() == 3 ? std::string("all three") : std::string();
  };
  SubgraphCandidates result = enumerate_candidates(sub_dag(dag, 2, 5), options);
  EXPECT_EQ(asked, (std::set<std::vector<int>>{{2}, {3}, {4}, {2, 3}, {3, 4}, {2, 3, 4}}));
  EXPECT_EQ(result.kept.size(), 5u);
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"all three", 1}}));
}

TEST(Candidates, OpaqueVertexOnlyAlone) {
  Dag dag = make_dag(3, {{0, 1}, {1, 2}},
                     {Category::Elementwise, Category::Opaque, Category::Elementwise});
  SubgraphCandidates result = enumerate_whole(dag, feasibility_of({}));
  EXPECT_EQ(members(result), (std::set<uint32_t>{0b001, 0b010, 0b100}));
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"Opaque with others", 3}}));

  // Partitioned, the Opaque vertex is a subgraph of its own.
  KernelIdentification kernels =
      identify_kernels(dag, {.enumeration = {.feasible = feasibility_of({})}});
  ASSERT_EQ(kernels.subgraphs.size(), 3u);
  EXPECT_EQ(kernels.subgraphs[1].begin, 1);
  EXPECT_EQ(kernels.subgraphs[1].end, 2);
  for (const SubgraphCandidates& sub : kernels.candidates) {
    EXPECT_EQ(sub.kept.size(), 1u);
    EXPECT_EQ(sub.rejected_total(), 0);
  }
}

TEST(Candidates, UnfissionedOperatorOnlyAloneUnlessAllowed) {
  Dag dag = make_dag(3, {{0, 1}, {1, 2}},
                     {Category::Elementwise, Category::Operator, Category::Elementwise});
  SubgraphCandidates result = enumerate_whole(dag, feasibility_of({}));
  EXPECT_EQ(result.kept.size(), 3u);
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"operator with others", 3}}));
  EXPECT_EQ(enumerate_whole(dag, feasibility_of({.operator_alone = false})).kept.size(), 6u);
}

TEST(Candidates, AtMostOneLinearPerKernel) {
  // MatMul -> Add -> MatMul: only the whole chain holds two Linear primitives.
  Dag dag =
      make_dag(3, {{0, 1}, {1, 2}}, {Category::Linear, Category::Elementwise, Category::Linear});
  SubgraphCandidates result = enumerate_whole(dag, feasibility_of({}));
  EXPECT_EQ(result.kept.size(), 5u);
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"more than 1 Linear", 1}}));
  EXPECT_EQ(enumerate_whole(dag, feasibility_of({.max_linear = 2})).kept.size(), 6u);
}

TEST(Candidates, SizeCapRejectsWithReason) {
  SubgraphCandidates result =
      enumerate_whole(make_dag(4, {{0, 1}, {1, 2}, {2, 3}}), feasibility_of({.max_primitives = 2}));
  EXPECT_EQ(result.kept.size(), 7u);  // 4 singletons, 3 pairs
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"more than 2 primitives", 3}}));
}

TEST(Candidates, KernelWhoseValuesNobodyReadsIsRejected) {
  Dag dag = make_dag(2, {{0, 1}});
  dag.is_graph_output = {true, false};  // vertex 1 is dead
  SubgraphCandidates result = enumerate_whole(dag);
  EXPECT_EQ(members(result), (std::set<uint32_t>{0b01, 0b11}));
  EXPECT_EQ(result.rejected, (std::map<std::string, int64_t>{{"writes nothing read", 1}}));
}

TEST(Candidates, StateCapReportsTheSubgraph) {
  Dag wide = make_dag(20, {});  // 2^20 states
  SubgraphCandidates result =
      enumerate_candidates(sub_dag(wide, 0, wide.size), {.max_states = 100});
  EXPECT_TRUE(result.state_cap_hit);
  EXPECT_EQ(result.states, 100);
  EXPECT_EQ(result.note,
            "state cap reached in subgraph of vertices [0, 20) (20 vertices): more than 100 "
            "execution states; its candidates are incomplete (cut it or raise the cap)");

  // Partitioning keeps every subgraph under the cap.
  KernelIdentification kernels = identify_kernels(wide, {.enumeration = {.max_states = 100}});
  EXPECT_EQ(kernels.subgraphs.size(), 4u);  // 6 + 6 + 6 + 2 independent vertices
  for (const SubgraphCandidates& sub : kernels.candidates) EXPECT_FALSE(sub.state_cap_hit);
}

TEST(Candidates, SubgraphTooLargeForBitsetsIsAnError) {
  Dag chain = make_dag(200, {});
  try {
    sub_dag(chain, 0, 200);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "subgraph [0, 200) has 200 vertices; enumeration handles at most 128: cut it");
  }
}

TEST(Dag, OfGraphHasOneVertexPerNodeAndCategoriesFromTheRegistry) {
  Graph graph = parse_graph(R"(graph g(%x: f32[2,4]) {
  const %k = i64[1]{2}
  %a: f32[2,4] = Relu(%x)
  %b: f32[2,4] = Add(%a, %x)
  %v: f32[2,2], %i: i64[2,2] = TopK(%b, %k)
  %c: f32[2,2] = Neg(%v)
  return %c, %a
})");
  Dag dag = dag_of(graph);
  ASSERT_EQ(dag.size, 4);
  EXPECT_EQ(dag.preds, (std::vector<std::vector<int>>{{}, {0}, {1}, {2}}));
  EXPECT_EQ(dag.is_graph_output, (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(dag.category[2], Category::Opaque);
  EXPECT_EQ(dag.label[2], graph.describe(2));
  EXPECT_EQ(dag.constant_only, (std::vector<bool>{false, false, false, false}));
}

TEST(Dag, ConstantOnlyVerticesAreAnchoredBeforeTheirConsumer) {
  // %w's Reshape and Broadcast (1, 2) need only constants: anchored after the Relu (0) that the
  // Add (3) also reads, they no longer float to the start of the order.
  Graph graph = parse_graph(R"(graph g(%x: f32[2,4]) {
  const %w = f32[4]{1, 2, 3, 4}
  const %shape = i64[2]{1, 4}
  %a: f32[2,4] = Relu(%x)
  %r: f32[1,4] = Reshape(%w, %shape)
  %n: f32[1,4] = Neg(%r)
  %b: f32[2,4] = Add(%a, %n)
  return %b
})");
  Dag dag = dag_of(graph);
  EXPECT_EQ(dag.constant_only, (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(anchored_preds(dag), (std::vector<std::vector<int>>{{}, {0}, {0, 1}, {0, 2}}));
  // Unanchored, {1} and {1, 2} could also run first: 7 states; anchored, a chain's 5.
  SubgraphCandidates result = enumerate_whole(dag);
  EXPECT_EQ(result.states, 5);
  EXPECT_EQ(result.kept.size(), 10u);
  std::map<uint32_t, uint32_t> outputs;
  for (const KernelCandidate& k : result.kept) outputs[mask_of(k.members)] = mask_of(k.outputs);
  EXPECT_EQ(outputs.at(0b0011), 0b0011u);  // the Relu feeds the Add, the Reshape the Neg
  EXPECT_FALSE(outputs.contains(0b0101));  // not convex once anchored: 0 -> 1 -> 2
}

TEST(Dag, SiblingViewsOfOneConsumerRunInVertexOrder) {
  // A pooling window's stack: three strided Slices of the Pad (1-3) read by the Concat (4) alone
  // are anchored one after the other; the Slice (5) the Add also reads is not their sibling.
  Graph graph = parse_graph(R"(graph g(%x: f32[1,1,6]) {
  %p: f32[1,1,8] = prim.Pad(%x) {pads = [0, 0, 1, 0, 0, 1], value = -inf}
  %s0: f32[1,1,6] = prim.Slice(%p) {ends = [1, 1, 6], starts = [0, 0, 0], steps = [1, 1, 1]}
  %s1: f32[1,1,6] = prim.Slice(%p) {ends = [1, 1, 7], starts = [0, 0, 1], steps = [1, 1, 1]}
  %s2: f32[1,1,6] = prim.Slice(%p) {ends = [1, 1, 8], starts = [0, 0, 2], steps = [1, 1, 1]}
  %c: f32[3,1,6] = prim.Concat(%s0, %s1, %s2) {axis = 0}
  %s3: f32[1,1,6] = prim.Slice(%p) {ends = [1, 1, 8], starts = [0, 0, 2], steps = [1, 1, 1]}
  %a: f32[1,1,6] = prim.Elementwise(%s3, %x) {fn = "add"}
  return %c, %a
})");
  Dag dag = dag_of(graph);
  EXPECT_EQ(anchored_preds(dag),
            (std::vector<std::vector<int>>{{}, {0}, {0, 1}, {0, 2}, {1, 2, 3}, {0}, {5}}));
  // After the Pad, the window had 9 states (any subset of the Slices, or all and the Concat)
  // and has 5 (a prefix of the chain), times 3 for Slice 5 and the Add: 16 states, not 28.
  SubgraphCandidates result = enumerate_whole(dag);
  EXPECT_FALSE(result.state_cap_hit);
  EXPECT_EQ(result.states, 16);
  std::set<uint32_t> kept = members(result);
  EXPECT_TRUE(kept.contains(0b0011111));   // the window: Pad, its Slices and the Concat
  EXPECT_FALSE(kept.contains(0b0001010));  // Slices 1 and 3 without 2: not convex once chained
}

TEST(Dag, CheckNamesABackwardEdge) {
  Dag dag = make_dag(2, {});
  dag.preds[0] = {1};
  try {
    check_dag(dag);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "DAG vertex 0 has predecessor 1: not an earlier vertex");
  }
}

}  // namespace
}  // namespace orch
