// ONNX export: a Graph becomes an opset-17 ONNX model that ONNX Runtime loads and runs.
#pragma once

#include <string>

#include "ir/graph.h"

namespace orch::frontend {

/// Serialized ModelProto bytes (constants as initializers with raw data).
std::string export_onnx_bytes(const Graph& graph);
/// Writes the model to `path`; throws Error when the file cannot be written.
void export_onnx_file(const Graph& graph, const std::string& path);

}  // namespace orch::frontend
