// A roofline lower bound on a kernel's latency, from the machine model: the larger of its
// arithmetic at peak and its unavoidable traffic (inputs read once, outputs written once) at the
// bandwidth of the smallest memory level that holds it. Generous on purpose (a peak above the
// real one, bandwidth times cores times two): the lazy tuner and --prune rely on it never
// exceeding a measured latency.
#pragma once

#include "ir/graph.h"
#include "schedule/machine.h"

namespace orch::profile {

/// How many elements of each input one output element of `node` reads: the product of its
/// index map's reduce extents (K for a MatMul, Cin/group·kh·kw for a Conv), 1 without any.
double reduce_volume(const Graph& graph, const Node& node);

/// Arithmetic of one output element of `node`: its reduce volume, doubled for Linear
/// primitives (multiply and add).
double flops_per_element(const Graph& graph, const Node& node);

/// Arithmetic of a kernel graph: each node's output elements times flops_per_element.
double kernel_flops(const Graph& kernel);

/// Bytes of the kernel's inputs (constants included) and outputs.
double kernel_unavoidable_bytes(const Graph& kernel);

/// Bytes of the kernel's outputs.
double kernel_output_bytes(const Graph& kernel);

/// An optimistic peak in GFLOP/s: cores x SIMD lanes (f32) x 2 FMA units x 2 x 5 GHz.
double peak_gflops(const schedule::Machine& machine);

/// The lower bound in microseconds.
double roofline_lower_bound_us(const Graph& kernel, const schedule::Machine& machine);

}  // namespace orch::profile
