// Baseline fusion policies for the benchmark's comparison rows, as fixed kernels over the
// primitive graph: orchestration then has exactly one way to cover the graph.
//   operator: one kernel per ONNX operator (its fission primitives together), no fusion across
//             operators: what a library-per-operator runtime does;
//   greedy:   rule-based fusion in the style of TVM's FuseOps: an operator made only of
//             elementwise, broadcast and layout primitives (injective) joins the kernel of the
//             operator right before it when it reads that kernel's result and a backend can
//             generate the union (oneDNN, as post-ops, when the kernel holds a MatMul or a
//             convolution); everything else starts a new kernel.
// Both need the fission report's origin (primitive -> operator), so they apply to the primitive
// graph before any rewrite.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "candidates/candidates.h"
#include "ir/graph.h"

namespace orch::driver {

enum class FusionPolicy { full, greedy, operator_ };

/// "full", "greedy" or "operator"; throws Error listing the names otherwise.
FusionPolicy parse_fusion_policy(std::string_view name);
std::string_view fusion_policy_name(FusionPolicy policy);

/// A kernel of a fixed policy: the primitives [begin, end) of the primitive graph.
struct KernelRange {
  int begin = 0;
  int end = 0;
  bool operator==(const KernelRange&) const = default;
};

/// One kernel per maximal run of primitives with the same origin.
std::vector<KernelRange> operator_kernels(std::span<const NodeId> origin);

/// The greedy policy's kernels (see above).
std::vector<KernelRange> greedy_kernels(const Graph& primitives, std::span<const NodeId> origin);

/// Makes kernel identification produce exactly `kernels`: a cut after each, no automatic cuts,
/// and only whole kernels kept (a kernel no backend generates runs on the reference backend).
void restrict_to_kernels(IdentifyOptions& options, std::vector<KernelRange> kernels);

}  // namespace orch::driver
