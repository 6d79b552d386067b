// `orch convert IN OUT`: ONNX <-> text format, by file extension.
#include <fmt/format.h>

#include "commands.h"
#include "driver/model_io.h"

namespace orch::tool {
namespace {

struct ConvertArgs {
  std::string in;
  std::string out;
  std::vector<std::string> shapes;
};

}  // namespace

void add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* cmd =
      app.add_subcommand("convert",
                         "Convert a model between ONNX (.onnx) and orch's text format (.orch.txt); "
                         "the ONNX import binds dims and folds constant subgraphs");
  cmd->add_option("IN", args->in, "Input model (.onnx or .orch.txt)")->required();
  cmd->add_option("OUT", args->out, "Output model (.onnx or .orch.txt)")->required();
  add_shape_option(*cmd, args->shapes);
  cmd->callback([args] {
    Graph graph = driver::load_model(args->in, import_options(args->shapes));
    driver::save_model(graph, args->out);
    fmt::print("wrote {} ({} nodes)\n", args->out, graph.num_nodes());
  });
}

}  // namespace orch::tool
