// A tile-graph configuration as a HalideSchedule, and the schedule's stable text form (the
// profiler stores it as the measured configuration; the AOT build parses it back).
#include <fmt/format.h>

#include <charconv>

#include "codegen/halide/halide_backend.h"
#include "ir/error.h"
#include "schedule/tile_graph.h"

namespace orch::codegen {
namespace {

// The output the config's tile is over: the config's root, else the largest output.
ValueId root_of(const Graph& kernel, const schedule::TileConfig& config) {
  if (config.root != kNoValue) return config.root;
  ValueId root = kernel.outputs().at(0);
  for (ValueId v : kernel.outputs())
    if (num_elements(kernel.value(v).type.shape) > num_elements(kernel.value(root).type.shape))
      root = v;
  return root;
}

// The root's tile projected onto another output: equal dims keep the tile, size-1 dims are
// whole; an output it cannot be projected onto is computed whole (all zeros).
std::vector<int64_t> project(const Shape& root, const std::vector<int64_t>& tile,
                             const Shape& shape) {
  std::vector<int64_t> out(shape.size(), 0);
  if (shape.size() != root.size()) return out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == root[d])
      out[d] = tile[d];
    else if (shape[d] != 1)
      return std::vector<int64_t>(shape.size(), 0);
  }
  return out;
}

const char* placement_name(HalidePlacement p) {
  switch (p) {
    case HalidePlacement::inline_:
      return "inline";
    case HalidePlacement::tile:
      return "tile";
    case HalidePlacement::root:
      return "root";
  }
  return "?";
}

int64_t parse_int(std::string_view field, std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  check(ec == std::errc() && end == text.data() + text.size() && !text.empty(),
        "halide schedule field '{}': '{}' is not an integer", field, text);
  return v;
}

int parse_small(std::string_view field, std::string_view text) {
  int64_t v = parse_int(field, text);
  check(v >= -1000000 && v <= 1000000, "halide schedule field '{}': {} is out of range", field, v);
  return static_cast<int>(v);
}

// "tile.7" -> 7.
ValueId parse_id(std::string_view field, std::string_view key, size_t prefix) {
  int64_t id = parse_int(field, key.substr(prefix));
  check(id >= 0, "halide schedule field '{}': value id {} is negative", field, id);
  return static_cast<ValueId>(id);
}

}  // namespace

HalideSchedule halide_schedule_from_tile_config(const Graph& kernel,
                                                const schedule::TileConfig& config) {
  check(config.level.size() == kernel.num_values() &&
            config.reduce_steps.size() == kernel.num_nodes(),
        "the tile config is for another kernel ({} values, {} nodes; the kernel has {}, {})",
        config.level.size(), config.reduce_steps.size(), kernel.num_values(), kernel.num_nodes());
  HalideSchedule s;
  ValueId root = root_of(kernel, config);
  const Shape& root_shape = kernel.value(root).type.shape;
  check(config.tile.size() == root_shape.size(), "the tile {} does not fit the root output {}",
        fmt::join(config.tile, "x"), format_shape(root_shape));
  for (ValueId v : kernel.outputs())
    s.tiles[v] =
        v == root ? config.tile : project(root_shape, config.tile, kernel.value(v).type.shape);
  // A single tile (TileConfig's -1) has no loop to run in parallel.
  s.parallel_dim = config.parallel_dim >= 0 ? config.parallel_dim : -2;
  s.vector_width = std::max(config.vector_width, 1);
  s.parallel_tasks = std::max(config.parallel_tasks, 0);
  for (NodeId id = 0; id < static_cast<NodeId>(kernel.num_nodes()); ++id) {
    const Node& n = kernel.node(id);
    ValueId v = n.outputs.at(0);
    int level = config.level.at(v);
    if (level >= 0)
      s.placement[v] = level == 0                     ? HalidePlacement::inline_
                       : level == config.memory_level ? HalidePlacement::root
                                                      : HalidePlacement::tile;
    // Halide's RDom runs the innermost reduced dim (the last reduce axis) innermost.
    const std::vector<int64_t>& steps = config.reduce_steps[id];
    if ((n.op == "prim.Reduce" || n.op == "prim.MatMul") && !steps.empty())
      s.reduce_steps[v] = static_cast<int>(steps.back());
  }
  return s;
}

std::string halide_schedule_to_text(const HalideSchedule& s) {
  std::string out = fmt::format("parallel={} vector={} reduce_step={}", s.parallel_dim,
                                s.vector_width, s.reduce_step);
  // Written only when set, so the text of a schedule without it stays as it was.
  if (s.parallel_tasks != 0) out += fmt::format(" tasks={}", s.parallel_tasks);
  for (const auto& [v, tile] : s.tiles) out += fmt::format(" tile.{}={}", v, fmt::join(tile, ","));
  for (const auto& [v, p] : s.placement) out += fmt::format(" place.{}={}", v, placement_name(p));
  for (const auto& [v, step] : s.reduce_steps) out += fmt::format(" reduce.{}={}", v, step);
  return out;
}

HalideSchedule halide_schedule_from_text(std::string_view text) {
  HalideSchedule s;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    size_t end = std::min(text.find(' ', pos), text.size());
    std::string_view field = text.substr(pos, end - pos);
    pos = end;
    size_t eq = field.find('=');
    check(eq != std::string_view::npos, "halide schedule field '{}': expected key=value", field);
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "parallel") {
      s.parallel_dim = parse_small(field, value);
    } else if (key == "vector") {
      s.vector_width = parse_small(field, value);
      check(s.vector_width >= 1, "halide schedule field '{}': the width must be >= 1", field);
    } else if (key == "reduce_step") {
      s.reduce_step = parse_small(field, value);
    } else if (key == "tasks") {
      s.parallel_tasks = parse_small(field, value);
      check(s.parallel_tasks >= 0, "halide schedule field '{}': tasks must be >= 0", field);
    } else if (key.starts_with("tile.")) {
      std::vector<int64_t> tile;
      size_t p = 0;
      while (!value.empty() && p <= value.size()) {
        size_t comma = std::min(value.find(',', p), value.size());
        tile.push_back(parse_int(field, value.substr(p, comma - p)));
        check(tile.back() >= 0, "halide schedule field '{}': a tile size is negative", field);
        p = comma + 1;
      }
      s.tiles[parse_id(field, key, 5)] = tile;
    } else if (key.starts_with("place.")) {
      check(value == "inline" || value == "tile" || value == "root",
            "halide schedule field '{}': placement must be inline, tile or root", field);
      s.placement[parse_id(field, key, 6)] = value == "inline" ? HalidePlacement::inline_
                                             : value == "tile" ? HalidePlacement::tile
                                                               : HalidePlacement::root;
    } else if (key.starts_with("reduce.")) {
      s.reduce_steps[parse_id(field, key, 7)] = parse_small(field, value);
    } else {
      fail("halide schedule field '{}': unknown key '{}'", field, key);
    }
  }
  return s;
}

}  // namespace orch::codegen
