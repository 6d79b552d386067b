// Private to src/stitch: which intermediates a CPU module stores channel-blocked.
//
// A oneDNN convolution kernel measured in the blocked layout (nChw16c with AVX-512) reorders its
// plain source into it and its result back, and the next convolution reorders it in again: on
// YOLOX-Nano at one thread, 80 reorders per run cost 0.85 ms of 10 (ONNX Runtime, which keeps
// its NCHWc layout across the network, runs 9). So after the plan is laid out, a tensor between
// kernels is stored blocked where every kernel touching it can take it that way: a oneDNN
// kernel that reads or writes it whole in the blocked layout (codegen::dnnl_blocked_ports), or
// a kernel whose meaning does not depend on the layout (elementwise over same-shape tensors,
// scalars broadcast, a channel concat of whole blocks), which then stores all its tensors so, or
// a Halide kernel that computes channel by channel (per-channel constants broadcast too), then
// rewritten over the block shapes of its tensors (block_shaped.h).
// The plan's costs were measured with the reorders; the module is faster than the plan says.
#pragma once

#include "ir/graph.h"
#include "stitch/module_layout.h"

namespace orch::stitch {

/// Stores blocked every arena tensor of `layout` that its kernels allow (see above), adding the
/// stored-blocked ports to its oneDNN kernels' configurations and rewriting the Halide kernels
/// that need block shapes (before they are compiled); `graph` is the primitive graph the kernels
/// were extracted from. Returns how many tensors are stored blocked.
///
/// With `relayout_convolutions`, every oneDNN kernel tuned in the model's layout whose output is
/// of whole blocks moves to the blocked layout first. Tuned alone it paid no reorders and would
/// have paid two blocked, so the plan never picks it blocked; next to neighbours that store
/// blocked it pays none, and may be the faster. YOLOX-Nano at one thread: its 1x1 convolutions
/// at 104x104 ran 5-40% slower so, its chains of a depthwise and a 1x1 convolution 10-30% faster,
/// the module 3% faster (15.35 against 15.75 ms, A/B in 7 rounds); EfficientViT-B1, which the
/// plan runs mostly blocked already, see module_rounds.h. Not every kernel gains, but the modules
/// do: `orch optimize` asks for it (StitchOptions::relayout_convolutions) unless told
/// --no-relayout-convolutions, after a zoo bench where every model was faster than ONNX Runtime
/// with it at 1 and 2 threads; without it, module rounds try it and keep it where the module is
/// faster.
int store_blocked_between_kernels(const Graph& graph, ModuleLayout& layout,
                                  bool relayout_convolutions);

/// Whether `kernel` computes the same whatever the channel-blocked layout of `block` its
/// non-scalar inputs and outputs are stored in (all in the same one): every node elementwise,
/// a broadcast scalar, or a concat along the channels of whole blocks.
bool layout_oblivious(const Graph& kernel, int64_t block);

}  // namespace orch::stitch
