// The tuner's unit of measurement: a distinct kernel (structure, output set) whose candidates
// share one measurement, and how its database records and keys are formed.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/choice.h"
#include "driver/cost_estimate.h"
#include "driver/tune.h"
#include "ir/graph.h"
#include "orchestrate/orchestrate.h"
#include "profile/measure.h"
#include "profile/tuning_db.h"
#include "schedule/machine.h"

namespace orch::driver {

// A distinct kernel (structure, output set): its candidates share one measurement.
struct UniqueKernel {
  Graph kernel;  // held while it is measured or its records read (Tuner::kernel_graph)
  std::string hash;
  std::string outputs;  // output types, the database's output-set column
  std::string label;
  std::vector<size_t> candidates;
  double bound_us = 0;  // roofline lower bound
  // Its outputs at main-memory bandwidth (TuneOptions::write_cost), added to its BLP cost. A
  // kernel timed alone rewrites the same buffer, which stays in cache; in a module every kernel
  // writes fresh arena memory that later kernels read. In YOLOX-Nano's module (2 threads, `orch
  // run --profile`) Halide kernels took their tuned time plus 0.055-0.061 us per KB written
  // (main memory copies at 27 GB/s here: 0.037 us per KB), its 81 lone constant Broadcasts 15 us
  // against 3.1 tuned. Without the term plans split kernels that a module runs faster fused.
  // Zero at one kernel thread (TuneOptions::write_cost).
  double write_us = 0;
  KernelKind kind = KernelKind::memory;
  int primitives = 1;
  int linear = 0;        // Linear primitives; more than one: a oneDNN convolution chain
  bool library = false;  // oneDNN accepts it
  bool narrow = false;   // profile::narrow_convolution
  bool known = false;    // measured, in this run or before
  double cost_us = std::numeric_limits<double>::infinity();
  codegen::KernelChoice choice;
  bool rechecked = false;  // the choice's time is a recheck (profile::TuningRecord::recheck_us)
  std::string failure;     // "backend: reason" of a failed record, kept while none worked
};

/// The kernel's output types, the database's output-set column ("f32[1,8];f32[4]").
std::string output_types(const Graph& kernel);

/// The nodes of candidate `c` and the values it writes.
std::pair<std::vector<NodeId>, std::vector<ValueId>> kernel_parts(const Graph& graph,
                                                                  const Candidate& c);

/// The database record of measuring `u` on `machine` (a measurement_key).
profile::TuningRecord record_of(const UniqueKernel& u, const std::string& machine,
                                const profile::Measurement& m);

/// Applies stored or fresh records to `u`: the fastest working configuration wins, each timed by
/// its recheck when it has one (profile::TuningRecord::recheck_us). With `relayout` (the module's
/// convolutions relaid out, stitch::StitchOptions), a oneDNN configuration measured blocked is
/// priced without its reorders (blocked_reorder_us).
void apply_records(UniqueKernel& u, const std::vector<profile::TuningRecord>& records,
                   bool relayout);

/// The reorders a oneDNN kernel measured channel-blocked pays for its activations of whole
/// channel blocks, into the blocked layout and back: a module that relays out its convolutions
/// (blocked_layout.h) stores those blocked next to blocked neighbours, and the reorders vanish.
double blocked_reorder_us(const Graph& kernel);

/// What `u`, a kernel known from the database, was never measured in and a later orch offers:
/// oneDNN configurations (codegen::dnnl_configs) when oneDNN worked in one or one was killed (a
/// timeout or a crash: before the profiler restarted such children, the kernel's configurations
/// after it went unmeasured), and Halide's default schedule when it is a narrow convolution
/// (profile::narrow_convolution) that only oneDNN measured. Without them a database filled by an
/// older orch would never measure them.
std::vector<codegen::KernelChoice> unmeasured_choices(
    const UniqueKernel& u, const std::vector<profile::TuningRecord>& records);

/// Per primitive of `problem`, the fastest measured kernel of it alone, write cost included
/// (infinite when none works or none was measured yet).
std::vector<double> cheapest_alone(const std::vector<UniqueKernel>& unique,
                                   const OrchestrationProblem& problem);

/// `c`'s primitives run one kernel each: the sum of their cheapest_alone costs.
double unfused_us(const std::vector<double>& alone, const Candidate& c);

/// Up to `count` unmeasured kernels not in `skip`, those with the largest saving over running
/// their primitives one kernel each (cheapest_alone), their own cost estimated with `fit`; best
/// first.
std::vector<size_t> most_promising(const std::vector<UniqueKernel>& unique,
                                   const OrchestrationProblem& problem, const CostEstimate& fit,
                                   const std::vector<size_t>& skip, size_t count);

/// The unmeasured kernels of Linear primitives and epilogues oneDNN takes as post-ops (a
/// convolution with its bias and activation, or a chain of them), of at most 8 primitives per
/// Linear one. The lazy search estimates them like any fusion and may never measure them:
/// candy's residual convolutions ran alone (8,058 us) and their biases in other kernels, while
/// the convolution with its bias takes 5,314 us. Measured up front, oneDNN alone (a quick
/// compile; Halide's convolutions are its slowest, and it never takes a chain), they are what
/// the estimates of library kernels are fitted to.
std::vector<size_t> library_epilogues(const std::vector<UniqueKernel>& unique);

/// A batch of kernels the lazy search measures before its first round.
struct EpilogueBatch {
  std::string phase;          // for progress lines
  std::vector<size_t> ids;    // unique kernels
  bool library_only = false;  // measured with oneDNN alone (ProfilerOptions::backends)
};

/// The epilogues measured before the lazy rounds, in order: library_epilogues with oneDNN alone,
/// except narrow convolutions' (profile::narrow_convolution) with every backend, as Halide's are
/// faster there; then epilogue_tails with every backend.
std::vector<EpilogueBatch> epilogue_batches(const std::vector<UniqueKernel>& unique,
                                            const std::vector<size_t>& unique_of,
                                            const OrchestrationProblem& problem,
                                            const Graph& graph);

/// The unmeasured kernels of a library epilogue's elementwise part alone: for each oneDNN
/// kernel of one Linear primitive and its epilogue (known or not), the candidates of the same
/// primitives less the Linear one. The other way to run that epilogue is the Linear primitive
/// alone plus these, and the lazy search measured them late or never: YOLOX-Nano's plan kept
/// convolutions with SiLU as a oneDNN post-op (328 us at 1 thread for 16->32 channels at
/// 104x104) after 49 minutes of tuning, where the convolution alone (115 us) and Halide's bias
/// and SiLU (103 us) take 218; oneDNN's swish post-op costs more than a pass of its own there.
std::vector<size_t> epilogue_tails(const std::vector<UniqueKernel>& unique,
                                   const std::vector<size_t>& unique_of,
                                   const OrchestrationProblem& problem, const Graph& graph);

/// The model's identity for the lazy search's budget (profile::TuningDb::lazy_seconds): its
/// distinct kernels, in a stable order, and the objective searched (a search under another
/// objective does not count).
std::string model_key(const std::vector<UniqueKernel>& unique, bool write_cost);

/// Whether `records` (u's, none empty) are the fallback's alone while a backend of `backends`
/// accepts u: its other records were pruned (`orch db prune --failed` after timeouts) or never
/// written, so u is measured again instead of planned at the fallback's time (Segformer-B0 at
/// batch 16 kept its stem convolution at 1.9 s in the reference this way, 22 ms in oneDNN).
bool fallback_only(const UniqueKernel& u, const std::vector<profile::TuningRecord>& records,
                   const profile::BackendSet& backends);

/// Analytic cost (TuneOptions::analytic), nothing measured: on the CPU the kernel's roofline
/// bound plus `call_us`, in the first backend that accepts it.
void price_analytically(UniqueKernel& u, double call_us);

/// Analytic CUDA cost (cuda_cost_us) on `gpu` of a kernel generated as CUDA C; a host kernel,
/// priced already (Tuner::describe), keeps its estimate.
void price_on_gpu(UniqueKernel& u, const schedule::GpuMachine& gpu,
                  const codegen::CudaLibraries& libraries);

/// The database's machine column: this machine, plus how it was measured when not the default.
std::string measurement_key(const TuneOptions& options);

}  // namespace orch::driver
