// The tile graph (Welder §3): a kernel graph (codegen::extract_kernel) with one output tile,
// propagated backwards through every primitive's index map, and the memory footprint and traffic
// that tiling costs on a machine.
//
// Worked example, softmax rows of X: f32[8, 64] with output tile [1, 64] (one row):
//   Y = Div(E, Broadcast(ReduceSum(E)))   E = Exp(Sub(X, Broadcast(ReduceMax(X))))
// propagates to E [0,0]x[0,63], the sums [0,0]x[0,0], and X [0,0]x[0,63]: 256 bytes of X per
// tile = 4 lines of 64 bytes; 8 tiles read 32 lines and write 32 lines of Y.
//
// Levels are indices into Machine::levels: 0 registers (an intermediate there is inlined into its
// consumer), then the caches (computed per tile and kept there), and the last, main memory
// (written out and read back, by a pass of its own that reads its inputs again).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/index_map.h"
#include "schedule/machine.h"

namespace orch::schedule {

/// A kernel graph with the index map of each node.
struct TileGraph {
  const Graph* graph = nullptr;
  /// Per node; nullopt for an op without an index map (it reads its inputs whole).
  std::vector<std::optional<IndexMap>> maps;
  /// Per node: its map has floordiv/mod (Reshape), whose interval bounds lose precision over a
  /// box: such boxes are evaluated one outer index at a time (see map_box).
  /// The output the tile is taken over: the graph output with the most elements (first on ties),
  /// preferring outputs that do not depend on constants alone.
  ValueId root = kNoValue;
  std::vector<bool> split;
  std::vector<std::vector<NodeId>> consumers;  // per value
  /// Per value: a graph output the root's tile cannot be projected onto (its rank differs, or a
  /// dim is neither the root's nor 1); every tile computes it whole.
  std::vector<bool> whole_output;
  /// Per value: a graph output computed from constants alone that the tile cannot be projected
  /// onto (weight preprocessing): computed once outside the tile loop, not part of any tile.
  std::vector<bool> hoisted;
};

/// Builds the tile graph of a kernel; throws Error when the kernel has no outputs.
TileGraph make_tile_graph(const Graph& kernel);

/// Per value, the box one tile needs; nullopt when the tile does not need the value at all.
using Regions = std::vector<std::optional<Box>>;

/// Propagates the output box `tile` of the root backwards: each node's needed output box gives
/// the boxes of its inputs (interval evaluation of its index map, reduce axes whole); a value
/// read by several consumers needs the hull of their boxes (overlapping halos are recomputed).
/// Every graph output is written with the root's tile projected onto it (size-1 dims whole).
Regions propagate(const TileGraph& tg, const Box& tile);
/// The box of `output` (a graph output that follows the root's tiles) that the root's `tile`
/// writes: the tile, size-1 dims whole.
Box written_box(const TileGraph& tg, ValueId output, const Box& tile);

/// The box of input `slot` of node `n` for its output box `out` when each reduce axis r spans only
/// [starts[r], starts[r] + steps[r] - 1] (one reduce step; `starts` empty: from 0); `steps`
/// empty means whole reduce axes. A floordiv/mod map is
/// evaluated per point of the outer output dims (all but the innermost, up to 256 points) and
/// the results joined; a Reshape is evaluated per group of dims with equal products (exact
/// boxes where the map's generic bounds would mix rows). The whole input for a node without a map.
Box map_box(const TileGraph& tg, NodeId n, size_t slot, const Box& out,
            const std::vector<int64_t>& steps = {}, const std::vector<int64_t>& starts = {});

/// Elements of a box.
int64_t box_elements(const Box& box);

/// Bytes a box of a row-major tensor moves when each contiguous run is rounded up to whole
/// lines (Welder's coalescing rule): runs = product of the outer dims' sizes; a run spans the
/// innermost partial dim and every full dim inside it.
int64_t line_bytes(const Box& box, const Shape& shape, int64_t element_size, int64_t line);

/// How one kernel is tiled (plain data; the Halide backend maps it onto its schedule).
struct TileConfig {
  std::vector<int64_t> tile;  // output tile of the root, per dim
  /// Per node: the reduce step per reduce axis (empty for nodes without reduce axes).
  std::vector<std::vector<int64_t>> reduce_steps;
  /// Per value: the level of an intermediate (0 inlined, caches: computed per tile and kept
  /// there, last: materialized in memory); -1 for graph inputs, constants and outputs.
  std::vector<int> level;
  int vector_width = 1;   // elements per vector along the innermost output dim
  int parallel_dim = -1;  // output dim the tiles are parallelized over; -1 for a single tile
  /// The tiles along parallel_dim grouped into this many tasks of consecutive tiles (a few per
  /// core); 0: one task per tile.
  int parallel_tasks = 0;
  ValueId root = kNoValue;  // the output `tile` is over (TileGraph::root)
  int memory_level = -1;    // the machine's main-memory level (its last); -1: unknown
};

/// What a configuration costs.
struct TileCost {
  int64_t tiles = 0;
  int64_t waves = 0;  // ceil(tiles / cores)
  /// Per level: the peak bytes one tile keeps there (best-fit replay); 0 for registers and
  /// main memory.
  std::vector<int64_t> footprint;
  /// Per level: bytes all tiles move at that level (line-rounded); 0 for registers. A value
  /// materialized in main memory moves twice (written, read back), and the kernel inputs its
  /// pass reads (through inlined producers) are counted again.
  std::vector<int64_t> traffic;
  double cost_per_tile = 0;  // traffic weighted by bandwidth, in main-memory bytes, per tile
  double score = 0;          // (cost_per_tile + 1) * waves; lower is better
  bool fits = true;
  std::string reason;  // why not, when !fits
};

/// The number of tiles of `tile` over `shape`.
int64_t tile_count(const Shape& shape, const std::vector<int64_t>& tile);

/// The regions of one tile per position class of `tile` (first, one interior, last tile per
/// dim: with affine maps all interior tiles have the same region sizes, only borders clamp),
/// with the number of tiles each class stands for.
struct TileRegions {
  std::vector<int64_t> counts;
  std::vector<Box> tiles;  // of the root, per class
  std::vector<Regions> regions;
  size_t interior = 0;  // the class of a full-size interior tile
};
TileRegions tile_regions(const TileGraph& tg, const std::vector<int64_t>& tile);

/// Evaluates a configuration: footprint (of an interior tile) and traffic (summed
/// over all tiles) per level, the score, and whether the footprint fits every level that keeps
/// an intermediate and the `tile_level` (the level one tile's working set must fit).
TileCost evaluate(const TileGraph& tg, const Machine& machine, const TileConfig& config,
                  size_t tile_level);
/// The same with the tile's regions computed once (they do not depend on levels or steps).
TileCost evaluate(const TileGraph& tg, const Machine& machine, const TileConfig& config,
                  size_t tile_level, const TileRegions& tiles);

/// Work of one tile at tile index `index` (per dim): output elements of each node times its
/// reduce extent, summed over nodes. Used to find the base tile.
int64_t tile_work(const TileGraph& tg, const std::vector<int64_t>& tile,
                  const std::vector<int64_t>& index);

/// The output box of tile `index` (per dim) for tile sizes `tile` over `shape`.
Box tile_box(const Shape& shape, const std::vector<int64_t>& tile,
             const std::vector<int64_t>& index);

}  // namespace orch::schedule
