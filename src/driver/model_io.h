// Loading and saving models by file extension: `.onnx` (ONNX) or `.orch.txt` (text format).
#pragma once

#include <map>
#include <string>

#include "frontend/onnx_import.h"
#include "ir/graph.h"

namespace orch::driver {

/// Parses "x=1x3x224x224" into ("x", {1,3,224,224}); throws naming the text on bad syntax.
std::pair<std::string, Shape> parse_shape_binding(const std::string& text);

/// Loads and verifies a model; `.orch.txt` files ignore the shape bindings' dims but check them.
Graph load_model(const std::string& path, const frontend::ImportOptions& options = {});
/// Writes a model, choosing the format by extension.
void save_model(const Graph& graph, const std::string& path);

}  // namespace orch::driver
