#include "stitch/explain.h"

#include <fmt/format.h>

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "ir/error.h"

extern char** environ;

namespace orch::stitch {
namespace {

using nlohmann::json;

// A DOT string literal.
std::string dot_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";  // a line break inside a DOT label
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string shape_text(const json& value) {
  std::string dims;
  for (const json& d : value.at("shape"))
    dims += fmt::format("{}{}", dims.empty() ? "" : ",", d.get<int64_t>());
  return fmt::format("{}[{}]", value.at("dtype").get<std::string>(), dims);
}

const char* backend_color(const std::string& backend) {
  if (backend == "halide") return "#e8f0fe";
  if (backend == "dnnl") return "#e6f4ea";
  return "#fce8e6";  // reference: not optimized
}

// The DOT node of primitive `id` inside kernel `k`.
std::string primitive_node(size_t k, int64_t id) {
  return fmt::format("k{}_p{}", k, id);
}

// The value node of a buffer named `value`.
std::string value_node(const std::string& value) {
  return dot_string("v:" + value);
}

struct Writer {
  std::ostringstream out;
  std::map<std::string, size_t> writer_kernel;  // value -> kernel that writes it
  std::map<int64_t, int> kernels_computing;     // primitive -> kernels that compute it
};

void write_kernel(Writer& w, size_t k, const json& kernel) {
  const std::string backend = kernel.at("backend").get<std::string>();
  const std::string label =
      fmt::format("{} · {} · {:.1f} us{}", kernel.at("name").get<std::string>(), backend,
                  kernel.at("cost_us").get<double>(),
                  kernel.value("optimized", true) ? "" : " · not optimized");
  w.out << fmt::format("  subgraph cluster_k{} {{\n    label={}; style=filled; fillcolor={};\n", k,
                       dot_string(label), dot_string(backend_color(backend)));
  for (const json& p : kernel.at("primitives")) {
    const int64_t id = p.at("id").get<int64_t>();
    const int times = w.kernels_computing[id];
    std::string text =
        fmt::format("{}\n{}", p.at("op").get<std::string>(), p.at("node").get<std::string>());
    std::string style = "shape=box, style=filled, fillcolor=white";
    if (times > 1) {
      text += fmt::format("\nrecomputed: {} kernels", times);
      style = "shape=box, style=\"filled,bold\", fillcolor=\"#fbbc04\"";
    }
    w.out << fmt::format("    {} [label={}, {}];\n", primitive_node(k, id), dot_string(text),
                         style);
  }
  w.out << "  }\n";
  // Edges inside the kernel: a primitive reads another primitive of the same kernel.
  for (const json& p : kernel.at("primitives"))
    for (const json& from : p.value("inputs", json::array()))
      w.out << fmt::format("  {} -> {};\n", primitive_node(k, from.get<int64_t>()),
                           primitive_node(k, p.at("id").get<int64_t>()));
}

// Runs `dot -Tsvg DOT -o SVG` without a shell: its exit status, or -1 when dot is not installed.
int run_dot(const std::string& dot, const std::string& svg) {
  const char* argv[] = {"dot", "-Tsvg", dot.c_str(), "-o", svg.c_str(), nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, "dot", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0)
    return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

std::string explain_dot(const std::string& manifest_text) {
  json manifest;
  try {
    manifest = json::parse(manifest_text);
  } catch (const json::exception& e) {
    fail("manifest.json is not valid JSON: {}", e.what());
  }
  try {
    const json& kernels = manifest.at("kernels");
    Writer w;
    for (const json& kernel : kernels)
      for (const json& p : kernel.at("primitives"))
        ++w.kernels_computing[p.at("id").get<int64_t>()];
    w.out << fmt::format(
        "digraph plan {{\n  label={}; labelloc=t; rankdir=TB; compound=true;\n"
        "  node [fontname=\"Helvetica\", fontsize=10];\n",
        dot_string(fmt::format("{}: {} kernels, {:.1f} us", manifest.value("model", "module"),
                               kernels.size(), manifest.value("objective_us", 0.0))));
    for (const json& input : manifest.at("inputs"))
      w.out << fmt::format("  {} [label={}, shape=ellipse];\n",
                           value_node(input.at("name").get<std::string>()),
                           dot_string(fmt::format("{}\n{}", input.at("name").get<std::string>(),
                                                  shape_text(input))));
    for (size_t k = 0; k < kernels.size(); ++k) {
      write_kernel(w, k, kernels[k]);
      const json& prims = kernels[k].at("primitives");
      check(!prims.empty(), "kernel {} has no primitives", k);
      const std::string first = primitive_node(k, prims.front().at("id").get<int64_t>());
      const std::string last = primitive_node(k, prims.back().at("id").get<int64_t>());
      // Buffers the kernel reads: module inputs and values earlier kernels wrote.
      for (const json& in : kernels[k].at("inputs")) {
        const std::string value = in.at("value").get<std::string>();
        if (in.at("region") == "weights") continue;
        w.out << fmt::format("  {} -> {} [lhead=cluster_k{}];\n", value_node(value), first, k);
      }
      for (const json& out : kernels[k].at("outputs")) {
        const std::string value = out.at("value").get<std::string>();
        w.out << fmt::format("  {} [label={}, shape=ellipse, style=dashed];\n", value_node(value),
                             dot_string(fmt::format("{}\n{}", value, shape_text(out))));
        w.out << fmt::format("  {} -> {} [ltail=cluster_k{}];\n", last, value_node(value), k);
      }
    }
    w.out << "}\n";
    return w.out.str();
  } catch (const json::exception& e) {
    fail("manifest.json lacks what the picture needs: {}", e.what());
  }
}

ExplainFiles write_explain(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path manifest_path = fs::path(dir) / "manifest.json";
  std::ifstream in(manifest_path);
  check(in.good(), "{}: cannot read (is '{}' a module directory written by orch optimize?)",
        manifest_path.string(), dir);
  std::stringstream text;
  text << in.rdbuf();
  std::string dot;
  try {
    dot = explain_dot(text.str());
  } catch (const Error& e) {
    rethrow_with_context(e, manifest_path.string());
  }
  ExplainFiles files{.dot = (fs::path(dir) / "plan.dot").string()};
  std::ofstream(files.dot) << dot;
  check(fs::file_size(files.dot) == dot.size(), "{}: cannot write", files.dot);
  // Graphviz is optional: without it the DOT file is the result.
  const std::string svg = (fs::path(dir) / "plan.svg").string();
  const int status = run_dot(files.dot, svg);
  check(status <= 0, "Graphviz's dot failed (exit {}) on {}", status, files.dot);
  if (status == 0) files.svg = svg;
  return files;
}

}  // namespace orch::stitch
