// The pipeline: orch's stages in order, as plain calls (the order lives in pipeline.cc only).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "frontend/onnx_import.h"
#include "ir/graph.h"

namespace orch::driver {

struct PipelineOptions {
  frontend::ImportOptions import;
  /// Run operator fission (off: the optimizer sees ONNX operators, for experiments).
  bool fission = true;
  /// Called with each stage's name and result (`--dump-after`).
  std::function<void(std::string_view stage, const Graph& graph)> after_stage;
};

/// The stage names, in order: "import", "fission".
std::vector<std::string_view> stage_names();

/// The primitive graph of a model file: import (bind dims, fold shapes), then fission.
/// Every stage's result passes the verifier.
Graph primitive_graph(const std::string& model_path, const PipelineOptions& options);

}  // namespace orch::driver
