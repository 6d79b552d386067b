// `orch db stats|export|prune`: the tuning database.
#include <fmt/format.h>

#include "commands.h"
#include "ir/error.h"
#include "profile/tuning_db.h"

namespace orch::tool {
namespace {

struct DbArgs {
  std::string path;
  std::string format = "csv";
  profile::PruneFilter filter;
};

void print_stats(const DbArgs& args) {
  profile::TuningDb db(args.path);
  profile::TuningDbStats s = db.stats();
  fmt::print("database: {}\n", db.path());
  fmt::print("records: {} ({} ok, {} failed)\n", s.records, s.ok, s.failed);
  fmt::print("kernels: {}; machines: {}; orch versions: {}\n", s.kernels, s.machines, s.versions);
  fmt::print("this machine: {}\n", profile::machine_fingerprint());
}

void export_records(const DbArgs& args) {
  check(args.format == "csv" || args.format == "jsonl", "--format {}: expected csv or jsonl",
        args.format);
  profile::TuningDb db(args.path);
  if (args.format == "csv") fmt::print("{}\n", profile::csv_header());
  for (const profile::TuningRecord& r : db.all())
    fmt::print("{}\n", args.format == "csv" ? profile::to_csv(r) : profile::to_json_line(r));
}

void prune_records(const DbArgs& args) {
  check(args.filter.other_versions || args.filter.other_machines || args.filter.failed,
        "db prune: say what to remove: --other-versions, --other-machines and/or --failed");
  profile::TuningDb db(args.path);
  fmt::print("removed {} records from {}\n", db.prune(args.filter), db.path());
}

}  // namespace

void add_db_command(CLI::App& app) {
  auto args = std::make_shared<DbArgs>();
  CLI::App* cmd = app.add_subcommand("db", "Inspect or clean the tuning database");
  cmd->require_subcommand(1);
  auto add_db = [&](CLI::App* sub) {
    sub->add_option("--db", args->path, "Database file (default: the tuning database)");
  };
  CLI::App* stats = cmd->add_subcommand("stats", "Counts of records, kernels, machines");
  add_db(stats);
  stats->callback([args] { print_stats(*args); });
  CLI::App* exp = cmd->add_subcommand("export", "Every record, as CSV or JSON lines");
  add_db(exp);
  exp->add_option("--format", args->format, "csv (default) or jsonl");
  exp->callback([args] { export_records(*args); });
  CLI::App* prune = cmd->add_subcommand("prune", "Remove records");
  add_db(prune);
  prune->add_flag("--other-versions", args->filter.other_versions,
                  "Records of other orch versions");
  prune->add_flag("--other-machines", args->filter.other_machines, "Records of other machines");
  prune->add_flag("--failed", args->filter.failed, "Failed records (measured again next time)");
  prune->callback([args] { prune_records(*args); });
}

}  // namespace orch::tool
