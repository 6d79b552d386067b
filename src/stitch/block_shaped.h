// Private to src/stitch: a kernel that computes channel by channel, rewritten over tensors stored
// channel-blocked.
//
// A tensor of [N, C, spatial...] stored in blocks of B channels (oneDNN's nChw16c for B = 16) is,
// byte for byte, a row-major tensor of the block shape [N, C/B, S, B] (S the product of the
// spatial dims). A kernel of elementwise nodes, scalars and per-channel constants broadcast, and
// channel concats of whole blocks means the same over block shapes, with each per-channel
// constant P rearranged as [1, C/B, 1, B]: so YOLOX's bias + SiLU kernels after a convolution can
// read and write its blocked tensors (compiled for the block shapes, with the default schedule).
#pragma once

#include <optional>

#include "ir/graph.h"

namespace orch::stitch {

/// Whether a tensor of `shape` ([N, C, spatial...], rank 3 to 5) has whole blocks of `block`
/// channels: only then does it take as many bytes channel-blocked as plain.
bool whole_channel_blocks(const Shape& shape, int64_t block);

/// [N, C/block, S, block] for a tensor of [N, C, spatial...] (C a multiple of `block`).
Shape block_shape(const Shape& shape, int64_t block);

/// `kernel` (an extracted kernel: every constant a constant) over the block shapes of its
/// inputs and outputs, keeping their names and order; nullopt when some node does not compute
/// channel by channel or some input or output is not of whole blocks of `block`.
std::optional<Graph> block_shaped_kernel(const Graph& kernel, int64_t block);

}  // namespace orch::stitch
