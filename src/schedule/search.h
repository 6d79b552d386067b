// The sub-graph tile search (Welder §4.2): from a base output tile that avoids recomputation,
// a best-first search over output tiles ranked by (traffic + 1) * waves, rejecting tiles whose
// footprint does not fit, with each tile's reduce steps grown and its intermediates placed at the
// fastest level that holds them. Emits the top-k configurations.
#pragma once

#include <string>
#include <vector>

#include "schedule/machine.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {

struct SearchOptions {
  int top_k = 3;
  int max_visits = 64;  // configurations evaluated
  /// The level one tile's working set must fit; -1: the slowest cache private to a core.
  int tile_level = -1;
};

/// A configuration with its cost.
struct ScoredConfig {
  TileConfig config;
  TileCost cost;
};

struct SearchResult {
  std::vector<int64_t> base_tile;
  std::vector<ScoredConfig> configs;  // best first, at most top_k
  int visited = 0;
  size_t tile_level = 0;
  std::string note;  // why no configuration fits, when configs is empty
};

/// The level `options.tile_level` names, resolved for `machine`.
size_t resolve_tile_level(const Machine& machine, int tile_level);

/// The base tile: all ones, then (innermost dim first) a dim grows to its full extent when
/// doubling the tile along it raises one tile's work by less than a quarter: the dim's needed
/// regions are already whole (softmax and LayerNorm rows), so one tile per row removes the
/// recomputation, while a halo (conv) or an independent dim (MatMul) stays at one.
std::vector<int64_t> base_tile(const TileGraph& tg);

/// A complete configuration for `tile`: reduce steps grown (doubling from one line of elements)
/// while the footprint fits the first cache, each intermediate inlined when its producer has no
/// reduce axes and each consumer reads each element at most once (with several consumers, only
/// when recomputing it costs at most two cheap operations per element: an add, a broadcast
/// subtract; never an exp), otherwise kept at the fastest cache where the tile still fits,
/// otherwise materialized; vector width, parallel dim and its task count (8 per core).
ScoredConfig configure(const TileGraph& tg, const Machine& machine,
                       const std::vector<int64_t>& tile, size_t tile_level);

/// Runs the search (from the all-ones tile when the base tile does not fit).
SearchResult search_tiles(const TileGraph& tg, const Machine& machine,
                          const SearchOptions& options = {});

}  // namespace orch::schedule
