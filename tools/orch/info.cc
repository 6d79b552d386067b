// `orch info MODEL`: inputs, outputs, op histogram, parameters, FLOPs.
#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "driver/model_io.h"
#include "driver/model_stats.h"

namespace orch::tool {
namespace {

struct InfoArgs {
  std::string model;
  std::vector<std::string> shapes;
};

std::string human(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) v /= 1000, ++u;
  return fmt::format("{:.3g}{}", v, units[u]);
}

void run_info(const InfoArgs& args) {
  Graph graph = driver::load_model(args.model, import_options(args.shapes));
  driver::ModelStats stats = driver::model_stats(graph);
  fmt::print("model: {}\n", args.model);
  fmt::print("inputs:\n");
  for (ValueId v : graph.inputs())
    fmt::print("  {}: {}\n", graph.value(v).name, format_type(graph.value(v).type));
  fmt::print("outputs:\n");
  for (ValueId v : graph.outputs())
    fmt::print("  {}: {}\n", graph.value(v).name, format_type(graph.value(v).type));
  fmt::print("nodes: {}\n", graph.num_nodes());
  fmt::print("parameters: {} ({}B)\n", human(static_cast<double>(stats.parameters)),
             human(static_cast<double>(stats.parameter_bytes)));
  fmt::print("flops (estimate): {}\n", human(stats.flops));
  std::vector<std::pair<std::string, int64_t>> ops(stats.op_counts.begin(), stats.op_counts.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  fmt::print("ops:\n");
  for (const auto& [op, count] : ops) fmt::print("  {:<24} {:>6}\n", op, count);
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Print a model's inputs, outputs, op histogram, parameter count and FLOPs estimate");
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .orch.txt)")->required();
  add_shape_option(*cmd, args->shapes);
  cmd->callback([args] { run_info(*args); });
}

}  // namespace orch::tool
