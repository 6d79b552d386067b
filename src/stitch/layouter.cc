#include "stitch/layouter.h"

#include <cmath>
#include <fstream>

#include "codegen/kernel.h"
#include "ir/error.h"
#include "runtime/module_format.h"
#include "stitch/explain.h"

namespace orch::stitch {

namespace fs = std::filesystem;

namespace {

int64_t align_up(int64_t n) {
  return (n + runtime::kAlignment - 1) / runtime::kAlignment * runtime::kAlignment;
}

// The plan's cost with no fusion at all: every primitive its own kernel, at its cost in the plan;
// negative when some primitive has no measured single-primitive candidate.
double one_kernel_per_primitive_us(const OrchestrationProblem& problem) {
  std::vector<double> cost(problem.num_primitives, -1);
  for (const Candidate& c : problem.candidates)
    if (c.primitives.size() == 1 && std::isfinite(c.cost_us))
      cost[c.primitives[0]] =
          cost[c.primitives[0]] < 0 ? c.cost_us : std::min(cost[c.primitives[0]], c.cost_us);
  double total = 0;
  for (double c : cost) {
    if (c < 0) return -1;
    total += c;
  }
  return total;
}

}  // namespace

int64_t value_bytes(const TensorType& type) {
  return num_elements(type.shape) * static_cast<int64_t>(dtype_size(type.dtype));
}

void Layouter::place_inputs_and_outputs(ModuleLayout& layout) {
  for (size_t i = 0; i < graph_.inputs().size(); ++i) {
    ValueId v = graph_.inputs()[i];
    where_[v] = Location{Region::input, static_cast<int>(i), 0, bytes(v)};
    layout.inputs.push_back({graph_.value(v).name, graph_.value(v).type, *where_[v]});
  }
  for (size_t i = 0; i < graph_.outputs().size(); ++i) {
    ValueId v = graph_.outputs()[i];
    bool written = graph_.value(v).producer != kNoNode && !where_[v];
    if (written) where_[v] = Location{Region::output, static_cast<int>(i), 0, bytes(v)};
    layout.outputs.push_back({graph_.value(v).name, graph_.value(v).type, {}});
    layout.copied.push_back(!written);
  }
}

void Layouter::plan_arena(const Plan& plan, ModuleLayout& layout) {
  std::vector<BufferRequest> requests;
  for (const BufferLifetime& b : plan.buffers)
    for (ValueId v : graph_.node(b.primitive).outputs) {
      if (where_[v]) continue;
      requests.push_back({bytes(v), b.producer, b.last_use});
      layout.buffers.push_back({graph_.value(v).name, {}, b.producer, b.last_use});
      arena_values_.push_back(v);
    }
  layout.memory = plan_memory(requests, runtime::kAlignment);
  for (size_t i = 0; i < requests.size(); ++i) {
    Location at{Region::arena, 0, layout.memory.offsets[i], requests[i].bytes};
    where_[arena_values_[i]] = at;
    layout.buffers[i].at = at;
  }
}

// Where `v` lives; constants are added to weights.bin on first use.
Location Layouter::locate(ValueId v, ModuleLayout& layout) {
  if (!where_[v]) {
    check(graph_.value(v).is_constant(), "value '{}' is read before any kernel writes it",
          graph_.value(v).name);
    where_[v] = Location{Region::weights, 0, layout.weights_bytes, bytes(v)};
    layout.weights.push_back({v, layout.weights_bytes});
    layout.weights_bytes += align_up(bytes(v));
  }
  return *where_[v];
}

KernelValue Layouter::kernel_value(const std::string& name, ModuleLayout& layout) {
  ValueId v = graph_.find_value(name);
  check(v != kNoValue, "kernel value '{}' is not in the graph", name);
  return {name, graph_.value(v).type, locate(v, layout)};
}

void Layouter::lay_out_kernel(StitchedKernel& k, std::span<const ValueId> outputs,
                              ModuleLayout& layout, std::optional<int64_t> min_weight_bytes) {
  k.external = k.backend == "dnnl" || k.backend == "reference";
  k.graph = codegen::extract_kernel_with_weight_inputs(
      graph_, k.primitives, outputs, min_weight_bytes.value_or(min_weight_bytes_));
  k.inputs.clear();
  k.weights.clear();
  k.outputs.clear();
  for (ValueId in : k.graph.inputs()) {
    KernelValue kv = kernel_value(k.graph.value(in).name, layout);
    (k.external && kv.at.region == Region::weights ? k.weights : k.inputs).push_back(kv);
  }
  for (ValueId out : k.graph.outputs())
    k.outputs.push_back(kernel_value(k.graph.value(out).name, layout));
}

void Layouter::place_copied_outputs(ModuleLayout& layout) {
  for (size_t i = 0; i < layout.outputs.size(); ++i) {
    ValueId v = graph_.outputs()[i];
    layout.outputs[i].at = layout.copied[i]
                               ? locate(v, layout)
                               : Location{Region::output, static_cast<int>(i), 0, bytes(v)};
  }
}

ModuleLayout start_layout(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                          std::span<const codegen::KernelChoice> choices,
                          const StitchOptions& options, Layouter& layouter) {
  check(choices.size() == problem.candidates.size(), "{} kernel choices for {} candidates",
        choices.size(), problem.candidates.size());
  check(problem.num_primitives == static_cast<int>(graph.num_nodes()),
        "the problem has {} primitives, the graph {} nodes", problem.num_primitives,
        graph.num_nodes());
  std::string plan_problem = check_plan(problem, plan);
  check(plan_problem.empty(), "invalid plan: {}", plan_problem);

  ModuleLayout layout;
  layout.model = graph.name;
  layout.objective_us = plan.objective_us;
  layout.lower_bound_us = plan.lower_bound_us;
  layout.optimal = plan.status == SolveStatus::Optimal;
  layout.operator_kernels_us = options.operator_kernels_us;
  layout.primitive_kernels_us = one_kernel_per_primitive_us(problem);
  layouter.place_inputs_and_outputs(layout);
  layouter.plan_arena(plan, layout);
  return layout;
}

StitchedKernel plan_kernel(const Graph& graph, const OrchestrationProblem& problem,
                           const Plan& plan, std::span<const codegen::KernelChoice> choices,
                           size_t index, std::vector<ValueId>& outputs) {
  const PlanKernel& pk = plan.kernels[index];
  const Candidate& candidate = problem.candidates.at(pk.candidate);
  StitchedKernel k;
  k.name = fmt::format("k{}", index);
  k.choice = choices[pk.candidate];
  k.primitives.assign(candidate.primitives.begin(), candidate.primitives.end());
  outputs.clear();
  for (int p : pk.outputs)
    for (ValueId v : graph.node(p).outputs) outputs.push_back(v);
  return k;
}

void finish_module(const Graph& graph, const ModuleLayout& layout, const fs::path& out,
                   double seconds, StitchResult& result) {
  write_weights(graph, layout, out / runtime::kWeightsFile);
  result.kernels = static_cast<int>(layout.kernels.size());
  result.arena_bytes = layout.memory.arena_bytes;
  result.intermediate_bytes = layout.memory.total_bytes;
  result.weights_bytes = layout.weights_bytes;
  result.seconds = seconds;
  write_file(out / runtime::kManifestFile, manifest_json(layout));
  write_file(out / runtime::kReportFile, report_markdown(layout, result));
  write_explain(out.string());
}

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  check(out.good(), "{}: cannot write", path.string());
}

void write_weights(const Graph& graph, const ModuleLayout& layout, const fs::path& path) {
  std::string bytes(static_cast<size_t>(layout.weights_bytes), '\0');
  for (const WeightEntry& w : layout.weights) {
    const Tensor& t = graph.value(w.value).constant;
    std::copy_n(reinterpret_cast<const char*>(t.bytes()), t.nbytes(), bytes.data() + w.offset);
  }
  write_file(path, bytes);
}

}  // namespace orch::stitch
