// `orch schedule MODEL [--kernel N]`: the tile-graph scheduler (Welder) on a model's candidate
// kernels: for one candidate its tile graph, regions, footprint and traffic per level and the
// top-k configurations; for all, the distribution of search time.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "commands.h"
#include "driver/model_io.h"
#include "fission/fission.h"
#include "ir/error.h"
#include "ir/ops/prim.h"
#include "ir/text_format.h"
#include "schedule/kernels.h"
#include "schedule/search.h"

namespace orch::tool {
namespace {

struct ScheduleArgs {
  std::string model;
  std::vector<std::string> shapes;
  std::string machine;
  int kernel = -1;
  schedule::SearchOptions search;
  int64_t max_states = 2000;
  FeasibilityRules rules;
};

std::string box_text(const std::optional<Box>& box) {
  if (!box) return "-";
  std::vector<std::string> dims;
  for (const Interval& i : *box)
    dims.push_back(i.empty() ? "empty" : fmt::format("{}:{}", i.lo, i.hi + 1));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

std::string bytes_text(int64_t b) {
  if (b >= 10 << 20) return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= 10 << 10) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

std::string level_name(const schedule::Machine& m, int level) {
  if (level < 0) return "io";
  if (level == 0) return "inline";
  if (static_cast<size_t>(level) + 1 == m.levels.size()) return "memory";
  return m.levels[level].name;
}

void print_config(const schedule::Machine& m, const Graph& k, const schedule::ScoredConfig& sc,
                  int rank) {
  const schedule::TileConfig& c = sc.config;
  std::vector<std::string> levels, steps;
  for (ValueId v = 0; v < static_cast<ValueId>(k.num_values()); ++v)
    if (c.level[v] >= 0)
      levels.push_back(fmt::format("{}={}", k.value(v).name, level_name(m, c.level[v])));
  for (NodeId n = 0; n < static_cast<NodeId>(k.num_nodes()); ++n)
    if (!c.reduce_steps[n].empty())
      steps.push_back(fmt::format("{}:[{}]", k.value(k.node(n).outputs[0]).name,
                                  fmt::join(c.reduce_steps[n], ",")));
  fmt::print("  #{} tile [{}]  score {:.0f}  tiles {}  waves {}  vector {}  parallel dim {}\n",
             rank, fmt::join(c.tile, ","), sc.cost.score, sc.cost.tiles, sc.cost.waves,
             c.vector_width, c.parallel_dim);
  std::vector<std::string> fp, tr;
  for (size_t l = 1; l < m.levels.size(); ++l) {
    if (l + 1 < m.levels.size())
      fp.push_back(fmt::format("{} {}", m.levels[l].name, bytes_text(sc.cost.footprint[l])));
    tr.push_back(fmt::format("{} {}", m.levels[l].name, bytes_text(sc.cost.traffic[l])));
  }
  fmt::print("     footprint per tile: {}; traffic: {}\n", fmt::join(fp, ", "),
             fmt::join(tr, ", "));
  if (!steps.empty()) fmt::print("     reduce steps: {}\n", fmt::join(steps, " "));
  if (!levels.empty()) fmt::print("     levels: {}\n", fmt::join(levels, " "));
}

void print_kernel(const schedule::Machine& m, const Graph& k, const schedule::SearchResult& r,
                  const schedule::SearchOptions& options) {
  schedule::TileGraph tg = schedule::make_tile_graph(k);
  fmt::print("kernel graph:\n{}\n", print_graph(k));
  std::vector<int64_t> tile = r.configs.empty() ? r.base_tile : r.configs[0].config.tile;
  const Shape& shape = k.value(tg.root).type.shape;
  std::vector<int64_t> first(shape.size(), 0);
  schedule::Regions regions = schedule::propagate(tg, schedule::tile_box(shape, tile, first));
  fmt::print("tile graph for the first tile [{}] of root %{} (base tile [{}]):\n",
             fmt::join(tile, ","), k.value(tg.root).name, fmt::join(r.base_tile, ","));
  for (ValueId v : k.inputs())
    fmt::print("  input  %{:<24} {}\n", k.value(v).name, box_text(regions[v]));
  for (ValueId v = 0; v < static_cast<ValueId>(k.num_values()); ++v)
    if (k.value(v).is_constant() && regions[v])
      fmt::print("  const  %{:<24} {}\n", k.value(v).name, box_text(regions[v]));
  for (NodeId n = 0; n < static_cast<NodeId>(k.num_nodes()); ++n) {
    const Node& node = k.node(n);
    fmt::print("  {:<18} %{:<24} {}{}\n", node.op, k.value(node.outputs[0]).name,
               box_text(regions[node.outputs[0]]),
               tg.maps[n] ? "" : "  (no index map: inputs whole)");
  }
  fmt::print("search: {} configurations visited, tile level {}\n", r.visited,
             m.levels[r.tile_level].name);
  if (!r.note.empty()) fmt::print("note: {}\n", r.note);
  fmt::print(
      "top {} configurations (score = (traffic per tile + 1) * waves, traffic in {}-bytes "
      "weighted by bandwidth):\n",
      options.top_k, m.levels.back().name);
  for (size_t i = 0; i < r.configs.size(); ++i)
    print_config(m, k, r.configs[i], static_cast<int>(i));
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1,
                    static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

void run_schedule(const ScheduleArgs& args) {
  Graph graph = driver::load_model(args.model, import_options(args.shapes));
  bool primitive = std::all_of(graph.nodes().begin(), graph.nodes().end(),
                               [](const Node& n) { return prim::is_primitive(n.op); });
  if (!primitive) {
    fission::FissionReport report;
    graph = fission::fission(graph, {}, &report);
    fmt::print("fission: {} operators rewritten, {} kept whole\n", report.rewritten,
               report.kept.size());
  }
  schedule::Machine machine = schedule::host_machine(args.machine);
  std::vector<std::string> levels;
  for (const schedule::MemoryLevel& l : machine.levels)
    levels.push_back(fmt::format("{} {}/{} B lines/{:.0f} GB/s{}", l.name,
                                 l.capacity ? bytes_text(l.capacity) : "-", l.line, l.bandwidth_gbs,
                                 l.shared ? " shared" : ""));
  fmt::print("machine: {} ({}), {} cores, {}-byte SIMD; {}\n", machine.name, machine.kind,
             machine.cores, machine.simd_bytes, fmt::join(levels, "; "));
  IdentifyOptions options;
  options.enumeration.max_states = args.max_states;
  options.enumeration.feasible = feasibility_of(args.rules);
  std::vector<schedule::CandidateKernel> kernels = schedule::candidate_kernels(graph, options);
  fmt::print("model: {}: {} primitives, {} candidate kernels\n", args.model, graph.num_nodes(),
             kernels.size());
  check(args.kernel < static_cast<int>(kernels.size()), "--kernel {}: the model has {} candidates",
        args.kernel, kernels.size());
  std::vector<double> ms(kernels.size());
  std::vector<std::string> failures;
  for (size_t i = 0; i < kernels.size(); ++i) {
    Graph k = schedule::kernel_graph(graph, kernels[i]);
    auto start = std::chrono::steady_clock::now();
    schedule::TileGraph tg = schedule::make_tile_graph(k);
    schedule::SearchResult r = schedule::search_tiles(tg, machine, args.search);
    ms[i] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (static_cast<int>(i) == args.kernel) {
      fmt::print("\ncandidate {} (subgraph {}, {} primitives), searched in {:.3f} ms\n", i,
                 kernels[i].subgraph, kernels[i].members.size(), ms[i]);
      print_kernel(machine, k, r, args.search);
    }
    if (r.configs.empty()) failures.push_back(fmt::format("{}: {}", i, r.note));
  }
  if (kernels.empty()) return;
  double total = 0;
  for (double t : ms) total += t;
  fmt::print(
      "\nsearch time per candidate ({} candidates): min {:.3f} ms, median {:.3f} ms, p90 "
      "{:.3f} ms, p99 {:.3f} ms, max {:.3f} ms (candidate {}); total {:.1f} ms\n",
      ms.size(), percentile(ms, 0), percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.99),
      percentile(ms, 1), std::max_element(ms.begin(), ms.end()) - ms.begin(), total);
  std::vector<int> histogram(6, 0);  // < 0.1, 1, 10, 100, 1000, more ms
  for (double t : ms) {
    int bucket = 0;
    for (double edge = 0.1; bucket < 5 && t >= edge; edge *= 10) ++bucket;
    ++histogram[bucket];
  }
  fmt::print("  <0.1 ms {}, 0.1-1 ms {}, 1-10 ms {}, 10-100 ms {}, 0.1-1 s {}, >1 s {}\n",
             histogram[0], histogram[1], histogram[2], histogram[3], histogram[4], histogram[5]);
  fmt::print("candidates without a fitting configuration: {}\n", failures.size());
  for (size_t i = 0; i < std::min<size_t>(failures.size(), 5); ++i)
    fmt::print("  {}\n", failures[i]);
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto args = std::make_shared<ScheduleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "schedule", "Tile-graph scheduling (Welder) of a model's candidate kernels");
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .orch.txt)")->required();
  add_shape_option(*cmd, args->shapes);
  cmd->add_option("--kernel", args->kernel, "Show the tile graph and configurations of candidate N")
      ->check(at_least(0));
  cmd->add_option("--machine", args->machine,
                  "Machine description (JSON); default: this host, probed once and cached");
  cmd->add_option("--top-k", args->search.top_k, "Configurations to keep (default 3)")
      ->check(at_least(1));
  cmd->add_option("--max-visits", args->search.max_visits,
                  "Configurations evaluated per candidate (default 64)")
      ->check(at_least(1));
  cmd->add_option("--tile-level", args->search.tile_level,
                  "Level a tile's working set must fit (default: last private cache)")
      ->check(at_least(1));
  cmd->add_option("--max-states", args->max_states, "Execution states per subgraph (default 2000)")
      ->check(at_least(1));
  cmd->add_option("--max-primitives", args->rules.max_primitives,
                  "Primitives per kernel, 0 for no cap (default 32)")
      ->check(at_least(0));
  cmd->callback([args] { run_schedule(*args); });
}

}  // namespace orch::tool
