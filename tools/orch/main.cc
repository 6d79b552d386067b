// The orch command line. Library errors arrive as orch::Error; this is the one place that
// prints them and chooses the exit code.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <new>
#include <string_view>

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
    check(options.shapes.emplace(name, shape).second, "--shape names '{}' twice", name);
  }
  return options;
}

void print_warning(std::string_view message) {
  fmt::print(stderr, "orch: warning: {}\n", message);
}

namespace {

// "512M", "8G", "1048576": bytes, with an optional K/M/G suffix (powers of 1024).
uint64_t parse_memory_size(const std::string& text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view suffix(end, text.data() + text.size() - end);
  int shift = suffix.empty()  ? 0
              : suffix == "K" ? 10
              : suffix == "M" ? 20
              : suffix == "G" ? 30
                              : -1;
  orch::check(ec == std::errc() && shift >= 0 && value > 0 && value <= (UINT64_MAX >> shift),
              "--max-memory '{}': expected a size such as 512M or 8G", text);
  return value << shift;
}

// Caps the address space, so that a hostile or huge model fails with std::bad_alloc (reported
// as an error below) instead of exhausting the machine.
void limit_memory(const std::string& text) {
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = parse_memory_size(text);
  orch::check(setrlimit(RLIMIT_AS, &limit) == 0, "--max-memory {}: setrlimit failed", text);
}

}  // namespace
}  // namespace orch::tool

int main(int argc, char** argv) {
  CLI::App app{"orch: an optimizing compiler for ONNX inference models"};
  app.require_subcommand(1);
  std::string max_memory;
  app.add_option("--max-memory", max_memory,
                 "Cap orch's memory (address space), e.g. 8G or 512M; goes before the subcommand");
  app.parse_complete_callback([&] {
    if (!max_memory.empty()) orch::tool::limit_memory(max_memory);
  });
  orch::tool::add_info_command(app);
  orch::tool::add_convert_command(app);
  orch::tool::add_run_command(app);
  orch::tool::add_conformance_command(app);
  orch::tool::add_fission_command(app);
  orch::tool::add_zoo_command(app);
  orch::tool::add_candidates_command(app);
  orch::tool::add_schedule_command(app);
  orch::tool::add_explain_command(app);
  orch::tool::add_tune_command(app);
  orch::tool::add_plan_command(app);
  orch::tool::add_db_command(app);
  orch::tool::add_optimize_command(app);
  orch::tool::add_rewrite_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const orch::Error& e) {
    fmt::print(stderr, "orch: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "orch: error: out of memory{}\n",
               max_memory.empty() ? "" : fmt::format(" (--max-memory {})", max_memory));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "orch: internal error: {}\n", e.what());
    return 3;
  }
  return 0;
}
