// Estimated costs of unmeasured kernels, fitted to the kernels measured so far on this machine.
// The lazy tuner's first phase plans with them (tune.h): realistic estimates let it converge in a
// few rounds, where the roofline lower bounds alone (optimistic by design) make every unmeasured
// fused kernel look like a win worth measuring.
#pragma once

#include <span>

namespace orch::driver {

/// Kernels reach their roofline bounds at very different efficiencies: memory-bound ones, compute-
/// bound ones a library (oneDNN) generates, and compute-bound ones only Halide generates (a
/// MatMul fused with what oneDNN cannot fuse). Each kind has its own slope.
enum class KernelKind { memory = 0, library_compute = 1, generated_compute = 2 };
inline constexpr int kKernelKinds = 3;

/// One measured kernel.
struct CostSample {
  double bound_us = 0;  // roofline lower bound
  double cost_us = 0;   // measured
  KernelKind kind = KernelKind::memory;
  int primitives = 1;
};

/// cost ≈ call_us + slope[kind] * bound_us + per_primitive_us * (primitives - 1).
struct CostEstimate {
  double call_us = 0;  // per-call overhead: the fastest measured kernel
  /// Median (cost - call_us) / bound of the kind's single-primitive kernels (of all its kernels
  /// when no single one is measured), at least 1; a kind with no sample takes the largest slope
  /// of the others (1 when nothing is known).
  double slope[kKernelKinds] = {1.0, 1.0, 1.0};
  /// What each fused primitive adds beyond its share of the bound (loop nests, reductions,
  /// recomputation): the median over measured fused kernels; 0 until one is measured.
  double per_primitive_us = 0;
};

/// Fits the estimate to `samples` (finite costs only; an empty list gives the roofline + 0).
CostEstimate fit_cost_estimate(std::span<const CostSample> samples);

double estimate_cost_us(const CostEstimate& estimate, double bound_us, KernelKind kind,
                        int primitives = 1);

}  // namespace orch::driver
