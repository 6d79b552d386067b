// What every code generator produces and consumes.
//
// A candidate kernel reaches a backend as a standalone Graph (extract_kernel): its primitives,
// its external inputs as graph inputs (constants stay constants, sharing their data), and its
// output set as graph outputs. A backend judges that graph, compiles it, and the compiled kernel
// must compute what the interpreter computes on the same graph.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace orch::codegen {

/// The kernel computing `members` (nodes of `graph`, convex) and writing `outputs` (values they
/// produce). Inputs are the values members read that other nodes or the graph's inputs produce,
/// in first-use order; constants are copied in as constants (sharing their buffers).
Graph extract_kernel(const Graph& graph, std::span<const NodeId> members,
                     std::span<const ValueId> outputs);

/// extract_kernel, except that constants of `min_bytes` bytes or more become kernel inputs (in
/// the same first-use order), unless an op needs them constant (its schema's constant_inputs):
/// a compiled module passes them from its weights file instead of baking them into the code.
/// Value ids are those extract_kernel gives, so a schedule written for one fits the other.
Graph extract_kernel_with_weight_inputs(const Graph& graph, std::span<const NodeId> members,
                                        std::span<const ValueId> outputs, int64_t min_bytes);

/// "" when `kernel` has outputs and every value has at least one and fewer than 2^31 elements
/// (generated code indexes tensors with 32-bit extents), otherwise why not: the checks every
/// generator's reject starts with.
std::string reject_kernel_sizes(const Graph& kernel);

/// The position of `v` among `kernel`'s inputs, or -1 when it is not one (a constant, or a value
/// the kernel computes).
int kernel_input_index(const Graph& kernel, ValueId v);

/// A compiled kernel, ready to run many times.
class Kernel {
 public:
  virtual ~Kernel() = default;
  /// Runs on `inputs` (one per kernel-graph input, in order) and fills `outputs` (one per
  /// kernel-graph output, preallocated with their types). Throws Error on a wrong input.
  virtual void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) = 0;
  /// A kernel on a device times itself: the device time of each of `runs` runs on the inputs of
  /// the last run(), in microseconds, after one warm-up (CUDA events around the launches, not
  /// the copies run() makes). Empty for a host kernel, which the caller times on the wall clock.
  virtual std::vector<double> device_times_us(int runs) {
    (void)runs;
    return {};
  }
};

/// A code generator.
struct Backend {
  std::string_view name;
  /// "" when the backend can generate `kernel`, otherwise why it cannot (shown to users).
  std::string (*reject)(const Graph& kernel);
  /// Compiles an accepted kernel; compile failures throw Error with the reason.
  std::unique_ptr<Kernel> (*compile)(const Graph& kernel);
  /// Optional, run once in a process before it forks compiling children: work each child
  /// would otherwise repeat (Halide builds its JIT runtime, ~0.4 s, on the first compile).
  void (*prepare_fork)() = nullptr;
};

}  // namespace orch::codegen
