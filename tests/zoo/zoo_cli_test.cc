// `orch zoo list` and `orch zoo build` as a user runs them.
#include <gtest/gtest.h>

#include "../common/orch_cli.h"
#include "driver/model_io.h"
#include "ir/hash.h"
#include "zoo/zoo.h"

namespace orch::zoo {
namespace {
using cli_test::orch_cli;
using cli_test::Outcome;
using ZooCli = cli_test::CliTest;

TEST_F(ZooCli, ListShowsEveryModelWithShapeAndCounts) {
  Outcome r = orch_cli("zoo list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const ModelInfo& m : all_models())
    EXPECT_NE(r.output.find(std::string(m.name) + " "), std::string::npos) << m.name;
  size_t line = r.output.find("\nsegformer-b0 ");
  ASSERT_NE(line, std::string::npos) << r.output;
  std::string row = r.output.substr(line + 1, r.output.find('\n', line + 1) - line - 1);
  EXPECT_NE(row.find("[1,3,512,512]"), std::string::npos) << row;
  EXPECT_NE(row.find(" 3.75M "), std::string::npos) << row;
}

TEST_F(ZooCli, BuildWritesTheRegistryModelInBothFormats) {
  uint64_t expected = structural_hash(build_model("candy", {.batch = 2, .size = 32}));
  for (const char* file : {"candy.onnx", "candy.orch.txt"}) {
    Outcome r = orch_cli("zoo build candy --batch 2 --size 32 -o " + path(file));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("candy [2,3,32,32]"), std::string::npos) << r.output;
    EXPECT_EQ(structural_hash(driver::load_model(path(file))), expected) << file;
  }
}

TEST_F(ZooCli, BuildRejectsUnknownModelsAndBadSizes) {
  Outcome r = orch_cli("zoo build nope -o " + path("x.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("orch: error: unknown zoo model 'nope'"), std::string::npos) << r.output;
  r = orch_cli("zoo build yolov4 --size 100 -o " + path("x.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("yolov4: resolution must be a positive multiple of 32, got 100"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("x.onnx")));
}

}  // namespace
}  // namespace orch::zoo
