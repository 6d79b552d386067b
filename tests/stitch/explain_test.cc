// `orch explain`'s picture from a hand-written manifest: clusters per kernel with backend and
// time, recomputed primitives marked, buffers between kernels, clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "stitch/explain.h"

namespace orch::stitch {
namespace {

// Korch Fig. 4c in miniature: primitive 0 is computed by both kernels.
constexpr const char* kManifest = R"({
  "model": "fig4", "objective_us": 3.5,
  "inputs": [{"name": "x", "dtype": "f32", "shape": [4]}],
  "kernels": [
    {"name": "k0", "backend": "halide", "cost_us": 1.5, "optimized": true,
     "primitives": [{"id": 0, "node": "a", "op": "prim.Elementwise"},
                    {"id": 1, "node": "b", "op": "prim.Elementwise", "inputs": [0]}],
     "inputs": [{"value": "x", "region": "input", "dtype": "f32", "shape": [4]}],
     "outputs": [{"value": "b", "region": "output", "dtype": "f32", "shape": [4]}]},
    {"name": "k1", "backend": "reference", "cost_us": 2.0, "optimized": false,
     "primitives": [{"id": 0, "node": "a", "op": "prim.Elementwise"},
                    {"id": 2, "node": "c", "op": "TopK", "inputs": [0]}],
     "inputs": [{"value": "x", "region": "input", "dtype": "f32", "shape": [4]},
                {"value": "w", "region": "weights", "dtype": "f32", "shape": [4]}],
     "outputs": [{"value": "c", "region": "output", "dtype": "f32", "shape": [2]}]}
  ]
})";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Explain, KernelsAreClustersWithBackendAndTime) {
  std::string dot = explain_dot(kManifest);
  EXPECT_TRUE(contains(dot, "label=\"fig4: 2 kernels, 3.5 us\"")) << dot;
  EXPECT_TRUE(contains(dot, "subgraph cluster_k0 {")) << dot;
  EXPECT_TRUE(contains(dot, "label=\"k0 · halide · 1.5 us\"")) << dot;
  EXPECT_TRUE(contains(dot, "label=\"k1 · reference · 2.0 us · not optimized\"")) << dot;
}

TEST(Explain, RecomputedPrimitivesAreMarkedInEveryKernel) {
  std::string dot = explain_dot(kManifest);
  EXPECT_TRUE(contains(dot, "k0_p0 [label=\"prim.Elementwise\\na\\nrecomputed: 2 kernels\""))
      << dot;
  EXPECT_TRUE(contains(dot, "k1_p0 [label=\"prim.Elementwise\\na\\nrecomputed: 2 kernels\""))
      << dot;
  EXPECT_FALSE(contains(dot, "k0_p1 [label=\"prim.Elementwise\\nb\\nrecomputed")) << dot;
}

TEST(Explain, EdgesFollowPrimitivesAndBuffers) {
  std::string dot = explain_dot(kManifest);
  EXPECT_TRUE(contains(dot, "k0_p0 -> k0_p1;")) << dot;
  EXPECT_TRUE(contains(dot, "\"v:x\" -> k1_p0 [lhead=cluster_k1];")) << dot;
  EXPECT_TRUE(contains(dot, "k1_p2 -> \"v:c\" [ltail=cluster_k1];")) << dot;
  EXPECT_FALSE(contains(dot, "\"v:w\"")) << "weights are not drawn\n" << dot;
}

TEST(Explain, BadManifestsAreErrors) {
  EXPECT_THROW(
      {
        try {
          explain_dot("{not json");
        } catch (const Error& e) {
          EXPECT_TRUE(contains(e.what(), "not valid JSON")) << e.what();
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          explain_dot(R"({"inputs": []})");
        } catch (const Error& e) {
          EXPECT_TRUE(contains(e.what(), "lacks what the picture needs")) << e.what();
          throw;
        }
      },
      Error);
}

TEST(Explain, WritesDotAndSvgIntoTheModuleDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(testing::TempDir()) / "orch_explain";
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_THROW(write_explain(dir.string()), Error);  // no manifest yet
  std::ofstream(dir / "manifest.json") << kManifest;
  ExplainFiles files = write_explain(dir.string());
  EXPECT_TRUE(fs::file_size(files.dot) > 0);
  // Graphviz is one of ./run deps' packages; without it only the DOT file is written.
  if (!files.svg.empty()) {
    std::ifstream svg(files.svg);
    std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(contains(text, "<svg")) << text.substr(0, 200);
  }
}

}  // namespace
}  // namespace orch::stitch
