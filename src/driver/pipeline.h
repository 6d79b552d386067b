// The pipeline: orch's stages in order, as plain calls (the order lives in pipeline.cc only).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "frontend/onnx_import.h"
#include "ir/graph.h"
#include "rewrite/rewrite.h"

namespace orch::driver {

/// Rule applications the pipeline's rewrite search may make: a budget of work rather than of
/// time, so that a model gives the same primitive graph on any machine at any load (and the same
/// plan, where the orchestration solver ends within its time limit). A 10 s limit had stopped
/// Segformer-B0's search at a step that depended on the load; its 300 steps take 4,627
/// applications, about 11 s here (2 cores), and every other zoo model ends its search well
/// within it.
inline constexpr int64_t kRewriteApplications = 5000;

/// The pipeline's rewrite budget: 300 search steps (enough for Korch's attention rewrite on a
/// BERT layer) and kRewriteApplications, or the fuel ORCH_REWRITE_FUEL gives; 60 s only as a
/// safety net, which no zoo model reaches.
rewrite::RewriteOptions default_rewrite_options();

struct PipelineOptions {
  frontend::ImportOptions import;
  /// Run operator fission (off: the optimizer sees ONNX operators, for experiments).
  bool fission = true;
  /// Optimize the primitive graph with the rewrite rules and search (needs fission).
  bool rewrite = true;
  rewrite::RewriteOptions rewrite_options = default_rewrite_options();
  /// Called with each stage's name and result (`--dump-after`).
  std::function<void(std::string_view stage, const Graph& graph)> after_stage;
  /// When given, receives the operator node of each primitive (fission's origin); requires
  /// the rewrite stage off (rewrites do not keep operators apart).
  std::vector<NodeId>* fission_origin = nullptr;
};

/// The stage names, in order: "import", "fission", "rewrite".
std::vector<std::string_view> stage_names();

/// The primitive graph of a model file: import (bind dims, fold shapes), fission, rewrite.
/// Every stage's result passes the verifier.
Graph primitive_graph(const std::string& model_path, const PipelineOptions& options);

}  // namespace orch::driver
