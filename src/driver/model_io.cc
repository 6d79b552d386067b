#include "driver/model_io.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "frontend/onnx_export.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch::driver {
namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open '{}'", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_extension(const std::string& path) {
  check(ends_with(path, ".onnx") || ends_with(path, ".orch.txt"),
        "'{}': unknown model format (expected .onnx or .orch.txt)", path);
}

}  // namespace

std::pair<std::string, Shape> parse_shape_binding(const std::string& text) {
  size_t eq = text.rfind('=');
  check(eq != std::string::npos && eq > 0, "bad shape '{}': expected NAME=DIMS, e.g. x=1x3x224x224",
        text);
  std::string dims = text.substr(eq + 1);
  Shape shape;
  size_t start = 0;
  while (!dims.empty() && start <= dims.size()) {
    size_t end = dims.find('x', start);
    if (end == std::string::npos) end = dims.size();
    int64_t d = -1;
    auto [p, ec] = std::from_chars(dims.data() + start, dims.data() + end, d);
    check(ec == std::errc() && p == dims.data() + end && d >= 0,
          "bad shape '{}': dims must be non-negative integers separated by 'x'", text);
    shape.push_back(d);
    start = end + 1;
  }
  return {text.substr(0, eq), shape};
}

Graph load_model(const std::string& path, const frontend::ImportOptions& options) {
  check_extension(path);
  if (ends_with(path, ".onnx")) return frontend::import_onnx_file(path, options);
  Graph graph;
  try {
    graph = parse_graph(read_text(path));
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
  for (const auto& [name, shape] : options.shapes) {
    ValueId v = graph.find_value(name);
    check(v != kNoValue, "--shape names '{}', which is not an input of the model", name);
    check(graph.value(v).type.shape == shape, "input '{}' has the fixed shape {}, not {}", name,
          format_shape(graph.value(v).type.shape), format_shape(shape));
  }
  verify(graph);
  return graph;
}

void save_model(const Graph& graph, const std::string& path) {
  check_extension(path);
  if (ends_with(path, ".onnx")) return frontend::export_onnx_file(graph, path);
  std::ofstream out(path, std::ios::binary);
  check(out.good(), "cannot write '{}'", path);
  out << print_graph(graph);
  check(out.good(), "cannot write '{}'", path);
}

}  // namespace orch::driver
