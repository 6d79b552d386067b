// The search's analytic cost model (until measured costs replace it): a primitive costs
// max(FLOPs / peak, bytes / bandwidth) plus a small per-node overhead, summed over the graph.
//
// Bytes follow Korch's fusion (§3, Fig. 2c): a layout primitive (Reshape, Transpose, Slice,
// Concat, Pad, ...) costs only the node overhead, because orchestration fuses it into a
// neighbouring kernel that pays for the elements it reads or writes (kernels ② and ④); a
// Broadcast is read through by its consumer, so it costs its input; every other primitive reads
// its inputs and writes its output.
#pragma once

#include <functional>

#include "ir/graph.h"

namespace orch::rewrite {

/// Plain machine numbers (the schedule library's machine model can supply them).
struct CostOptions {
  double peak_gflops = 500;
  double dram_gbps = 20;
  /// Added per node: ties go to fewer primitives.
  double node_overhead_us = 0.1;
};

/// The work of one node.
struct NodeWork {
  double flops = 0;
  double bytes = 0;
};

NodeWork node_work(const Graph& graph, NodeId node);
/// Microseconds.
double node_cost(const Graph& graph, NodeId node, const CostOptions& options);
/// Sum of node costs, in microseconds.
double analytic_cost(const Graph& graph, const CostOptions& options = {});

/// A graph cost; the search takes any (measured costs can replace the analytic model).
using CostFn = std::function<double(const Graph&)>;

}  // namespace orch::rewrite
