// `orch --max-memory`: a model that needs more memory than the budget fails with a clear error.
#include <gtest/gtest.h>

#include <fstream>

#include "../common/orch_cli.h"

namespace orch {
namespace {

using cli_test::orch_cli;
using cli_test::Outcome;

class MaxMemory : public cli_test::CliTest {};

TEST_F(MaxMemory, ModelOverTheBudgetIsAnError) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit allows";
#endif
  // A 4 GB input under a 2 GB budget.
  std::ofstream(path("big.orch.txt"))
      << "graph big(%x: f32[1000000000]) {\n  %y: f32[1000000000] = Relu(%x)\n  return %y\n}\n";
  Outcome r = orch_cli("--max-memory 2G run " + path("big.orch.txt") +
                       " --random-inputs --seed 1 --out " + path("out"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("orch: error: out of memory (--max-memory 2G)"), std::string::npos)
      << r.output;
}

TEST_F(MaxMemory, BadSizeIsAnError) {
  Outcome r = orch_cli("--max-memory lots info " + std::string(ORCH_SOURCE_DIR) +
                       "/examples/tiny_mlp.orch.txt");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--max-memory 'lots': expected a size such as 512M or 8G"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace orch
