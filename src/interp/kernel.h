// Reference kernels: the executable definition of every op. Plain loops, double accumulation;
// correctness over speed.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace orch::interp {

struct KernelArgs {
  std::string_view op;
  const Attributes& attrs;
  /// One per input slot; undefined Tensor for an absent optional input.
  std::vector<Tensor> inputs;
  /// Preallocated, zero-filled, typed by the op's shape rule; the kernel fills them.
  std::vector<Tensor> outputs;
};

using Kernel = void (*)(KernelArgs& args);
using KernelTable = std::vector<std::pair<std::string_view, Kernel>>;

/// The kernel of `op`, or nullptr when none is registered.
Kernel find_kernel(std::string_view op);

}  // namespace orch::interp
