// Each subcommand of `orch` registers itself on the app; its callback does the work.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "frontend/onnx_import.h"

namespace orch::tool {

void add_info_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_conformance_command(CLI::App& app);
void add_fission_command(CLI::App& app);
void add_zoo_command(CLI::App& app);
void add_candidates_command(CLI::App& app);
void add_schedule_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_db_command(CLI::App& app);
void add_optimize_command(CLI::App& app);
void add_rewrite_command(CLI::App& app);

/// Prints "orch: warning: MESSAGE" on stderr (library warnings, e.g. TuneOptions::warning).
void print_warning(std::string_view message);

/// Adds `--shape NAME=DIMS` (repeatable) bound to `shapes`.
void add_shape_option(CLI::App& command, std::vector<std::string>& shapes);
/// Checks for a numeric flag: finite and at least (or above) `low`; the error says the rule
/// and the value given ("--threads: must be a number at least 0, not -3").
CLI::Validator at_least(double low);
CLI::Validator above(double low);

/// Import options from the `--shape` texts.
frontend::ImportOptions import_options(const std::vector<std::string>& shapes);

}  // namespace orch::tool
