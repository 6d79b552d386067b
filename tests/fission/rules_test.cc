// The rule registry walk: for every rule, random instances of its op (the rule's sampler), the
// operator graph and its primitive graph interpreted on the same random inputs must agree
// (fp32: atol 1e-5, rtol 1e-4). Adding a rule adds coverage with no new test code.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "fission/fission.h"
#include "fission_check.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/ops/prim.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch::fission {
namespace {

class RuleTest : public ::testing::TestWithParam<const FissionRule*> {};

TEST_P(RuleTest, PrimitiveGraphMatchesOperator) {
  const FissionRule& rule = *GetParam();
  int applied = 0;
  for (int seed = 0; seed < test::kSamplesPerRule; ++seed) {
    std::mt19937 rng(seed * 7919 + 17);
    Graph op_graph = rule.sample(rule.op, rng);
    FissionReport report;
    Graph prim_graph = fission(op_graph, {}, &report);
    SCOPED_TRACE(
        fmt::format("seed {}\n{}\n->\n{}", seed, print_graph(op_graph), print_graph(prim_graph)));
    if (!report.kept.empty()) continue;  // the guard declined this instance
    ++applied;
    ASSERT_NO_THROW(verify(prim_graph));
    EXPECT_EQ(print_graph(parse_graph(print_graph(prim_graph))), print_graph(prim_graph));
    for (const Node& n : prim_graph.nodes()) {
      EXPECT_TRUE(prim::is_primitive(n.op)) << n.op;
      EXPECT_EQ(n.outputs.size(), 1u) << n.op;
    }
    std::vector<Tensor> inputs = interp::random_inputs(op_graph, seed);
    std::vector<Tensor> want = interp::interpret(op_graph, inputs);
    std::vector<Tensor> got = interp::interpret(prim_graph, inputs);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(test::compare(got[i], want[i], 1e-4, 1e-5), "") << "output " << i;
    ASSERT_EQ(prim_graph.outputs().size(), op_graph.outputs().size());
    for (size_t i = 0; i < op_graph.outputs().size(); ++i)
      EXPECT_EQ(prim_graph.value(prim_graph.outputs()[i]).name,
                op_graph.value(op_graph.outputs()[i]).name);
  }
  EXPECT_GT(applied, 0) << "the guard declined every sample of " << rule.op;
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleTest, ::testing::ValuesIn(test::sampled_rules()),
                         [](const auto& info) { return test::rule_name(*info.param, info.index); });

TEST(Fission, EveryPrimitiveHasAnIndexMapAndKernelCategory) {
  for (const OpSchema& s : all_ops()) {
    if (!prim::is_primitive(s.name)) continue;
    EXPECT_NE(s.index_map, nullptr) << s.name;
    EXPECT_NE(s.category, Category::Operator) << s.name;
  }
}

TEST(Fission, SoftmaxKeepsTheMaxSubtraction) {
  Graph g = parse_graph(R"(graph main(%x: f32[2,5]) {
  %y: f32[2,5] = Softmax(%x) {axis = 1}
  return %y
})");
  Graph p = fission(g);
  std::vector<std::string> ops;
  for (const Node& n : p.nodes())
    ops.push_back(n.op == "prim.Elementwise" ? attr_string(n.attrs, "fn", "")
                  : n.op == "prim.Reduce"    ? "reduce_" + attr_string(n.attrs, "kind", "")
                                             : n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"reduce_max", "prim.Broadcast", "sub", "exp",
                                           "reduce_sum", "prim.Broadcast", "div"}));
}

// A MaxPool window of 150 taps along one dim: three stacks of 64, 64 and 22 taps, their maxima
// combined by two elementwise maxes; 600 taps is over the limit and stays whole.
TEST(Fission, WideMaxPoolIsPooledInChunks) {
  Graph g = parse_graph(R"(graph main(%x: f32[1,2,3,400]) {
  %y: f32[1,2,2,35] = MaxPool(%x) {kernel_shape = [2, 150], strides = [1, 3], dilations = [1, 2], pads = [0, 1, 0, 1]}
  return %y
})");
  FissionReport report;
  Graph p = fission(g, {}, &report);
  EXPECT_TRUE(report.kept.empty());
  int stacks = 0, maxes = 0;
  for (const Node& n : p.nodes()) {
    stacks += n.op == "prim.Reduce";
    maxes += n.op == "prim.Elementwise" && attr_string(n.attrs, "fn", "") == "max";
  }
  EXPECT_EQ(stacks, 4);  // one along the first dim, three along the second
  EXPECT_EQ(maxes, 2);
  std::vector<Tensor> inputs = interp::random_inputs(g, 3);
  EXPECT_EQ(test::compare(interp::interpret(p, inputs)[0], interp::interpret(g, inputs)[0], 0, 0),
            "");

  Graph too_wide = parse_graph(R"(graph main(%x: f32[1,1,1,700]) {
  %y: f32[1,1,1,101] = MaxPool(%x) {kernel_shape = [1, 600]}
  return %y
})");
  FissionReport kept;
  fission(too_wide, {}, &kept);
  EXPECT_EQ(kept.kept.size(), 1u);
}

TEST(Fission, OpaqueAndUnmatchedOpsAreKeptWhole) {
  Graph g = parse_graph(R"(graph main(%x: f32[2,5]) {
  const %k = i64[1]{2}
  %v: f32[2,2], %i: i64[2,2] = TopK(%x, %k) {axis = 1}
  return %v, %i
})");
  FissionReport report;
  Graph p = fission(g, {}, &report);
  ASSERT_EQ(p.num_nodes(), 1u);
  EXPECT_EQ(p.node(0).op, "TopK");
  ASSERT_EQ(report.kept.size(), 1u);
  EXPECT_NE(report.kept[0].find("Opaque"), std::string::npos) << report.kept[0];
}

TEST(Fission, StrictModeRejectsOpsWithoutRules) {
  Graph g = parse_graph(R"(graph main(%x: f32[2,5], %i: i64[2,1]) {
  %y: f32[2,5] = GatherND(%x, %i)
  return %y
})");
  try {
    fission(g, {.keep_unmatched = false});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GatherND #0: multi-axis data-dependent gather"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orch::fission
