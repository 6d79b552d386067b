// `orch zoo list` and `orch zoo build NAME -o FILE`: the benchmark architectures of zoo/.
#include <fmt/format.h>

#include "commands.h"
#include "driver/model_io.h"
#include "driver/model_stats.h"
#include "zoo/zoo.h"

namespace orch::tool {
namespace {

struct ZooBuildArgs {
  std::string name;
  int64_t batch = 1;
  int64_t size = 0;
  std::string out;
};

// "1.68M", "18.4G".
std::string human(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, units[u]);
}

std::string input_shapes(const Graph& graph) {
  std::string text;
  for (ValueId v : graph.inputs())
    text += (text.empty() ? "" : " ") + format_shape(graph.value(v).type.shape);
  return text;
}

void run_list() {
  fmt::print("{:<16} {:<18} {:>8} {:>8}  {}\n", "name", "input", "params", "flops", "description");
  for (const zoo::ModelInfo& model : zoo::all_models()) {
    Graph graph = zoo::build_model(model.name);
    driver::ModelStats stats = driver::model_stats(graph);
    fmt::print("{:<16} {:<18} {:>8} {:>8}  {}\n", model.name, input_shapes(graph),
               human(static_cast<double>(stats.parameters)), human(stats.flops), model.description);
  }
}

void run_build(const ZooBuildArgs& args) {
  Graph graph = zoo::build_model(args.name, {.batch = args.batch, .size = args.size});
  driver::save_model(graph, args.out);
  driver::ModelStats stats = driver::model_stats(graph);
  fmt::print("wrote {}: {} {}, {} nodes, {} parameters, {} flops\n", args.out, args.name,
             input_shapes(graph), graph.num_nodes(), human(static_cast<double>(stats.parameters)),
             human(stats.flops));
}

}  // namespace

void add_zoo_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "zoo", "The benchmark models (published architectures, random weights from a fixed seed)");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand(
      "list", "List the models with input shape, parameters and FLOPs at the default shape");
  list->callback(run_list);

  auto args = std::make_shared<ZooBuildArgs>();
  CLI::App* build =
      cmd->add_subcommand("build", "Build a model and write it as .onnx or .orch.txt");
  build->add_option("NAME", args->name, "Model name (see `orch zoo list`)")->required();
  build->add_option("--batch", args->batch, "Batch size")->capture_default_str();
  build->add_option("--size", args->size,
                    "Input resolution or sequence length (default: the published one)");
  build->add_option("-o,--output", args->out, "Output file (.onnx or .orch.txt)")->required();
  build->callback([args] { run_build(*args); });
}

}  // namespace orch::tool
