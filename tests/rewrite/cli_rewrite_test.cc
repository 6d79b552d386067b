// `orch rewrite` as a user runs it.
#include <gtest/gtest.h>

#include "../common/orch_cli.h"
#include "ir/text_format.h"

namespace orch {
namespace {

using cli_test::orch_cli;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class RewriteCli : public cli_test::CliTest {};

TEST_F(RewriteCli, ReportsRulesAndCostAndWritesTheGraph) {
  std::string out = path("mlp.orch.txt");
  cli_test::Outcome r = orch_cli("rewrite " + std::string(ORCH_SOURCE_DIR) +
                                 "/examples/tiny_mlp.orch.txt --report -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "16 primitives -> 13; analytic cost")) << r.output;
  // Both biases' Reshapes fold, and the broadcast of the second (4x8 = 32 elements <= 64).
  EXPECT_TRUE(contains(r.output, "  fold_constants             3\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "0 rejected")) << r.output;
  EXPECT_TRUE(contains(r.output, "wrote " + out)) << r.output;
  cli_test::Outcome reread = orch_cli("info " + out);
  EXPECT_EQ(reread.exit_code, 0) << reread.output;
}

TEST_F(RewriteCli, ListsRulesAndRejectsUnknownOnes) {
  cli_test::Outcome list = orch_cli("rewrite --list-rules");
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_TRUE(contains(list.output, "reduce_sum_to_matmul")) << list.output;
  cli_test::Outcome bad = orch_cli("rewrite " + std::string(ORCH_SOURCE_DIR) +
                                   "/examples/tiny_mlp.orch.txt --disable no_such_rule");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(
      contains(bad.output, "orch: error: --disable: no rule 'no_such_rule' (see --list-rules)"))
      << bad.output;
}

TEST_F(RewriteCli, FuelZeroChangesNothing) {
  cli_test::Outcome r = orch_cli("rewrite " + std::string(ORCH_SOURCE_DIR) +
                                 "/examples/tiny_mlp.orch.txt --report --fuel 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "16 primitives -> 16")) << r.output;
  EXPECT_TRUE(contains(r.output, "no rule applied")) << r.output;
}

}  // namespace
}  // namespace orch
