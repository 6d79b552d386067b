// The orch command line. Library errors arrive as orch::Error; this is the one place that
// prints them and chooses the exit code.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "commands.h"
#include "driver/model_io.h"
#include "ir/error.h"

namespace orch::tool {

void add_shape_option(CLI::App& command, std::vector<std::string>& shapes) {
  command.add_option("--shape", shapes,
                     "Bind an input's dims, e.g. --shape x=1x3x224x224 (repeatable); "
                     "required for inputs with symbolic dims");
}

frontend::ImportOptions import_options(const std::vector<std::string>& shapes) {
  frontend::ImportOptions options;
  for (const std::string& text : shapes) {
    auto [name, shape] = driver::parse_shape_binding(text);
    options.shapes[name] = shape;
  }
  return options;
}

}  // namespace orch::tool

int main(int argc, char** argv) {
  CLI::App app{"orch: an optimizing compiler for ONNX inference models"};
  app.require_subcommand(1);
  orch::tool::add_info_command(app);
  orch::tool::add_convert_command(app);
  orch::tool::add_run_command(app);
  orch::tool::add_conformance_command(app);
  orch::tool::add_fission_command(app);
  orch::tool::add_zoo_command(app);
  orch::tool::add_candidates_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const orch::Error& e) {
    fmt::print(stderr, "orch: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "orch: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
