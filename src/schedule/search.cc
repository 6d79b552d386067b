// Base tile, per-tile configuration (reduce steps, levels, vector width) and the best-first
// search over output tiles.
#include "schedule/search.h"

#include <algorithm>
#include <queue>
#include <set>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::schedule {
namespace {

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

// Inlining recomputes the producer per use: only for a producer without reduce axes whose one
// consumer reads each element at most once (no halo, no broadcast reuse).
bool inlinable(const TileGraph& tg, const Regions& regions, ValueId v) {
  const Graph& g = *tg.graph;
  NodeId p = g.value(v).producer;
  if (!tg.maps[p] || !tg.maps[p]->reduce_extents.empty() || tg.consumers[v].size() != 1)
    return false;
  NodeId c = tg.consumers[v][0];
  const std::optional<Box>& out = regions[g.node(c).outputs[0]];
  if (!tg.maps[c] || !out || g.node(c).outputs.size() != 1) return false;
  const Node& consumer = g.node(c);
  size_t slot =
      std::find(consumer.inputs.begin(), consumer.inputs.end(), v) - consumer.inputs.begin();
  int64_t reads = box_elements(*out);
  for (int64_t e : tg.maps[c]->reduce_extents) reads *= e;
  return box_elements(map_box(tg, c, slot, *out)) <= reads;
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
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    if (g.value(v).producer == kNoNode || is_output[v]) continue;
    if (inlinable(tg, regions, v)) {
      c.level[v] = 0;
    } else {
      kept.push_back(v);
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
  for (size_t d = 0; d < shape.size(); ++d)
    if ((shape[d] + tile[d] - 1) / tile[d] > 1) {
      best.config.parallel_dim = static_cast<int>(d);
      break;
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
