// Base tile, per-tile configuration (reduce steps, levels, vector width) and the best-first
// search over output tiles.
#include "schedule/search.h"

#include <algorithm>
#include <queue>
#include <set>
#include <string_view>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::schedule {
namespace {

// Parallel tasks per core: enough for a busy core's share to be taken over by the others.
constexpr int kTasksPerCore = 8;

const Shape& root_shape(const TileGraph& tg) {
  return tg.graph->value(tg.root).type.shape;
}

// A representative interior tile (index 1 where a dim has three tiles or more).
std::vector<int64_t> interior_index(const Shape& shape, const std::vector<int64_t>& tile) {
  std::vector<int64_t> index;
  for (size_t d = 0; d < shape.size(); ++d)
    index.push_back((shape[d] + tile[d] - 1) / tile[d] >= 3 ? 1 : 0);
  return index;
}

// Elementwise functions about as cheap as the store and reload that keeping their result costs
// (an instruction or two); anything else (exp, erf, div, sqrt, ...) is worth keeping.
const std::set<std::string_view> kCheapFns = {
    "add",      "sub",     "mul",   "neg",        "abs",   "relu", "min",           "max",
    "identity", "cast",    "where", "sign",       "floor", "ceil", "round",         "equal",
    "less",     "greater", "and",   "less_equal", "or",    "xor",  "greater_equal", "not"};

// Operations a value with several consumers may recompute per element, rather than be kept
// in a tile buffer: on a CPU, a store and a reload cost about as much as two cheap operations.
constexpr int64_t kRecomputeBudget = 2;
constexpr int64_t kExpensive = int64_t{1} << 40;

// The operations one element of `n`'s output costs when recomputed: a broadcast none (its
// consumer reads the source), cheap elementwise functions and layout primitives one, anything
// else (reductions, linear, transcendental functions) too many.
int64_t node_ops(const Node& n) {
  const OpSchema* schema = find_op(n.op);
  if (schema == nullptr) return kExpensive;
  if (schema->category == Category::Broadcast) return 0;
  if (schema->category == Category::Layout) return 1;
  if (schema->category == Category::Elementwise)
    return kCheapFns.count(attr_string(n.attrs, "fn", "")) != 0 ? 1 : kExpensive;
  return kExpensive;
}

// Inlining recomputes the producer per use. Only for a producer without reduce axes whose
// consumers need no halo; into a consumer that reads elements more than once (a broadcast, an
// upsampling, a reduction's loop) only when the producer is cheap; with several consumers (or
// reads overlapping across them), only when the extra evaluations cost at most
// kRecomputeBudget operations per element (`ops`: one element's inlined expression).
bool inlinable(const TileGraph& tg, const Regions& regions, ValueId v, int64_t ops) {
  const Graph& g = *tg.graph;
  NodeId p = g.value(v).producer;
  if (!tg.maps[p] || !tg.maps[p]->reduce_extents.empty() || tg.consumers[v].empty() || !regions[v])
    return false;
  std::set<NodeId> consumers(tg.consumers[v].begin(), tg.consumers[v].end());
  int64_t evaluated = 0;
  bool reused = false;
  for (NodeId c : consumers) {
    const Node& consumer = g.node(c);
    const std::optional<Box>& out = regions[consumer.outputs[0]];
    if (!tg.maps[c] || !out || consumer.outputs.size() != 1) return false;
    size_t slot =
        std::find(consumer.inputs.begin(), consumer.inputs.end(), v) - consumer.inputs.begin();
    int64_t reads = box_elements(*out);
    for (int64_t e : tg.maps[c]->reduce_extents) reads *= e;
    int64_t needed = box_elements(map_box(tg, c, slot, *out));
    if (needed > reads) return false;
    evaluated += needed;
    reused = reused || needed < reads;
  }
  // An exp inlined into a bilinear 2x upsampling (64x112x112) ran 4.6 ms; kept per tile, 0.6.
  if (consumers.size() == 1) return !reused || ops < kExpensive;
  int64_t extra = std::max<int64_t>(evaluated - box_elements(*regions[v]), 0);
  return ops < kExpensive && extra * ops <= kRecomputeBudget * box_elements(*regions[v]);
}

std::vector<int64_t> sizes_of(int64_t extent) {
  std::vector<int64_t> sizes;
  for (int64_t s = 1; s < extent; s *= 2) sizes.push_back(s);
  sizes.push_back(extent);
  return sizes;
}

}  // namespace

size_t resolve_tile_level(const Machine& machine, int tile_level) {
  size_t levels = machine.levels.size();
  if (tile_level >= 0) {
    check(tile_level >= 1 && static_cast<size_t>(tile_level) + 1 < levels,
          "tile level {} is not a cache level (1..{})", tile_level, levels - 2);
    return static_cast<size_t>(tile_level);
  }
  size_t level = 1;
  for (size_t l = 1; l + 1 < levels; ++l)
    if (!machine.levels[l].shared) level = l;
  return level;
}

std::vector<int64_t> base_tile(const TileGraph& tg) {
  const Shape& shape = root_shape(tg);
  std::vector<int64_t> tile(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] <= 1) continue;
    std::vector<int64_t> doubled = tile;
    doubled[i] = 2;
    int64_t now = tile_work(tg, tile, interior_index(shape, tile));
    int64_t twice = tile_work(tg, doubled, interior_index(shape, doubled));
    if (4 * twice < 5 * now) tile[i] = shape[i];
  }
  return tile;
}

ScoredConfig configure(const TileGraph& tg, const Machine& machine,
                       const std::vector<int64_t>& tile, size_t tile_level) {
  const Graph& g = *tg.graph;
  const Shape& shape = root_shape(tg);
  size_t memory = machine.levels.size() - 1;
  TileConfig c;
  c.tile = tile;
  c.root = tg.root;
  c.memory_level = static_cast<int>(memory);
  c.reduce_steps.resize(g.num_nodes());
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    if (!tg.maps[n]) continue;
    const Node& node = g.node(n);
    int64_t esize = static_cast<int64_t>(dtype_size(g.value(node.inputs[0]).type.dtype));
    int64_t line_elements = std::max<int64_t>(machine.levels[1].line / esize, 1);
    for (int64_t extent : tg.maps[n]->reduce_extents)
      c.reduce_steps[n].push_back(std::min(extent, line_elements));
  }
  c.level.assign(g.num_values(), -1);
  std::vector<bool> is_output(g.num_values(), false);
  for (ValueId v : g.outputs()) is_output[v] = true;
  TileRegions tiles = tile_regions(tg, tile);
  const Regions& regions = tiles.regions[tiles.interior];
  std::vector<ValueId> kept;  // intermediates a tile stores
  // Per value, the operations of one element's inlined expression (producers first).
  std::vector<int64_t> ops(g.num_values(), 0);
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    const Node& node = g.node(n);
    for (ValueId v : node.outputs) {
      ops[v] = node_ops(node);
      for (ValueId in : node.inputs)
        if (in != kNoValue && c.level[in] == 0) ops[v] = std::min(ops[v] + ops[in], kExpensive);
      if (is_output[v]) continue;
      if (node.outputs.size() == 1 && inlinable(tg, regions, v, ops[v])) {
        c.level[v] = 0;
      } else {
        kept.push_back(v);
      }
    }
  }
  // Every stored intermediate at the fastest cache that fits, else materialized in memory.
  ScoredConfig best{c, {}};
  for (size_t l = 1; l <= memory; ++l) {
    if (l > tile_level && l < memory) continue;
    for (ValueId v : kept) c.level[v] = static_cast<int>(l);
    best = {c, evaluate(tg, machine, c, tile_level, tiles)};
    if (best.cost.fits) break;
  }
  // Longer reduce steps while one tile's inputs still fit the first cache.
  for (int round = 0; round < 6 && best.cost.fits; ++round) {
    TileConfig grown = best.config;
    bool changed = false;
    for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n)
      for (size_t r = 0; r < grown.reduce_steps[n].size(); ++r) {
        int64_t extent = tg.maps[n]->reduce_extents[r];
        int64_t next = std::min(extent, grown.reduce_steps[n][r] * 2);
        changed |= next != grown.reduce_steps[n][r];
        grown.reduce_steps[n][r] = next;
      }
    if (!changed) break;
    TileCost cost = evaluate(tg, machine, grown, tile_level, tiles);
    if (!cost.fits || cost.footprint[1] > machine.tile_capacity(1)) break;
    best = {grown, cost};
  }
  int64_t esize = static_cast<int64_t>(dtype_size(g.value(tg.root).type.dtype));
  int64_t lanes = std::max<int64_t>(machine.simd_bytes / esize, 1);
  int64_t inner = tile.empty() ? 1 : tile.back();
  int width = 1;
  while (width * 2 <= std::min(lanes, inner)) width *= 2;
  best.config.vector_width = width;
  best.config.parallel_dim = -1;
  best.config.parallel_tasks = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = (shape[d] + tile[d] - 1) / tile[d];
    if (n > 1) {
      best.config.parallel_dim = static_cast<int>(d);
      int64_t tasks = int64_t{kTasksPerCore} * std::max(machine.cores, 1);
      if (n > tasks) best.config.parallel_tasks = static_cast<int>(tasks);
      break;
    }
  }
  return best;
}

SearchResult search_tiles(const TileGraph& tg, const Machine& machine,
                          const SearchOptions& options) {
  const Shape& shape = root_shape(tg);
  SearchResult result;
  result.tile_level = resolve_tile_level(machine, options.tile_level);
  if (num_elements(shape) == 0) {
    result.note = "the kernel's output is empty";
    return result;
  }
  result.base_tile = base_tile(tg);
  using Entry = std::pair<double, std::vector<int64_t>>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  std::set<std::vector<int64_t>> seen{result.base_tile};
  std::vector<ScoredConfig> found;
  auto visit = [&](const std::vector<int64_t>& tile) {
    ScoredConfig sc = configure(tg, machine, tile, result.tile_level);
    ++result.visited;
    if (sc.cost.fits) {
      frontier.push({sc.cost.score, tile});
      found.push_back(sc);
    } else if (result.visited == 1) {
      result.note = fmt::format("the base tile does not fit: {}", sc.cost.reason);
    }
  };
  visit(result.base_tile);
  // A whole dim that overflows the cache (a row feeding a MatMul with its whole weight) falls
  // back to the all-ones tile; the search grows it again as far as it fits.
  std::vector<int64_t> ones(shape.size(), 1);
  if (found.empty() && result.base_tile != ones) {
    result.base_tile = ones;
    seen.insert(ones);
    visit(ones);
    if (!found.empty()) result.note.clear();
  }
  std::vector<std::vector<int64_t>> sizes;
  for (int64_t e : shape) sizes.push_back(sizes_of(e));
  while (!frontier.empty() && result.visited < options.max_visits) {
    std::vector<int64_t> tile = frontier.top().second;
    frontier.pop();
    // Larger tiles only grow the footprint: children of a tile that fits are the candidates.
    for (size_t d = 0; d < shape.size() && result.visited < options.max_visits; ++d) {
      auto next = std::upper_bound(sizes[d].begin(), sizes[d].end(), tile[d]);
      if (next == sizes[d].end()) continue;
      std::vector<int64_t> child = tile;
      child[d] = *next;
      if (seen.insert(child).second) visit(child);
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const ScoredConfig& a, const ScoredConfig& b) {
    return a.cost.score < b.cost.score;
  });
  if (found.size() > static_cast<size_t>(std::max(options.top_k, 0)))
    found.resize(static_cast<size_t>(std::max(options.top_k, 0)));
  result.configs = std::move(found);
  return result;
}

}  // namespace orch::schedule
