#include "driver/tune.h"

#include <fmt/format.h>
#include <map>
#include <numeric>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/kernel.h"
#include "driver/backend_check.h"
#include "driver/cuda_measure.h"
#include "driver/tuner.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/parallel.h"
#include "orchestrate/from_candidates.h"
#include "profile/measure.h"
#include "profile/roofline.h"

namespace orch::driver::tune_detail {

Tuner::Tuner(TunedModel& model, const TuneOptions& options)
    : model_(model),
      options_(options),
      machine_id_(measurement_key(options)),
      machine_(schedule::host_machine(options.machine_path)) {
  profiler_.jobs = options.jobs;
  profiler_.timeout_s = options.timeout_s;
  profiler_.measure.budget_ms = options.budget_ms;
  profiler_.measure.threads = options.threads;
  if (options.every_backend) profiler_.backends.library_decides = nullptr;
  // Twice the caches: whatever the replacement policy, none of the kernel's data survives.
  for (const schedule::MemoryLevel& l : machine_.levels)
    if (options.flush_cache) profiler_.measure.flush_bytes += 2 * l.capacity;
  profiler_.halide_configs = options.halide_configs;
  profiler_.machine = machine_;
  if (options.target == Target::cuda) {
    gpu_ = target_gpu(options.gpu);
    if (!options.analytic) measure_on_gpu();
  }
  // Analytic tuning reads and writes no measurements: it leaves the database alone.
  if (!options.analytic) db_.emplace(options.db_path);
}

void Tuner::measure_on_gpu() {
  const bool on_host = options_.cuda_measure_on_host;
  const runtime::CudaDriver* driver = options_.cuda_driver;
  // `gpu_` is the device already when it was described by its driver (--gpu this), and when it
  // runs on the host or on a driver given (trusted to be that GPU).
  schedule::GpuMachine device =
      on_host || driver || options_.gpu == kThisGpu ? *gpu_ : detect_gpu_in_child();
  check(device.cc_major == gpu_->cc_major && device.cc_minor == gpu_->cc_minor,
        "the GPU description '{}' is sm_{}{}, this machine's GPU '{}' sm_{}{}: measure with "
        "--gpu {}, or plan for '{}' with --compile-only",
        gpu_->name, gpu_->cc_major, gpu_->cc_minor, device.name, device.cc_major, device.cc_minor,
        kThisGpu, gpu_->name);
  const codegen::Backend& cuda = cuda_measure_backend(
      {.gpu = *gpu_, .libraries = options_.cuda_libraries, .on_host = on_host, .driver = driver});
  profiler_.backends = {.backends = {&cuda}, .fallback = nullptr, .library_decides = nullptr};
  profiler_.halide_configs = 0;
  // Not flushed: the host's caches are not the GPU's, whose L2 a kernel timed again finds warm.
  profiler_.measure.flush_bytes = 0;
  const codegen::CudaLibraries& libraries = options_.cuda_libraries;
  // The description sets the tile configs, so the code measured: named when not the GPU's own.
  machine_id_ = fmt::format("cuda {} sm_{}{}{}; libraries:{}{}{}", device.name, device.cc_major,
                            device.cc_minor,
                            gpu_->name == device.name ? "" : " as described by " + gpu_->name,
                            libraries.cublas ? " cublas" : "", libraries.cudnn ? " cudnn" : "",
                            on_host  ? "; run on the host"
                            : driver ? "; a driver given by the caller"
                                     : "");
}

void Tuner::run() {
  identify();
  say(fmt::format("identified {} candidate kernels in {:.1f} s", model_.problem.candidates.size(),
                  seconds_since(start_)));
  collect_unique();
  say(fmt::format("{} distinct kernels, {:.1f} s", unique_.size(), seconds_since(start_)));
  if (!options_.analytic) {
    phase_ = "new configurations";
    measure_new_configs();
    // Stored failures of kernels a plan needs whose fallback was never tried (a run killed in
    // between, or an older orch), after the new configurations: one of them may work.
    std::vector<size_t> stored(unique_.size());
    std::iota(stored.begin(), stored.end(), size_t{0});
    phase_ = "fallbacks";
    measure_fallbacks(stored);
    report_unworkable(stored);
  }
  if (options_.analytic)
    plan_analytically();
  else if (options_.exhaustive || !options_.fixed_kernels.empty())
    tune_exhaustively();
  else
    tune_lazily();
  if (!options_.analytic) recheck_plan();
  finish();
}

void Tuner::identify() {
  model_.dag = dag_of(model_.graph);
  IdentifyOptions identify;
  identify.enumeration.max_states = options_.max_states;
  FeasibilityRules rules;
  rules.max_primitives = options_.max_primitives;
  // backend_check keeps a kernel of several Linear primitives only as a oneDNN chain.
  if (options_.target == Target::cpu) rules.max_linear = options_.max_chain;
  identify.enumeration.feasible = feasibility_of(rules);
  identify.enumeration.generable = options_.target == Target::cuda
                                       ? cuda_backend_check(model_.graph)
                                       : backend_check(model_.graph);
  if (!options_.fixed_kernels.empty()) restrict_to_kernels(identify, options_.fixed_kernels);
  model_.kernels = identify_kernels(model_.dag, identify);
  std::vector<double> zero(global_candidates(model_.dag, model_.kernels).size(), 0.0);
  model_.problem = orchestration_problem(model_.dag, model_.kernels, zero);
}

void Tuner::collect_unique() {
  // Extraction and hashing on every core: tens of thousands of candidates on the CNNs, each
  // extracted once to hash and again when first of its kind.
  const std::vector<Candidate>& candidates = model_.problem.candidates;
  std::vector<std::string> hashes(candidates.size());
  parallel_for(candidates.size(), [&](size_t i) {
    auto [members, outputs] = kernel_parts(model_.graph, candidates[i]);
    hashes[i] = format_hash(
        structural_hash(codegen::extract_kernel(model_.graph, members, outputs), false));
  });
  std::map<std::string, size_t> by_hash;
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto [it, inserted] = by_hash.emplace(hashes[i], unique_.size());
    if (inserted) unique_.push_back({.hash = hashes[i], .label = candidates[i].label});
    unique_[it->second].candidates.push_back(i);
  }
  // The CPU target asks oneDNN whether it takes each kernel, building its primitives: on one
  // thread, as everywhere else in tuning. Built on two, a CI run's second tune of a model once
  // measured again (TuneTest.PlanIsValidAndSecondTuneMeasuresNothing); not reproduced since.
  // Analytic tuning prices each kernel at once. Then its graph goes (kernel_graph): YOLOX-Nano's
  // 193,917 CUDA kernels held 6 GB until planning.
  auto describe_and_price = [&](UniqueKernel& u) {
    describe(u);
    if (options_.analytic && gpu_) price_on_gpu(u, *gpu_, options_.cuda_libraries);
    if (options_.analytic && !gpu_) price_analytically(u, options_.analytic_call_us);
    u.kernel = Graph();
  };
  if (gpu_)
    parallel_for(unique_.size(), [&](size_t u) { describe_and_price(unique_[u]); });
  else
    for (UniqueKernel& u : unique_) describe_and_price(u);
  unique_of_.resize(model_.problem.candidates.size());
  for (size_t u = 0; u < unique_.size(); ++u)
    for (size_t i : unique_[u].candidates) unique_of_[i] = u;
  for (UniqueKernel& u : unique_) {
    if (!db_) break;
    std::vector<profile::TuningRecord> records = db_->find(u.hash, machine_id_);
    if (records.empty()) continue;
    u.kernel = kernel_graph(u);
    bool skip = fallback_only(u, records, profiler_.backends);
    if (!skip) apply_records(u, records, options_.relayout_convolutions);
    std::vector<codegen::KernelChoice> unmeasured =
        skip ? std::vector<codegen::KernelChoice>{} : unmeasured_choices(u, records);
    u.kernel = Graph();
    if (skip) continue;
    ++model_.stats.from_db;
    for (codegen::KernelChoice& choice : unmeasured) {
      new_config_ids_.push_back(static_cast<size_t>(&u - unique_.data()));
      new_configs_.push_back(std::move(choice));
    }
    const codegen::Backend* fallback = profiler_.backends.fallback;
    bool fallback_tried = std::any_of(records.begin(), records.end(), [&](const auto& r) {
      return fallback != nullptr && r.backend == fallback->name;
    });
    if (fallback_tried) tried_fallback_.insert(static_cast<size_t>(&u - unique_.data()));
  }
}

Graph Tuner::kernel_graph(const UniqueKernel& u) const {
  auto [members, outputs] =
      kernel_parts(model_.graph, model_.problem.candidates[u.candidates.front()]);
  return codegen::extract_kernel(model_.graph, members, outputs);
}

void Tuner::hold_graphs(const std::vector<size_t>& ids) {
  parallel_for(ids.size(), [&](size_t i) {
    UniqueKernel& u = unique_[ids[i]];
    if (u.kernel.num_nodes() == 0) u.kernel = kernel_graph(u);
  });
}

void Tuner::release_graphs(const std::vector<size_t>& ids) {
  for (size_t id : ids) unique_[id].kernel = Graph();
}

void Tuner::describe(UniqueKernel& u) const {
  const Candidate& c = model_.problem.candidates[u.candidates.front()];
  auto [members, outputs] = kernel_parts(model_.graph, c);
  Graph kernel = codegen::extract_kernel(model_.graph, members, outputs);
  u.outputs = output_types(kernel);
  u.bound_us = gpu_ ? cuda_lower_bound_us(kernel, *gpu_)
                    : profile::roofline_lower_bound_us(kernel, machine_);
  if (write_cost())
    u.write_us =
        profile::kernel_output_bytes(kernel) / (machine_.levels.back().bandwidth_gbs * 1e3);
  // Only measured tuning reads it (its kinds and epilogue batches): an analytic CUDA plan
  // asks cuda_cost_us, which finds the library call itself.
  u.library = gpu_ ? !options_.analytic && codegen::library_call_of(model_.graph, members, outputs,
                                                                    options_.cuda_libraries)
                                               .has_value()
                   : codegen::dnnl_backend().reject(kernel).empty();
  u.kind = kernel_kind(kernel, u.bound_us, u.library);
  u.primitives = static_cast<int>(c.primitives.size());
  u.linear = linear_primitives(kernel);
  u.narrow = profile::narrow_convolution(kernel);
  // A single op the CUDA generator lacks runs on the host: estimated, never measured.
  if (gpu_ && u.primitives == 1 && !cuda_kernel_reject(kernel).empty()) {
    u.known = u.rechecked = true;
    u.cost_us = cuda_host_us(kernel, machine_);
    u.choice = {.backend = "reference", .config = "", .cost_us = u.cost_us};
  }
  u.kernel = std::move(kernel);
}

KernelKind Tuner::kernel_kind(const Graph& kernel, double bound_us, bool library) const {
  bool compute_bound =
      gpu_ ? cuda_compute_bound(kernel, *gpu_)
           : profile::kernel_flops(kernel) / (profile::peak_gflops(machine_) * 1e3) >= bound_us;
  if (!compute_bound) return KernelKind::memory;
  return library ? KernelKind::library_compute : KernelKind::generated_compute;
}

void Tuner::finish() {
  model_.choices.assign(model_.problem.candidates.size(), {});
  for (const UniqueKernel& u : unique_) {
    if (!u.known) {
      ++model_.stats.pruned;
      continue;
    }
    if (u.cost_us == kInfinity) ++model_.stats.failed;
    for (size_t i : u.candidates) model_.choices[i] = u.choice;
  }
  model_.stats.candidates = static_cast<int64_t>(model_.problem.candidates.size());
  model_.stats.unique = static_cast<int64_t>(unique_.size());
  model_.stats.tuning_seconds = seconds_since(start_);
  std::string problem = check_plan(model_.problem, model_.plan);
  check(problem.empty(), "tuning produced an invalid plan: {}", problem);
}

}  // namespace orch::driver::tune_detail

namespace orch::driver {

std::string tuning_outcome(const TuneStats& stats, bool analytic) {
  if (stats.converged) return "";
  if (analytic) return " (analytic: estimated costs, nothing measured)";
  if (stats.estimate_converged)
    return " (the estimated phase converged, every kernel of the plan measured; not proven "
           "optimal: the exact phase was skipped or stopped at --exact-s)";
  return " (stopped by --max-rounds/--max-lazy-s: the best plan over the kernels measured so "
         "far; a rerun with a larger --max-lazy-s continues from the database)";
}

TunedModel tune_model(Graph primitive_graph, const TuneOptions& options) {
  TunedModel model;
  model.graph = std::move(primitive_graph);
  tune_detail::Tuner(model, options).run();
  return model;
}

}  // namespace orch::driver
