// Measuring one candidate kernel with one backend, in this process: compile, check the outputs
// against the interpreter on random inputs, then warm up and time runs to a budget.
// profile/profiler.h runs these in child processes; call this directly only for kernels that
// cannot crash or hang the caller (tests, the reference backend).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "ir/graph.h"
#include "schedule/machine.h"

namespace orch::profile {

struct MeasureOptions {
  double budget_ms = 20;  // timed runs continue until this much time is spent...
  int min_runs = 3;       // ...and at least this many ran
  int max_runs = 10000;
  double rtol = 1e-3;  // the check: |got - want| <= atol + rtol * |want|
  double atol = 1e-4;
  uint64_t seed = 1;  // random inputs
  /// Kernel threads (Halide's pool, oneDNN's OpenMP); 0: their default, one per core. Set
  /// before a process runs its first kernel (pin_kernel_threads).
  int threads = 0;
  /// > 0: this many bytes are written between timed runs, outside the timing, so every run
  /// starts with cold caches (as a kernel does after a large neighbour in a model); 0: warm.
  int64_t flush_bytes = 0;
};

/// Sets the thread count of the backends' thread pools for this process: HL_NUM_THREADS, which
/// Halide's pool reads when it starts, and OpenMP's omp_set_num_threads when oneDNN's OpenMP is
/// loaded. No effect for 0 or after Halide's pool has started.
void pin_kernel_threads(int threads);

/// The result of one backend configuration on one kernel.
struct Measurement {
  std::string backend;
  std::string config;
  bool ok = false;
  std::string reason;  // why it failed: compile error, mismatch, crash, timeout
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int runs = 0;
  double compile_s = 0;
};

/// The backends a kernel is measured with: each one of `backends` that accepts it (reject
/// returns ""), or `fallback` alone when none does.
struct BackendSet {
  std::vector<const codegen::Backend*> backends;
  const codegen::Backend* fallback = nullptr;
  /// A library whose verdict is final on a kernel of one primitive or of several Linear ones
  /// (narrow convolutions aside): when it accepts, the other backends are not measured. A lone
  /// MatMul or Conv is what oneDNN is built for, and Halide's register-blocked convolutions are its
  /// slowest compiles (5-30 s, most of a CNN's tuning time); a chain of convolutions is oneDNN's
  /// alone (Halide's schedules tile one reduction nest per kernel). Null: every accepting backend
  /// is measured.
  const codegen::Backend* library_decides = nullptr;
};

/// Whether `kernel` holds an ungrouped convolution of fewer than 8 output channels. oneDNN
/// computes output channels in vector blocks (16 with AVX-512) and wastes the rest of the block;
/// Halide's register block runs along the output row instead. Candy's last convolution (32 -> 3
/// channels, 9x9, with its bias) took 28.1 ms in oneDNN and 6.4 ms in Halide on one thread of an
/// AMD EPYC with AVX-512. So the library does not decide these alone.
bool narrow_convolution(const Graph& kernel);

/// dnnl and halide, with the reference backend as the fallback; dnnl decides single primitives.
BackendSet default_backends();

/// The backends of `set` that accept `kernel` (the fallback when none does).
std::vector<const codegen::Backend*> accepting_backends(const BackendSet& set, const Graph& kernel);

/// The schedule texts (halide_schedule_to_text) of the tile search's best `count`
/// configurations for `kernel`, without duplicates; measured besides the default schedule.
/// Throws Error when the kernel has no tile graph.
std::vector<std::string> halide_configs(const Graph& kernel, const schedule::Machine& machine,
                                        int count);

/// A compiled kernel with its reference outputs, ready to be timed.
struct PreparedKernel {
  std::unique_ptr<codegen::Kernel> kernel;
  std::vector<Tensor> inputs;
  Measurement result;  // backend, config and compile_s filled; ok false with reason on failure
};

/// Compiles `kernel` with `backend` and checks its outputs against `reference` (the
/// interpreter's outputs on `inputs`). Never throws: failures are in result.reason.
PreparedKernel prepare(const Graph& kernel, const codegen::Backend& backend,
                       const std::string& config, std::span<const Tensor> inputs,
                       std::span<const Tensor> reference, const MeasureOptions& options);

/// Times a prepared kernel (warm-up, then runs to the budget) and fills its statistics.
void time_kernel(PreparedKernel& prepared, const Graph& kernel, const MeasureOptions& options);

/// prepare + time_kernel on random inputs (in this process). A non-empty `config` is a Halide
/// schedule text (the halide backend only).
Measurement measure(const Graph& kernel, const codegen::Backend& backend, const std::string& config,
                    const MeasureOptions& options);

/// "" when each output matches within the tolerances, otherwise "output 0 'y': max error 0.5
/// at element 3 (got 1, want 1.5)" for the first mismatching output.
std::string compare_outputs(const Graph& kernel, std::span<const Tensor> got,
                            std::span<const Tensor> want, double rtol, double atol);

}  // namespace orch::profile
