// `orch candidates MODEL`: kernel identification (Korch §4.1) on a model: the subgraphs of the
// partition and, for each, its primitives, execution states, and candidate kernels kept or
// rejected by reason.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "candidates/candidates.h"
#include "commands.h"
#include "driver/backend_check.h"
#include "driver/model_io.h"
#include "driver/pipeline.h"
#include "ir/error.h"

namespace orch::tool {
namespace {

struct CandidatesArgs {
  std::string model;
  std::vector<std::string> shapes;
  std::vector<std::string> cuts;
  int64_t max_states = 2000;
  int max_vertices = 64;
  FeasibilityRules rules;
  bool no_auto_cut = false;
  bool no_fission = false;
  bool no_backend_check = false;
};

std::string rejected_text(const SubgraphCandidates& sub) {
  std::string out;
  for (const auto& [reason, count] : sub.rejected)
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", reason, count);
  return out;
}

std::string shorten(const std::string& text, size_t width) {
  return text.size() <= width ? text : fmt::format("{}...", text.substr(0, width - 3));
}

void run_candidates(const CandidatesArgs& args) {
  driver::PipelineOptions pipeline{.import = import_options(args.shapes),
                                   .fission = !args.no_fission};
  Graph graph = driver::primitive_graph(args.model, pipeline);
  Dag dag = dag_of(graph);
  IdentifyOptions options;
  options.partition.max_vertices = args.max_vertices;
  options.partition.automatic = !args.no_auto_cut;
  for (const std::string& name : args.cuts) {
    ValueId v = graph.find_value(name);
    check(v != kNoValue, "--cut {}: no such value", name);
    check(graph.value(v).producer != kNoNode,
          "--cut {}: a graph input or constant; cut at a value a node computes", name);
    options.partition.manual_cuts.push_back(graph.value(v).producer);
  }
  options.enumeration.max_states = args.max_states;
  options.enumeration.feasible = feasibility_of(args.rules);
  if (!args.no_backend_check) options.enumeration.generable = driver::backend_check(graph);

  auto start = std::chrono::steady_clock::now();
  KernelIdentification kernels = identify_kernels(dag, options);
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::array<int, kNumCategories> by_category{};
  for (Category c : dag.category) ++by_category[static_cast<int>(c)];
  std::string categories;
  for (int c = 0; c < kNumCategories; ++c)
    if (by_category[c] > 0)
      categories += fmt::format("{}{} {}", categories.empty() ? "" : ", ",
                                category_name(static_cast<Category>(c)), by_category[c]);
  fmt::print("model: {}\n", args.model);
  fmt::print("primitives: {} ({})\n", dag.size, categories);
  fmt::print(
      "limits: {} states and {} vertices per subgraph; kernels: at most {} Linear, {} "
      "primitives, Opaque alone{}{}\n",
      args.max_states, std::min(args.max_vertices, VertexSet::kCapacity), args.rules.max_linear,
      args.rules.max_primitives, args.rules.operator_alone ? ", operators alone" : "",
      args.no_backend_check ? "" : ", generable by a backend");
  if (args.rules.operator_alone && by_category[static_cast<int>(Category::Operator)] > 0)
    fmt::print(
        "note: operators not split into primitives are kernels of their own "
        "(--fuse-operators fuses them like primitives)\n");
  fmt::print("\n{:>4}  {:<11} {:<26} {:>5} {:>7}  {:>8} {:>7} {:>8}  {:<16} {:>9}  {}\n", "sub",
             "vertices", "first", "prims", "states", "convex", "kept", "rejected", "cut after",
             "ms", "rejected by reason");
  int64_t states = 0, convex = 0, kept = 0, rejected = 0;
  size_t slowest = 0;
  for (size_t i = 0; i < kernels.subgraphs.size(); ++i) {
    const Subgraph& s = kernels.subgraphs[i];
    const SubgraphCandidates& c = kernels.candidates[i];
    std::string cut =
        s.cut_reason.empty() ? "-" : fmt::format("{} ({})", s.cut_width, s.cut_reason);
    fmt::print("{:>4}  {:<11} {:<26} {:>5} {:>7}{} {:>8} {:>7} {:>8}  {:<16} {:>9.3f}  {}\n", i,
               fmt::format("{}-{}", s.begin, s.end - 1), shorten(dag.label[s.begin], 26), s.size(),
               c.states, c.state_cap_hit ? "+" : " ", c.convex, c.kept.size(), c.rejected_total(),
               cut, c.seconds * 1e3, rejected_text(c));
    states += c.states;
    convex += c.convex;
    kept += static_cast<int64_t>(c.kept.size());
    rejected += c.rejected_total();
    if (c.seconds > kernels.candidates[slowest].seconds) slowest = i;
  }
  for (const SubgraphCandidates& c : kernels.candidates)
    if (!c.note.empty()) fmt::print("note: {}\n", c.note);
  fmt::print(
      "\ntotal: {} subgraphs, {} states, {} convex subgraphs, {} candidates kept, {} "
      "rejected; {:.3f} s (partition and enumeration)\n",
      kernels.subgraphs.size(), states, convex, kept, rejected, total_s);
  if (!kernels.candidates.empty()) {
    const SubgraphCandidates& c = kernels.candidates[slowest];
    fmt::print(
        "largest enumeration: subgraph {} ({} primitives, {} states, {} convex) in {:.3f} "
        "ms\n",
        slowest, c.end - c.begin, c.states, c.convex, c.seconds * 1e3);
  }
}

}  // namespace

void add_candidates_command(CLI::App& app) {
  auto args = std::make_shared<CandidatesArgs>();
  CLI::App* cmd = app.add_subcommand(
      "candidates", "Partition a model and enumerate its candidate kernels (Korch §4.1)");
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .orch.txt)")->required();
  add_shape_option(*cmd, args->shapes);
  cmd->add_option("--cut", args->cuts, "Cut right after the node producing TENSOR (repeatable)");
  cmd->add_option("--max-states", args->max_states, "Execution states per subgraph (default 2000)")
      ->check(at_least(1));
  cmd->add_option("--max-vertices", args->max_vertices,
                  "Primitives per subgraph (default 64, at most 128)")
      ->check(at_least(1));
  cmd->add_option("--max-linear", args->rules.max_linear,
                  "Linear primitives per kernel (default 1)")
      ->check(at_least(0));
  cmd->add_option("--max-primitives", args->rules.max_primitives,
                  "Primitives per kernel, 0 for no cap (default 32)")
      ->check(at_least(0));
  cmd->add_flag(
      "--fuse-operators", [args](int64_t) { args->rules.operator_alone = false; },
      "Fuse operators fission left whole as if they were primitives");
  cmd->add_flag("--no-fission", args->no_fission,
                "Enumerate over ONNX operators instead of the primitive graph");
  cmd->add_flag("--no-backend-check", args->no_backend_check,
                "Keep candidates no backend can generate (shape rules only)");
  cmd->add_flag("--no-auto-cut", args->no_auto_cut,
                "Cut only at --cut and around Opaque primitives");
  cmd->callback([args] { run_candidates(*args); });
}

}  // namespace orch::tool
