#include "driver/pipeline.h"

#include "driver/model_io.h"
#include "fission/fission.h"
#include "ir/error.h"
#include "ir/verifier.h"

namespace orch::driver {

std::vector<std::string_view> stage_names() {
  return {"import", "fission", "rewrite"};
}

rewrite::RewriteOptions default_rewrite_options() {
  rewrite::RewriteOptions options;
  options.max_steps = 300;
  options.max_seconds = 60;
  int64_t fuel = rewrite::fuel_from_env();
  options.fuel = fuel >= 0 ? fuel : kRewriteApplications;
  return options;
}

Graph primitive_graph(const std::string& model_path, const PipelineOptions& options) {
  auto stage_done = [&](std::string_view stage, const Graph& graph) {
    verify(graph);
    if (options.after_stage) options.after_stage(stage, graph);
  };
  // Import: ONNX (or text) -> operator graph with static shapes and folded shape chains.
  Graph graph = load_model(model_path, options.import);
  stage_done("import", graph);
  if (!options.fission) return graph;
  // Fission: every operator -> primitives (Korch §3); operators without a rule stay whole.
  fission::FissionReport report;
  graph = fission::fission(graph, {}, &report);
  stage_done("fission", graph);
  if (options.fission_origin) {
    check(!options.rewrite, "fission origins need the rewrite stage off");
    *options.fission_origin = std::move(report.origin);
  }
  if (!options.rewrite) return graph;
  // Rewrite: verified substitutions and a cost-guided search over the primitive graph (Korch §3).
  graph = rewrite::rewrite(graph, options.rewrite_options);
  stage_done("rewrite", graph);
  return graph;
}

}  // namespace orch::driver
