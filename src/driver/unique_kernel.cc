#include "driver/unique_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_backend.h"
#include "driver/cuda_target.h"
#include "ir/hash.h"
#include "ir/hash_util.h"
#include "ir/op_registry.h"
#include "ir/parallel.h"
#include "profile/profiler.h"
#include "stitch/block_shaped.h"

namespace orch::driver {
namespace {

constexpr int kMaxEpilogue = 8;  // primitives per Linear one of a library epilogue

}  // namespace

std::string output_types(const Graph& kernel) {
  std::string out;
  for (ValueId v : kernel.outputs())
    out += fmt::format("{}{}", out.empty() ? "" : ";", format_type(kernel.value(v).type));
  return out;
}

std::pair<std::vector<NodeId>, std::vector<ValueId>> kernel_parts(const Graph& graph,
                                                                  const Candidate& c) {
  std::vector<NodeId> members(c.primitives.begin(), c.primitives.end());
  std::vector<ValueId> outputs;
  for (int p : c.outputs)
    for (ValueId v : graph.node(p).outputs) outputs.push_back(v);
  return {std::move(members), std::move(outputs)};
}

profile::TuningRecord record_of(const UniqueKernel& u, const std::string& machine,
                                const profile::Measurement& m) {
  return {.kernel_hash = u.hash,
          .outputs = u.outputs,
          .machine = machine,
          .backend = m.backend,
          .config = m.config,
          .ok = m.ok,
          .reason = m.reason,
          .median_us = m.median_us,
          .min_us = m.min_us,
          .max_us = m.max_us,
          .runs = m.runs,
          .compile_s = m.compile_s,
          .label = u.label};
}

// One pass over a tensor, as oneDNN's reorders between nchw and nChw16c ran on one thread of the
// development machine (AMD EPYC, AVX-512): 32-43 GB/s for YOLOX-Nano's tensors of 86 KB to 2.8
// MB, in either direction.
constexpr double kReorderBytesPerUs = 40e3;

double blocked_reorder_us(const Graph& kernel) {
  double bytes = 0;
  auto add = [&](ValueId v) {
    const TensorType& t = kernel.value(v).type;
    if (!kernel.value(v).is_constant() && t.shape.size() >= 3 &&
        stitch::whole_channel_blocks(t.shape, codegen::dnnl_channel_block()))
      bytes += static_cast<double>(num_elements(t.shape) * dtype_size(t.dtype));
  };
  for (ValueId v : kernel.inputs()) add(v);
  for (ValueId v : kernel.outputs()) add(v);
  return bytes / kReorderBytesPerUs;
}

void apply_records(UniqueKernel& u, const std::vector<profile::TuningRecord>& records,
                   bool relayout) {
  u.known = true;
  const double reorder_us = relayout && u.library ? blocked_reorder_us(u.kernel) : 0;
  for (const profile::TuningRecord& r : records) {
    double us = r.recheck_us > 0 ? r.recheck_us : r.median_us;
    // Never below half the time measured: the estimate is of reorders in hot caches, and the
    // kernel still reads and writes those tensors in the module.
    if (r.backend == "dnnl" && codegen::dnnl_blocked_layout(r.config))
      us = std::max(us - reorder_us, us / 2);
    if (!r.ok && u.cost_us == std::numeric_limits<double>::infinity())
      u.failure = fmt::format("{}: {}", r.backend, r.reason);
    if (r.ok && us < u.cost_us) {
      u.cost_us = us;
      u.choice = {.backend = r.backend, .config = r.config, .cost_us = us};
      u.rechecked = r.recheck_us > 0;
    }
  }
}

bool fallback_only(const UniqueKernel& u, const std::vector<profile::TuningRecord>& records,
                   const profile::BackendSet& backends) {
  if (backends.fallback == nullptr) return false;
  for (const profile::TuningRecord& r : records)
    if (r.backend != backends.fallback->name) return false;
  for (const codegen::Backend* b : profile::accepting_backends(backends, u.kernel))
    if (b != backends.fallback) return true;
  return false;
}

void price_analytically(UniqueKernel& u, double call_us) {
  u.known = true;
  u.cost_us = u.bound_us + call_us;
  u.choice = {.backend = std::string(
                  profile::accepting_backends(profile::default_backends(), u.kernel).front()->name),
              .config = "",
              .cost_us = u.cost_us};
}

void price_on_gpu(UniqueKernel& u, const schedule::GpuMachine& gpu,
                  const codegen::CudaLibraries& libraries) {
  if (u.known) return;  // a host kernel (Tuner::describe)
  u.known = true;
  u.cost_us = cuda_cost_us(u.kernel, gpu, libraries);
  u.choice = {.backend = "cuda", .config = "", .cost_us = u.cost_us};
}

std::vector<codegen::KernelChoice> unmeasured_choices(
    const UniqueKernel& u, const std::vector<profile::TuningRecord>& records) {
  auto measured = [&](std::string_view backend, const std::string& config) {
    return std::any_of(records.begin(), records.end(), [&](const profile::TuningRecord& r) {
      return r.backend == backend && r.config == config;
    });
  };
  bool dnnl_worked_or_killed =
      std::any_of(records.begin(), records.end(), [](const profile::TuningRecord& r) {
        return r.backend == "dnnl" && (r.ok || profile::child_died(r.reason));
      });
  std::vector<codegen::KernelChoice> missing;
  if (!u.library || !dnnl_worked_or_killed) return missing;
  for (std::string& config : codegen::dnnl_configs(u.kernel))
    if (!measured("dnnl", config)) missing.push_back({.backend = "dnnl", .config = config});
  if (u.narrow && !measured("halide", "") && codegen::halide_backend().reject(u.kernel).empty())
    missing.push_back({.backend = "halide", .config = ""});
  return missing;
}

std::vector<double> cheapest_alone(const std::vector<UniqueKernel>& unique,
                                   const OrchestrationProblem& problem) {
  std::vector<double> alone(static_cast<size_t>(problem.num_primitives),
                            std::numeric_limits<double>::infinity());
  for (const UniqueKernel& u : unique) {
    if (!u.known || u.primitives != 1) continue;
    for (size_t i : u.candidates) {
      double& a = alone[static_cast<size_t>(problem.candidates[i].primitives[0])];
      a = std::min(a, u.cost_us + u.write_us);
    }
  }
  return alone;
}

double unfused_us(const std::vector<double>& alone, const Candidate& c) {
  double sum = 0;
  for (int p : c.primitives) sum += alone[static_cast<size_t>(p)];
  return sum;
}

std::string model_key(const std::vector<UniqueKernel>& unique, bool write_cost) {
  std::vector<std::string> kernels;
  for (const UniqueKernel& u : unique) kernels.push_back(u.hash + " " + u.outputs);
  std::sort(kernels.begin(), kernels.end());
  uint64_t h = hash_string(write_cost ? "orch model, write cost" : "orch model");
  for (const std::string& k : kernels) h = hash_combine(h, hash_string(k));
  return format_hash(h);
}

std::vector<size_t> most_promising(const std::vector<UniqueKernel>& unique,
                                   const OrchestrationProblem& problem, const CostEstimate& fit,
                                   const std::vector<size_t>& skip, size_t count) {
  std::vector<double> alone = cheapest_alone(unique, problem);
  std::vector<std::pair<double, size_t>> saving;
  for (size_t id = 0; id < unique.size(); ++id) {
    const UniqueKernel& u = unique[id];
    if (u.known || std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    double estimate = estimate_cost_us(fit, u.bound_us, u.kind, u.primitives);
    double best = 0;
    for (size_t i : u.candidates)
      best = std::max(best, unfused_us(alone, problem.candidates[i]) - estimate - u.write_us);
    if (best > 0 && best < std::numeric_limits<double>::infinity()) saving.push_back({-best, id});
  }
  size_t take = std::min(saving.size(), count);
  std::partial_sort(saving.begin(), saving.begin() + static_cast<std::ptrdiff_t>(take),
                    saving.end());
  std::vector<size_t> out;
  for (size_t k = 0; k < take; ++k) out.push_back(saving[k].second);
  return out;
}

std::vector<size_t> library_epilogues(const std::vector<UniqueKernel>& unique) {
  std::vector<size_t> ids;
  for (size_t u = 0; u < unique.size(); ++u) {
    const UniqueKernel& k = unique[u];
    if (!k.known && k.library && k.primitives >= 2 &&
        k.primitives <= kMaxEpilogue * std::max(k.linear, 1))
      ids.push_back(u);
  }
  return ids;
}

std::vector<size_t> epilogue_tails(const std::vector<UniqueKernel>& unique,
                                   const std::vector<size_t>& unique_of,
                                   const OrchestrationProblem& problem, const Graph& graph) {
  std::map<std::vector<int>, std::vector<size_t>> by_members;
  for (size_t i = 0; i < problem.candidates.size(); ++i)
    by_members[problem.candidates[i].primitives].push_back(i);
  auto is_linear = [&](int p) {
    const OpSchema* schema = find_op(graph.node(p).op);
    return schema && schema->category == Category::Linear;
  };
  std::set<size_t> tails;
  for (const UniqueKernel& k : unique) {
    if (!k.library || k.linear != 1 || k.primitives < 2 || k.primitives > kMaxEpilogue) continue;
    std::vector<int> members = problem.candidates[k.candidates.front()].primitives;
    std::erase_if(members, is_linear);
    auto it = by_members.find(members);
    if (it == by_members.end()) continue;
    for (size_t i : it->second)
      if (!unique[unique_of[i]].known) tails.insert(unique_of[i]);
  }
  return {tails.begin(), tails.end()};
}

std::vector<EpilogueBatch> epilogue_batches(const std::vector<UniqueKernel>& unique,
                                            const std::vector<size_t>& unique_of,
                                            const OrchestrationProblem& problem,
                                            const Graph& graph) {
  std::vector<size_t> wide = library_epilogues(unique);
  auto narrow = std::stable_partition(wide.begin(), wide.end(),
                                      [&](size_t id) { return !unique[id].narrow; });
  std::vector<size_t> narrow_ids(narrow, wide.end());
  wide.erase(narrow, wide.end());
  return {{"library epilogues", std::move(wide), true},
          {"library epilogues", std::move(narrow_ids), false},
          {"epilogues alone", epilogue_tails(unique, unique_of, problem, graph), false}};
}

std::string measurement_key(const TuneOptions& options) {
  std::string key = profile::machine_fingerprint();
  if (options.threads > 0) key += fmt::format(" threads={}", options.threads);
  if (options.flush_cache) key += " cold";
  return key;
}

}  // namespace orch::driver
