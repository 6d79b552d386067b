// Inputs that once crashed a fuzz target (fuzz/) or escaped it with a non-orch exception: each
// must now import or fail with an orch::Error. One file per input under
// tests/data/fuzz_regressions/<target>/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "ir/error.h"
#include "ir/verifier.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> inputs(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> out;
  fs::path dir = fs::path(ORCH_TEST_DATA) / "fuzz_regressions" / target;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    out.emplace_back(entry.path().filename().string(), bytes.str());
  }
  return out;
}

TEST(FuzzRegressions, OnnxImport) {
  for (const auto& [name, bytes] : inputs("onnx_import")) {
    try {
      verify(import_onnx_bytes(bytes, "/nonexistent-orch-fuzz"));
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

TEST(FuzzRegressions, TensorPb) {
  for (const auto& [name, bytes] : inputs("tensor_pb")) {
    onnx::TensorProto proto;
    if (!proto.ParseFromString(bytes)) continue;
    try {
      tensor_from_proto(proto, "/nonexistent-orch-fuzz");
    } catch (const Error&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace orch::frontend
