// Isolated, parallel measurement: each kernel is measured in a child process forked from the
// caller, so a backend that crashes or hangs costs that kernel, not the run.
//
// Design: the caller forks one child per kernel, up to `jobs` at once. A child decides which
// backends accept its kernel (profile/measure.h), compiles and checks each one, then asks the
// parent for the timing token over its socket; the parent hands the token to one child at a
// time, so compiles overlap but timings never do. Each result travels back as one line as soon
// as it is known. A child that dies by a signal yields "crashed: SIGSEGV" for the backend
// configuration it was working on; one that outlives its timeout (the wall clock counted while it
// compiles, and again while it holds the token; CPU time per backend configuration's compile and
// check, and again per its timing; the reference interpreter that computes the outputs to check
// against has its own, longer limit) is killed and yields "timeout after 10 s" for it. Either way
// a new child measures the kernel's configurations left (and the fallback, when none measured
// ok), so one bad configuration costs itself alone; the kernel is reported once, when its last
// child ends.
//
// Children are forked without exec, so they inherit the caller's memory (the kernel graphs and
// the backends, test backends included). The caller must not have initialized Halide's or
// oneDNN's thread pools (fork keeps only the calling thread): orch's parent process never runs
// a kernel itself; it only lets each backend prepare what every child would repeat
// (Backend::prepare_fork: Halide's JIT runtime, compiled once instead of once per child).
#pragma once

#include <chrono>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "codegen/choice.h"
#include "profile/measure.h"

namespace orch::profile {

struct ProfilerOptions {
  int jobs = 0;               // children at once; 0: the number of cores
  double timeout_s = 30;      // CPU seconds per configuration's compile, or timing (all threads)
  double wall_timeout_s = 0;  // per phase (compile, timing); 0: ten times timeout_s
  MeasureOptions measure;
  int halide_configs = 1;     // tile-search configurations measured besides Halide's default
  schedule::Machine machine;  // the tile search's machine (when halide_configs > 0)
  BackendSet backends = default_backends();
  /// No child starts after this time; the kernels not started by then are not measured and not
  /// reported (a caller's time budget). Children already started finish.
  std::chrono::steady_clock::time_point start_by = std::chrono::steady_clock::time_point::max();
};

/// Measures each kernel in its own child process with every accepting backend (and with the
/// fallback too when all of them fail to compile or to match the interpreter) and calls
/// `on_done(i, measurements)` in the caller as kernel i finishes (in completion order; never
/// an empty list; a kernel not started by options.start_by is not reported). With `pinned`
/// (one per kernel), kernel i is measured with pinned[i]'s backend (of `options.backends`) and
/// configuration alone. Throws Error only when no child can be started.
void profile_kernels(std::span<const Graph* const> kernels, const ProfilerOptions& options,
                     const std::function<void(size_t, std::vector<Measurement>)>& on_done,
                     std::span<const codegen::KernelChoice> pinned = {});

/// Whether a failure `reason` says that the child measuring the configuration died on it (timed
/// out, killed by a signal, exited non-zero: AddressSanitizer's reports exit), rather than that
/// a backend refused the kernel or its result mismatched: the configuration may work another
/// time, alone in its child.
bool child_died(std::string_view reason);

}  // namespace orch::profile
