// Where a block's staged values lie (issue #15): the box of each value a block of a GPU tile
// config copies into shared memory, as a function of the block's index, for the generated code.
//
// A value's region for block index b (per root dim) and reduce step index s (per reduce axis of
// the stepped reduction, when the config stages one reduce step at a time) is taken to start at
// an affine origin,
//   origin[j] = offset[j] + sum_d step[j][d] * b[d] + sum_a reduce_step[j][a] * s[a],
// measured between interior blocks and steps, and to span `size` elements per dim. The rule is
// checked on the first two and last two blocks of every dim and steps of every reduce axis,
// where clamping at the edges and partial blocks change a region: the true region must lie
// inside the affine box there. Positions of the box outside the value are never read
// (consumers clamp their coordinates into the value).
//
// Example: MatMul f32 [64,32]x[32,64] with block tile 16x16: A's region is rows 16*b0 .. +15,
// all 32 columns: offset {0,0}, step {{16,0},{0,0}}, size {16,32}; B's is offset {0,0},
// step {{0,0},{0,16}}, size {32,16}.
#pragma once

#include <cstdint>
#include <vector>

#include "schedule/gpu/gpu_tiles.h"

namespace orch::schedule {

struct StagedRegion {
  ValueId value = kNoValue;
  std::vector<int64_t> offset;                    // per value dim
  std::vector<std::vector<int64_t>> step;         // [value dim][root dim]
  std::vector<std::vector<int64_t>> reduce_step;  // [value dim][reduce axis]; all 0: not stepped
  std::vector<int64_t> size;                      // per value dim
  /// Whether the origin moves with the reduce step (the value is copied once per step).
  bool stepped() const;
};

/// How the generated code lays out a block's shared memory, which the model counts the same way.
/// The row pitch, in elements, of the array holding a box of `size` elements of `esize` bytes:
/// a 4-byte type's rows of an even length get one element more, an odd pitch, so that threads
/// reading the same column of different rows (a MatMul operand across a warp's rows) hit
/// different banks.
int64_t staged_pitch(const std::vector<int64_t>& size, int64_t esize);
/// Bytes the array takes: its rows at that pitch, rounded up to 16 (every array starts aligned
/// for any element type and a 16-byte vector of them).
int64_t staged_array_bytes(const std::vector<int64_t>& size, int64_t esize);
/// Bytes of the array in which a group of lanes wider than a warp combines its warps' partials
/// (8 bytes per warp of a block of `threads`), which a computed value takes besides its own.
int64_t partials_bytes(int64_t threads, int64_t warp_size);

/// Per value of the kernel, whether its region can move affinely with the block, which the
/// generated code's staging needs (staged_regions, which still checks the blocks: the hull of
/// two readers' regions moving at different strides does not): whether every primitive on a
/// path from it to a kernel output maps its output's box to its inputs' by a fixed stride. Not so
/// for the inputs of a Concat, Resize, Gather, GatherElements, Tile, ConvTranspose, a grouped
/// Conv that is not depthwise, a reflecting Pad or a Reshape that splits dims, nor for what they
/// are computed from; their outputs (a MatMul operand made by a Concat) still can.
std::vector<bool> affinely_placed(const TileGraph& tg);

/// The staged values of `config` (staged_values) and those `computed` marks (values the block
/// computes itself into shared memory; empty: none), in value order, with their regions. With
/// config.reduce_step > 0, `stepped` is the one reduction whose reduce axes the generated code
/// walks a step at a time (its consumers' other reductions read their inputs whole); kNoNode
/// then stages nothing. A value whose region need not move affinely (affinely_placed), or breaks
/// the affine rule at some checked block or step, is left out (read from memory).
std::vector<StagedRegion> staged_regions(const TileGraph& tg, const GpuTileConfig& config,
                                         NodeId stepped = kNoNode,
                                         const std::vector<bool>& computed = {});

}  // namespace orch::schedule
