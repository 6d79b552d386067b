// `orch rewrite MODEL -o OUT --report`: the primitive graph of a model (after fission),
// optimized by the rewrite rules and the cost-guided search.
#include <fmt/format.h>

#include "commands.h"
#include "driver/model_io.h"
#include "driver/pipeline.h"
#include "fission/fission.h"
#include "fission/lower.h"
#include "ir/error.h"
#include "rewrite/rewrite.h"
#include "rewrite/rule.h"

namespace orch::tool {
namespace {

struct RewriteArgs {
  std::string model;
  std::string out;
  std::vector<std::string> shapes;
  bool report = false;
  bool list_rules = false;
  bool no_search = false;
  // `orch optimize`'s rewrite options, so that both write the same graph; the flags change them.
  rewrite::RewriteOptions options = driver::default_rewrite_options();
};

void list_rules() {
  for (const rewrite::RewriteRule& rule : rewrite::all_rules())
    fmt::print("{:<26} {:<9} {}\n", rule.name, rule.family, rule.legality);
}

void run_rewrite_command(const RewriteArgs& args) {
  if (args.list_rules) return list_rules();
  check(!args.model.empty(), "MODEL is required (or --list-rules)");
  for (const std::string& name : args.options.disabled)
    check(rewrite::find_rule(name) != nullptr, "--disable: no rule '{}' (see --list-rules)", name);
  Graph graph = fission::fission(driver::load_model(args.model, import_options(args.shapes)));
  rewrite::RewriteOptions options = args.options;
  options.search = !args.no_search;
  rewrite::RewriteReport report;
  Graph result = rewrite::rewrite(graph, options, &report);
  fmt::print("{} primitives -> {}; analytic cost {:.2f} us -> {:.2f} us ({:+.1f}%)\n",
             graph.num_nodes(), result.num_nodes(), report.cost_before, report.cost_after,
             report.cost_before > 0
                 ? 100 * (report.cost_after - report.cost_before) / report.cost_before
                 : 0.0);
  if (args.report) {
    fmt::print("search: {} steps, {} graphs, {} rule applications (fuel), {} rejected\n",
               report.steps, report.graphs, report.fuel_used, report.rejected);
    if (report.applied.empty()) fmt::print("  no rule applied\n");
    for (const auto& [rule, count] : report.applied) fmt::print("  {:<26} {}\n", rule, count);
  }
  if (args.out.empty()) return;
  // ONNX has no primitives: write their standard-op forms.
  driver::save_model(args.out.ends_with(".onnx") ? fission::lower_primitives(result) : result,
                     args.out);
  fmt::print("wrote {}\n", args.out);
}

}  // namespace

void add_rewrite_command(CLI::App& app) {
  auto args = std::make_shared<RewriteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "rewrite",
      "Optimize a model's primitive graph (after fission) with verified substitutions and a "
      "cost-guided search; write it as .orch.txt (prim.* ops) or .onnx (standard ops)");
  cmd->add_option("MODEL", args->model, "Model (.onnx or .orch.txt)");
  cmd->add_option("-o,--out", args->out, "Output model (.onnx or .orch.txt)");
  cmd->add_flag("--report", args->report, "Print the rules applied and the search's statistics");
  cmd->add_flag("--list-rules", args->list_rules, "List the rules with their legality conditions");
  cmd->add_flag("--no-search", args->no_search, "Cleanup rules only");
  cmd->add_option("--steps", args->options.max_steps, "Search budget: graphs taken from the queue")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--seconds", args->options.max_seconds, "Search budget: seconds")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--alpha", args->options.alpha, "Relaxation: keep graphs up to alpha * best cost")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--fuel", args->options.fuel,
                  fmt::format("Search budget: rule applications, negative for no limit; a "
                              "smaller N bisects a bad rewrite (default: ORCH_REWRITE_FUEL or {}, "
                              "as orch optimize)",
                              driver::kRewriteApplications));
  cmd->add_option("--disable", args->options.disabled, "Do not apply this rule (repeatable)");
  add_shape_option(*cmd, args->shapes);
  cmd->callback([args] { run_rewrite_command(*args); });
}

}  // namespace orch::tool
