// The orch command line.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "ir/error.h"

int main(int argc, char** argv) {
  CLI::App app{"orch: an optimizing compiler for ONNX inference models"};
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const orch::Error& e) {
    fmt::print(stderr, "orch: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
