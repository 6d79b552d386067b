// The rule registry walk: every rule, on random instances where its guard holds (its sampler),
// leaves the interpreter's outputs unchanged (fp32: atol 1e-5, rtol 1e-4; the attention and
// folding rules reassociate float sums and products, which stays within that). Adding a rule
// adds coverage with no new test code.
#include <gtest/gtest.h>

#include <set>

#include "ir/hash.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "rewrite/rule.h"
#include "rewrite_check.h"

namespace orch::rewrite {
namespace {

constexpr int kSamplesPerRule = 20;

class RuleTest : public ::testing::TestWithParam<const RewriteRule*> {};

TEST_P(RuleTest, KeepsResultsWhereTheGuardHolds) {
  const RewriteRule& rule = *GetParam();
  for (int seed = 0; seed < kSamplesPerRule; ++seed) {
    std::mt19937 rng(seed * 7919 + 3);
    Graph before = rule.sample(rng);
    ASSERT_NO_THROW(verify(before));
    MatchContext ctx(before);
    std::vector<NodeId> roots = matches(rule, ctx);
    SCOPED_TRACE(fmt::format("seed {}\n{}", seed, print_graph(before)));
    ASSERT_FALSE(roots.empty()) << "the guard declined the sample";
    for (NodeId root : roots) {
      std::optional<Graph> after = apply_rule(rule, before, ctx, root);
      ASSERT_TRUE(after.has_value()) << "the patch was refused at node " << root;
      SCOPED_TRACE(print_graph(*after));
      ASSERT_NO_THROW(verify(*after));
      EXPECT_NE(structural_hash(*after), structural_hash(before)) << "nothing changed";
      EXPECT_EQ(print_graph(parse_graph(print_graph(*after))), print_graph(*after));
      EXPECT_EQ(test::same_results(before, *after, seed), "");
    }
  }
}

std::vector<const RewriteRule*> rules() {
  std::vector<const RewriteRule*> result;
  for (const RewriteRule& rule : all_rules()) result.push_back(&rule);
  return result;
}

INSTANTIATE_TEST_SUITE_P(AllRules, RuleTest, ::testing::ValuesIn(rules()),
                         [](const auto& info) { return std::string(info.param->name); });

TEST(RuleRegistry, EveryRuleIsComplete) {
  std::set<std::string_view> names;
  const std::set<std::string_view> families = {"cleanup", "attention", "layout", "folding",
                                               "linear"};
  for (const RewriteRule& rule : all_rules()) {
    EXPECT_TRUE(names.insert(rule.name).second) << "duplicate " << rule.name;
    EXPECT_TRUE(families.contains(rule.family)) << rule.name;
    EXPECT_GT(rule.legality.size(), 20u) << rule.name;
    EXPECT_NE(rule.guard, nullptr) << rule.name;
    EXPECT_NE(rule.apply, nullptr) << rule.name;
    EXPECT_NE(rule.sample, nullptr) << rule.name;
    EXPECT_EQ(find_rule(rule.name), &rule);
  }
  EXPECT_EQ(find_rule("no_such_rule"), nullptr);
  for (std::string_view family : families)
    EXPECT_TRUE(std::any_of(all_rules().begin(), all_rules().end(), [&](const RewriteRule& r) {
      return r.family == family;
    })) << family;
}

}  // namespace
}  // namespace orch::rewrite
