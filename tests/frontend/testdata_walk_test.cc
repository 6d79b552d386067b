// Walks every model of Debian's ONNX test data: each is imported, verified and round-tripped
// (ONNX export and the text format keep the structural hash), or rejected with a one-line
// Error. Prints the counts and the rejection reasons, grouped.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch::frontend {
namespace {

namespace fs = std::filesystem;

const char* const kDataRoot = "/usr/share/libonnx-testdata/data";
const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

std::vector<fs::path> all_models() {
  std::vector<fs::path> models;
  for (const char* suite : kSuites) {
    fs::path dir = fs::path(kDataRoot) / suite;
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir))
      if (fs::exists(entry.path() / "model.onnx")) models.push_back(entry.path() / "model.onnx");
  }
  std::sort(models.begin(), models.end());
  return models;
}

// The test's first data set supplies values for inputs that must be constants (shapes, axes).
ImportOptions options_for(const fs::path& model) {
  ImportOptions options;
  std::vector<DeclaredInput> inputs = declared_inputs(model.string());
  for (size_t i = 0; i < inputs.size(); ++i) {
    fs::path pb = model.parent_path() / "test_data_set_0" / fmt::format("input_{}.pb", i);
    if (!fs::exists(pb)) continue;
    try {
      options.known_inputs[inputs[i].name] = read_tensor_pb_file(pb.string());
    } catch (const Error&) {
      // Sequence or optional inputs: the import will reject the model itself.
    }
  }
  return options;
}

// Groups messages: the op for unsupported ops, otherwise the message without file, node and
// value names.
std::string reason_key(const std::string& message) {
  std::smatch m;
  static const std::regex kUnsupported("unsupported op '[^']*'");
  if (std::regex_search(message, m, kUnsupported)) return m.str();
  static const std::regex kFile("^[^:]*model\\.onnx: ");
  static const std::regex kNode("node (producing )?'[^']*' \\(op ([A-Za-z]+)\\)");
  static const std::regex kQuoted("'[^']*'");
  std::string key = std::regex_replace(message, kFile, "");
  key = std::regex_replace(key, kNode, "$2");
  return std::regex_replace(key, kQuoted, "'_'");
}

TEST(TestDataWalk, EveryModelImportsAndRoundTripsOrIsRejected) {
  std::vector<fs::path> models = all_models();
  if (models.empty()) GTEST_SKIP() << "no ONNX test data at " << kDataRoot;
  int imported = 0;
  int unsupported = 0;
  std::map<std::string, int> reasons;
  std::vector<std::string> failures;
  for (const fs::path& model : models) {
    std::string name = model.parent_path().filename().string();
    Graph g;
    try {
      g = import_onnx_file(model.string(), options_for(model));
    } catch (const Error& e) {
      std::string message = e.what();
      if (message.find('\n') != std::string::npos) failures.push_back(name + ": multi-line error");
      ++reasons[reason_key(message)];
      unsupported += e.kind() == Error::Kind::unsupported;
      continue;
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("{}: crashed: {}", name, e.what()));
      continue;
    }
    ++imported;
    try {
      verify(g);
      uint64_t hash = structural_hash(g);
      Graph via_onnx = import_onnx_bytes(export_onnx_bytes(g), "");
      if (structural_hash(via_onnx) != hash) failures.push_back(name + ": ONNX round trip");
      Graph via_text = parse_graph(print_graph(g));
      if (structural_hash(via_text) != hash) failures.push_back(name + ": text round trip");
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("{}: round trip threw: {}", name, e.what()));
    }
  }
  int rejected = static_cast<int>(models.size()) - imported -
                 static_cast<int>(std::count_if(failures.begin(), failures.end(), [](auto& f) {
                   return f.find("crashed") != std::string::npos;
                 }));
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [key, count] : reasons) sorted.emplace_back(count, key);
  std::sort(sorted.rbegin(), sorted.rend());
  fmt::print(
      "test data: {} models, {} imported and round-tripped, {} rejected ({} as unsupported, {} "
      "as invalid)\n",
      models.size(), imported, rejected, unsupported, rejected - unsupported);
  for (const auto& [count, key] : sorted) fmt::print("  {:4}  {}\n", count, key);
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

}  // namespace
}  // namespace orch::frontend
