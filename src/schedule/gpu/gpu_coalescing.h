// Coalescing of a block's global memory accesses (part of Welder's GPU configs, gpu_tiles.h):
// which element each thread of a warp touches, through the index maps from the root output
// back to every value, and how many 32-byte sectors the warp's access needs.
//
// Example: a warp reading 32 consecutive f32 touches 128 bytes in 4 sectors (the minimum); a
// warp reading a column of a row-major f32 [N, N] (a transposed read) touches one sector per
// thread, 32 sectors for the same 128 useful bytes: 8 times the traffic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "schedule/tile_graph.h"

namespace orch::schedule {

/// Sectors touched by accesses of `access_bytes` bytes at each byte offset, the distinct bytes
/// they use, and the fewest sectors those bytes could fit in.
struct WarpSectors {
  int64_t touched = 0;
  int64_t bytes = 0;
  int64_t minimum = 0;
};
WarpSectors warp_sectors(std::span<const int64_t> offsets, int64_t access_bytes, int64_t sector);

/// Row-major flat index of `point` in `shape`.
int64_t flat_index(const Shape& shape, const std::vector<int64_t>& point);

/// Per value, the element that the thread computing root element `root_point` accesses first
/// (reduce axes at 0, data-dependent coordinates at 0, clamped into the value); empty where no
/// index map leads from the root.
std::vector<std::vector<int64_t>> point_map(const TileGraph& tg,
                                            const std::vector<int64_t>& root_point);

/// The points of one warp: for each thread of the first warp of the block at `lo`, point_map
/// at the start of its thread tile; and for thread 0, one step further along the innermost dim
/// (to see whether its run there is contiguous). Threads are numbered row-major over the thread
/// grid (block / thread per dim), the innermost dim fastest.
struct WarpPoints {
  std::vector<std::vector<std::vector<int64_t>>> threads;
  std::vector<std::vector<int64_t>> next;  // empty when the thread tile's innermost dim is 1
};
WarpPoints warp_points(const TileGraph& tg, const std::vector<int64_t>& block,
                       const std::vector<int64_t>& thread, const std::vector<int64_t>& lo,
                       int warp_size);

/// The box of the root output that the thread tiles of the first warp of the block at `lo`
/// cover (threads numbered as in warp_points).
Box warp_box(const std::vector<int64_t>& block, const std::vector<int64_t>& thread,
             const std::vector<int64_t>& lo, int warp_size);

/// One warp's access to a value: byte offsets, and the bytes each thread loads at once.
struct WarpAccess {
  std::vector<int64_t> offsets;
  int64_t access_bytes = 0;
};

/// A thread loads at most 16 bytes in one instruction (ld.global.v4.f32).
constexpr int64_t kMaxVectorBytes = 16;

/// A direct access of `v` (global memory to registers): each thread at the start of its thread
/// tile; a run of `inner` elements along the innermost dim that stays contiguous in `v` is one
/// vector load of up to kMaxVectorBytes.
WarpAccess direct_access(const Graph& g, const WarpPoints& w, int64_t inner, ValueId v);

/// A cooperative copy of `box` into shared memory: consecutive threads take consecutive
/// elements of the box, row-major.
WarpAccess staged_access(const Box& box, const Shape& shape, int64_t esize, int warp_size);

}  // namespace orch::schedule
