// A tensor of [N, C, spatial...] stored in blocks of B channels, the innermost dim (oneDNN's
// nChw16c for B = 16): element (n, c, x) at ((n * C/B + c/B) * X + x) * B + c % B, X the
// spatial size. The module stores tensors so between kernels that read them that way
// (stitch/blocked_layout.h); these convert, for tuning and for hooks that see plain values.
#pragma once

#include "ir/tensor.h"

namespace orch::codegen {

/// `plain` stored in blocks of `block` channels (its shape unchanged; C a multiple of `block`).
Tensor to_channel_blocks(const Tensor& plain, int64_t block);

/// The row-major tensor that `blocked` (as to_channel_blocks wrote it) stores.
Tensor from_channel_blocks(const Tensor& blocked, int64_t block);

}  // namespace orch::codegen
