// Inputs that once crashed a fuzz target (fuzz/) or escaped it with a non-orch exception: each
// must now parse or fail with an orch::Error. One file per input under
// tests/data/fuzz_regressions/<target>/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/npy.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch {
namespace {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> inputs(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& entry :
       fs::directory_iterator(fs::path(ORCH_TEST_DATA) / "fuzz_regressions" / target)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out.emplace_back(entry.path().filename().string(), bytes.str());
  }
  EXPECT_FALSE(out.empty()) << target;
  return out;
}

TEST(FuzzRegressions, TextParser) {
  for (const auto& [name, text] : inputs("text_parser")) {
    try {
      Graph graph = parse_graph(text);
      verify(graph);
      print_graph(graph);
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

TEST(FuzzRegressions, Npy) {
  for (const auto& [name, bytes] : inputs("npy")) {
    try {
      serialize_npy(parse_npy(bytes, name));
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

// From fuzz_text_parser (text_parser/resize_huge_scale.orch.txt): a scale of 1.3e65 made an
// output size of inf, converted to int64 (undefined behaviour).
TEST(FuzzRegressions, ResizeHugeScaleIsAnError) {
  try {
    parse_graph(R"(graph g(%x: f32[1,2,6,8]) {
  %n: f32[1,2,12,16] = prim.Resize(%x) {mode = "nearest", scales = [1.0e65, 1.0, 2.0, 2.0]}
  return %n
})");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scales[0] gives output size inf, out of range"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orch
