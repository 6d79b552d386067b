// `orch explain MODULE_DIR`: the plan of a compiled module as Graphviz DOT (and SVG).
#include <fmt/format.h>

#include "commands.h"
#include "stitch/explain.h"

namespace orch::tool {

void add_explain_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "explain",
      "Draw a compiled module's plan: DIR/plan.dot (Graphviz), each kernel a cluster labelled with "
      "its backend and measured time, recomputed primitives marked; DIR/plan.svg when Graphviz is "
      "installed");
  cmd->add_option("MODULE_DIR", *dir, "Module directory written by `orch optimize`")->required();
  cmd->callback([dir] {
    stitch::ExplainFiles files = stitch::write_explain(*dir);
    fmt::print("wrote {}\n", files.dot);
    if (files.svg.empty())
      fmt::print("Graphviz's `dot` is not installed: no SVG (apt-get install graphviz)\n");
    else
      fmt::print("wrote {}\n", files.svg);
  });
}

}  // namespace orch::tool
