// The search: Korch's attention example (Fig. 2b), "never costlier than its input", the fuel
// counter, and whole zoo models whose results the rewrite must not change.
#include <gtest/gtest.h>

#include "fission/fission.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "rewrite/rewrite.h"
#include "rewrite/rule.h"
#include "rewrite/rule_util.h"
#include "rewrite_check.h"
#include "zoo/zoo.h"

namespace orch::rewrite {
namespace {

// softmax(Q·Kᵀ)·V for 2 heads of 64 tokens and head size 32.
constexpr std::string_view kAttention = R"(graph attention(%q: f32[1,2,64,32], %k: f32[1,2,64,32],
                                                        %v: f32[1,2,64,32]) {
  %kt: f32[1,2,32,64] = Transpose(%k) {perm = [0, 1, 3, 2]}
  %s: f32[1,2,64,64] = MatMul(%q, %kt)
  %p: f32[1,2,64,64] = Softmax(%s) {axis = -1}
  %o: f32[1,2,64,32] = MatMul(%p, %v)
  return %o
})";

const Node* producer(const Graph& g, ValueId v) {
  NodeId n = g.value(v).producer;
  return n == kNoNode ? nullptr : &g.node(n);
}

TEST(Search, AttentionRowSumBecomesAMergedMatMul) {
  Graph prims = fission::fission(parse_graph(kAttention));
  RewriteReport report;
  Graph result = rewrite(prims, {}, &report);
  SCOPED_TRACE(print_graph(result));
  ASSERT_NO_THROW(verify(result));
  EXPECT_EQ(test::same_results(prims, result, 1), "");
  EXPECT_LT(report.cost_after, report.cost_before);
  EXPECT_EQ(report.applied["reduce_sum_to_matmul"], 1);
  EXPECT_EQ(report.applied["scale_past_matmul"], 1);
  EXPECT_EQ(report.applied["merge_matmuls_shared_lhs"], 1);
  EXPECT_EQ(report.rejected, 0);
  for (const Node& n : result.nodes())
    EXPECT_FALSE(n.op == "prim.Reduce" && attr_string(n.attrs, "kind", "") == "sum");

  // o = Slice(y, values) / Broadcast(Slice(y, row sums)), y = MatMul(exp, Concat(V, ones)).
  const Node* div = producer(result, result.outputs()[0]);
  ASSERT_NE(div, nullptr);
  ASSERT_TRUE(is_ew(*div, "div"));
  const Node* values = producer(result, div->inputs[0]);
  const Node* bcast = producer(result, div->inputs[1]);
  ASSERT_TRUE(values != nullptr && values->op == "prim.Slice");
  ASSERT_TRUE(bcast != nullptr && bcast->op == "prim.Broadcast");
  const Node* sums = producer(result, bcast->inputs[0]);
  ASSERT_TRUE(sums != nullptr && sums->op == "prim.Slice");
  EXPECT_EQ(sums->inputs[0], values->inputs[0]);
  const Node* mm = producer(result, values->inputs[0]);
  ASSERT_TRUE(mm != nullptr && mm->op == "prim.MatMul");
  EXPECT_EQ((result.value(mm->outputs[0]).type.shape), (Shape{1, 2, 64, 33}));
  const Node* exp = producer(result, mm->inputs[0]);
  ASSERT_TRUE(exp != nullptr && is_ew(*exp, "exp"));
  const Node* cat = producer(result, mm->inputs[1]);
  ASSERT_TRUE(cat != nullptr && cat->op == "prim.Concat");
  ASSERT_EQ(cat->inputs.size(), 2u);
  EXPECT_EQ(result.value(cat->inputs[0]).name, "v");
  const Value& ones = result.value(cat->inputs[1]);
  ASSERT_TRUE(ones.is_constant());
  EXPECT_EQ(ones.type.shape, (Shape{1, 2, 64, 1}));
  EXPECT_TRUE(all_equal(ones.constant, 1.0));
}

TEST(Search, NeverCostlierAndResultsUnchangedOnEveryRuleSample) {
  for (const RewriteRule& rule : all_rules()) {
    for (int seed = 0; seed < 5; ++seed) {
      std::mt19937 rng(seed + 101);
      Graph before = rule.sample(rng);
      RewriteReport report;
      Graph after = rewrite(before, {.max_steps = 20}, &report);
      SCOPED_TRACE(fmt::format("{} seed {}\n{}\n->\n{}", rule.name, seed, print_graph(before),
                               print_graph(after)));
      ASSERT_NO_THROW(verify(after));
      EXPECT_LE(report.cost_after, report.cost_before);
      EXPECT_DOUBLE_EQ(report.cost_after, analytic_cost(after));
      EXPECT_DOUBLE_EQ(report.cost_before, analytic_cost(before));
      EXPECT_EQ(test::same_results(before, after, seed), "");
      EXPECT_EQ(report.rejected, 0);
    }
  }
}

TEST(Search, FuelBoundsTheApplications) {
  Graph prims = fission::fission(parse_graph(kAttention));
  RewriteReport none;
  Graph unchanged = rewrite(prims, {.fuel = 0}, &none);
  EXPECT_EQ(print_graph(unchanged), print_graph(prims));
  EXPECT_EQ(none.fuel_used, 0);
  EXPECT_TRUE(none.applied.empty());
  RewriteReport full;
  rewrite(prims, {}, &full);
  ASSERT_GT(full.fuel_used, 2);
  // Every prefix of the applications is a correct graph: what bisecting relies on.
  for (int64_t fuel = 1; fuel <= full.fuel_used; ++fuel) {
    RewriteReport report;
    Graph g = rewrite(prims, {.fuel = fuel}, &report);
    EXPECT_LE(report.fuel_used, fuel);
    EXPECT_LE(report.cost_after, report.cost_before);
    EXPECT_EQ(test::same_results(prims, g, 3), "") << "fuel " << fuel;
  }
}

TEST(Search, CleanupOnlyAppliesNoSearchRule) {
  Graph prims = fission::fission(parse_graph(kAttention));
  RewriteReport report;
  rewrite(prims, {.search = false}, &report);
  for (const auto& [name, count] : report.applied) EXPECT_TRUE(find_rule(name)->cleanup) << name;
  EXPECT_EQ(report.steps, 0);
}

TEST(Search, DisabledRulesDoNotApply) {
  Graph prims = fission::fission(parse_graph(kAttention));
  RewriteReport report;
  rewrite(prims, {.disabled = {"reduce_sum_to_matmul"}}, &report);
  EXPECT_EQ(report.applied.count("reduce_sum_to_matmul"), 0u);
  EXPECT_EQ(report.applied.count("merge_matmuls_shared_lhs"), 0u);
}

// YOLOX's Focus (four stride-2 slices of the image, concatenated, then a 3x3 convolution) becomes
// one 6x6 stride-2 convolution of the image. Built by hand: four distinct offsets match; with one
// repeated (a phase of the image missed), the rule declines.
TEST(Search, FocusBecomesAStridedConvolution) {
  Graph prims = fission::fission(zoo::build_model("yolox-nano", {.size = 32}));
  RewriteReport report;
  Graph result = rewrite(prims, {.search = false}, &report);  // a cleanup rule
  EXPECT_EQ(report.applied["strided_conv_of_space_to_depth"], 1);
  EXPECT_EQ(test::same_results(prims, result, 2, 1e-4, 1e-5), "");

  auto focus = [](std::vector<std::pair<int64_t, int64_t>> offsets) {
    Graph g;
    Builder b(g);
    ValueId x = b.input("x", {DType::f32, {1, 2, 4, 4}});
    std::vector<ValueId> parts;
    for (auto [dy, dx] : offsets)
      parts.push_back(b.op("prim.Slice", {x},
                           {{"starts", std::vector<int64_t>{0, 0, dy, dx}},
                            {"ends", std::vector<int64_t>{1, 2, 4, 4}},
                            {"steps", std::vector<int64_t>{1, 1, 2, 2}}}));
    ValueId cat = b.op("prim.Concat", parts, {{"axis", int64_t{1}}});
    ValueId w = b.constant(Tensor(DType::f32, {3, 8, 1, 1}));
    b.output(b.op("prim.Conv", {cat, w},
                  {{"strides", std::vector<int64_t>{1, 1}},
                   {"dilations", std::vector<int64_t>{1, 1}},
                   {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                   {"group", int64_t{1}}}));
    return matches(*find_rule("strided_conv_of_space_to_depth"), MatchContext(g)).size();
  };
  EXPECT_EQ(focus({{0, 0}, {1, 0}, {0, 1}, {1, 1}}), 1u);
  EXPECT_EQ(focus({{0, 0}, {1, 0}, {0, 1}, {0, 0}}), 0u);
}

// Small instances of every zoo model: fission, rewrite, same results (the folding and merging
// rules reassociate float products: rtol 1e-3).
class ZooTest : public ::testing::TestWithParam<zoo::ModelInfo> {};

TEST_P(ZooTest, RewriteKeepsResults) {
  const zoo::ModelInfo& info = GetParam();
  int64_t size = info.size_kind == "sequence" ? 8 : info.size_multiple == 4 ? 16 : 32;
  Graph model = zoo::build_model(info.name, {.size = size});
  Graph prims = fission::fission(model);
  RewriteReport report;
  Graph result = rewrite(prims, {.max_steps = 8, .max_seconds = 20}, &report);
  ASSERT_NO_THROW(verify(result));
  EXPECT_LE(report.cost_after, report.cost_before);
  EXPECT_EQ(report.rejected, 0);
  EXPECT_EQ(test::same_results(prims, result, 5, 1e-3, 1e-4), "");
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooTest, ::testing::ValuesIn(zoo::all_models()),
                         [](const auto& info) {
                           std::string name(info.param.name);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace orch::rewrite
