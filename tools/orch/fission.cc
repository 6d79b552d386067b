// `orch fission MODEL -o OUT`: the primitive graph of a model (Korch's operator fission).
#include <fmt/format.h>

#include <map>

#include "commands.h"
#include "driver/model_io.h"
#include "fission/fission.h"
#include "fission/lower.h"
#include "ir/op_registry.h"

namespace orch::tool {
namespace {

struct FissionArgs {
  std::string model;
  std::string out;
  std::vector<std::string> shapes;
  bool verbose = false;
  bool implicit_broadcast = false;
};

void run_fission_command(const FissionArgs& args) {
  Graph graph = driver::load_model(args.model, import_options(args.shapes));
  fission::FissionReport report;
  Graph prims = fission::fission(graph, {}, &report);
  std::map<std::string, int> categories;
  for (const Node& n : prims.nodes()) {
    const OpSchema* s = find_op(n.op);
    ++categories[std::string(s != nullptr ? category_name(s->category) : "?")];
  }
  fmt::print("{} operators -> {} nodes ({} operators rewritten, {} kept whole)\n",
             graph.num_nodes(), prims.num_nodes(), report.rewritten, report.kept.size());
  for (const auto& [category, count] : categories) fmt::print("  {:<12} {}\n", category, count);
  for (size_t i = 0; i < report.kept.size(); ++i)
    if (args.verbose || i < 10) fmt::print("  kept: {}\n", report.kept[i]);
  if (!args.verbose && report.kept.size() > 10)
    fmt::print("  ... {} more kept (--verbose lists them)\n", report.kept.size() - 10);
  if (args.out.empty()) return;
  // ONNX has no primitives: write their standard-op forms.
  bool onnx = args.out.ends_with(".onnx");
  driver::save_model(onnx ? fission::lower_primitives(prims, {args.implicit_broadcast}) : prims,
                     args.out);
  fmt::print("wrote {}\n", args.out);
}

}  // namespace

void add_fission_command(CLI::App& app) {
  auto args = std::make_shared<FissionArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fission",
      "Split every operator of a model into primitives (Elementwise, Reduce, Broadcast, Layout, "
      "Linear; Opaque ops kept whole) and write the primitive graph: .orch.txt keeps the prim.* "
      "ops, .onnx writes each primitive as its standard ONNX op");
  cmd->add_option("MODEL", args->model, "Model (.onnx or .orch.txt)")->required();
  cmd->add_option("-o,--out", args->out, "Output model (.onnx or .orch.txt)");
  cmd->add_flag("--verbose", args->verbose, "List every operator kept whole");
  cmd->add_flag("--implicit-broadcast", args->implicit_broadcast,
                "ONNX output: leave broadcasts that feed only elementwise ops to ONNX's implicit "
                "broadcasting instead of writing Expand");
  add_shape_option(*cmd, args->shapes);
  cmd->callback([args] { run_fission_command(*args); });
}

}  // namespace orch::tool
