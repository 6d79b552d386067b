// ONNX Runtime runs the primitive graphs: each rule's sample and the bundled example are fissioned,
// lowered to standard ONNX ops, exported, run by onnxruntime-node (tools/ort/run_model.js, one
// process for all models) and compared with the interpreter on the operator graph. Skipped when
// `./run deps` has not installed onnxruntime-node into .deps/ort.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "fission/fission.h"
#include "fission/lower.h"
#include "fission_check.h"
#include "frontend/onnx_export.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/npy.h"
#include "ir/text_format.h"

namespace orch::fission {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  Graph graph;
  fs::path dir;
  std::vector<Tensor> want;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(OnnxRuntime, PrimitiveGraphsMatchTheInterpreter) {
  fs::path source = ORCH_SOURCE_DIR;
  if (!fs::exists(source / ".deps/ort/node_modules/onnxruntime-node/package.json"))
    GTEST_SKIP() << "onnxruntime-node is not installed (./run deps)";
  fs::path root = fs::temp_directory_path() / fmt::format("orch_ort_{}", ::getpid());
  fs::remove_all(root);

  std::vector<Case> cases;
  cases.push_back(
      {"tiny_mlp", parse_graph(read_text(source / "examples/tiny_mlp.orch.txt")), {}, {}});
  for (const FissionRule* rule : test::sampled_rules())
    for (int seed = 0; seed < 2; ++seed) {
      std::mt19937 rng(seed * 7919 + 17);
      cases.push_back({fmt::format("{}_{}", rule->op, seed), rule->sample(rule->op, rng), {}, {}});
    }

  std::string command = fmt::format("node {}", (source / "tools/ort/run_model.js").string());
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    c.dir = root / fmt::format("{:03}_{}", i, c.name);
    fs::create_directories(c.dir);
    Graph prims = fission(c.graph);
    // Every other model leaves broadcasts to ONNX instead of writing Expand.
    frontend::export_onnx_file(lower_primitives(prims, {.implicit_broadcast = i % 2 == 0}),
                               (c.dir / "model.onnx").string());
    std::vector<Tensor> inputs = interp::random_inputs(c.graph, i);
    for (size_t k = 0; k < inputs.size(); ++k)
      write_npy_file(inputs[k], (c.dir / fmt::format("input_{}.npy", k)).string());
    c.want = interp::interpret(c.graph, inputs);
    command += fmt::format(" {} {}", (c.dir / "model.onnx").string(), c.dir.string());
  }
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  int compared = 0;
  std::vector<std::string> unsupported_by_ort;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name + "\n" + print_graph(c.graph));
    if (fs::exists(c.dir / "error.txt")) {
      std::string error = read_text(c.dir / "error.txt");
      // ORT's CPU provider lacks some (op, dtype) kernels, e.g. f64 Erf: not our problem.
      bool missing_kernel = error.find("NOT_IMPLEMENTED") != std::string::npos ||
                            error.find("Could not find an implementation") != std::string::npos;
      EXPECT_TRUE(missing_kernel) << error;
      unsupported_by_ort.push_back(c.name);
      continue;
    }
    for (size_t k = 0; k < c.want.size(); ++k) {
      Tensor got = read_npy_file((c.dir / fmt::format("output_{}.npy", k)).string());
      EXPECT_EQ(test::compare(got, c.want[k], 1e-4, 1e-5), "") << "output " << k;
    }
    ++compared;
  }
  std::printf("ORT compared %d of %zu models; missing ORT kernels: %s\n", compared, cases.size(),
              fmt::format("{}", fmt::join(unsupported_by_ort, ", ")).c_str());
  EXPECT_GE(compared, static_cast<int>(cases.size() * 8 / 10))
      << "ORT ran too few models; missing kernels: "
      << fmt::format("{}", fmt::join(unsupported_by_ort, ", "));
  fs::remove_all(root);
}

}  // namespace
}  // namespace orch::fission
