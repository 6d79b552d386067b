// The plan laid out (values placed in regions, arena planned, weights collected), then the
// kernels generated, the driver built and the module files written.
#include "stitch/stitch.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "codegen/dnnl/dnnl_backend.h"
#include "codegen/halide/halide_aot.h"
#include "codegen/kernel.h"
#include "codegen/reference_backend.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "runtime/module_format.h"
#include "stitch/explain.h"
#include "stitch/module_layout.h"

namespace orch::stitch {

namespace fs = std::filesystem;

namespace {

int64_t align_up(int64_t n) {
  return (n + runtime::kAlignment - 1) / runtime::kAlignment * runtime::kAlignment;
}

int64_t value_bytes(const TensorType& type) {
  return num_elements(type.shape) * static_cast<int64_t>(dtype_size(type.dtype));
}

// The layout under construction: where every value of the primitive graph lives.
class Layouter {
 public:
  Layouter(const Graph& graph, const StitchOptions& options)
      : graph_(graph), options_(options), where_(graph.num_values()) {}

  void place_inputs_and_outputs(ModuleLayout& layout) {
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

  // Every value a plan kernel writes that is not a module output gets an arena buffer.
  void plan_arena(const Plan& plan, ModuleLayout& layout) {
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
  Location locate(ValueId v, ModuleLayout& layout) {
    if (!where_[v]) {
      check(graph_.value(v).is_constant(), "value '{}' is read before any kernel writes it",
            graph_.value(v).name);
      where_[v] = Location{Region::weights, 0, layout.weights_bytes, bytes(v)};
      layout.weights.push_back({v, layout.weights_bytes});
      layout.weights_bytes += align_up(bytes(v));
    }
    return *where_[v];
  }

  KernelValue kernel_value(const std::string& name, ModuleLayout& layout) {
    ValueId v = graph_.find_value(name);
    check(v != kNoValue, "kernel value '{}' is not in the graph", name);
    return {name, graph_.value(v).type, locate(v, layout)};
  }

  // The kernel's graph, inputs and outputs for `backend` (inputs and weights by location).
  void lay_out_kernel(StitchedKernel& k, std::span<const ValueId> outputs, ModuleLayout& layout) {
    k.external = k.backend != "halide";
    k.graph = codegen::extract_kernel_with_weight_inputs(graph_, k.primitives, outputs,
                                                         options_.min_weight_bytes);
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

  void place_copied_outputs(ModuleLayout& layout) {
    for (size_t i = 0; i < layout.outputs.size(); ++i) {
      ValueId v = graph_.outputs()[i];
      layout.outputs[i].at = layout.copied[i]
                                 ? locate(v, layout)
                                 : Location{Region::output, static_cast<int>(i), 0, bytes(v)};
    }
  }

 private:
  int64_t bytes(ValueId v) const { return value_bytes(graph_.value(v).type); }

  const Graph& graph_;
  const StitchOptions& options_;
  std::vector<std::optional<Location>> where_;
  std::vector<ValueId> arena_values_;
};

// The measured backend, or for an unmeasured kernel the first that accepts it.
std::string pick_backend(const codegen::KernelChoice& choice, const Graph& kernel) {
  if (!choice.backend.empty()) return choice.backend;
  if (codegen::dnnl_backend().reject(kernel).empty()) return "dnnl";
  if (codegen::halide_reject(kernel).empty()) return "halide";
  return "reference";
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

// Compiles the driver and links it with the Halide objects into kernels.so.
void build_library(const ModuleLayout& layout, const fs::path& out, const StitchOptions& options) {
  fs::path build = out / runtime::kBuildDir;
  fs::create_directories(build / "include");
  fs::copy_file(ORCH_MODULE_ABI_HEADER, build / "include" / "module_abi.h",
                fs::copy_options::overwrite_existing);
  write_file(build / "driver.cc", driver_source(layout));
  std::string objects;
  bool any_halide = false;
  for (const StitchedKernel& k : layout.kernels)
    if (!k.external) objects += " " + k.name + ".o", any_halide = true;
  std::string includes = "-Iinclude";
  if (any_halide) {
    codegen::halide_compile_runtime_object((build / "halide_runtime.o").string());
    objects += " halide_runtime.o";
    includes += " -I" + codegen::halide_runtime_include_dir();
  }
  std::string command =
      // -Bsymbolic: the module's Halide runtime calls bind inside it, never to another copy
      // (libHalide's, another module's) in the loading process.
      fmt::format(
          "{} -std=c++17 -O2 -fPIC -shared -Wl,-Bsymbolic {} -o ../{} driver.cc{} "
          "-lpthread -ldl",
          options.cxx, includes, runtime::kLibraryFile, objects);
  write_file(build / "link.sh", "#!/bin/sh\ncd \"$(dirname \"$0\")\"\n" + command + "\n");
  std::string shell = fmt::format("cd '{}' && {} > link.log 2>&1", build.string(), command);
  int status = std::system(shell.c_str());
  if (status != 0) {
    std::ifstream log(build / "link.log");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
      fail("building {}: the C++ compiler '{}' was not found in PATH", runtime::kLibraryFile,
           options.cxx);
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    fail("building {} failed ({}):\n{}", runtime::kLibraryFile, (build / "link.sh").string(), text);
  }
}

// The plan's cost with no fusion at all: every primitive its own measured kernel; negative when
// some primitive has no measured single-primitive candidate.
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

StitchResult stitch(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                    std::span<const codegen::KernelChoice> choices, const std::string& out_dir,
                    const StitchOptions& options) {
  auto start = std::chrono::steady_clock::now();
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
  Layouter layouter(graph, options);
  layouter.place_inputs_and_outputs(layout);
  layouter.plan_arena(plan, layout);

  fs::path out(out_dir);
  fs::create_directories(out / runtime::kBuildDir);
  fs::create_directories(out / runtime::kKernelGraphDir);
  StitchResult result;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlanKernel& pk = plan.kernels[i];
    const Candidate& candidate = problem.candidates.at(pk.candidate);
    StitchedKernel k;
    k.name = fmt::format("k{}", i);
    k.choice = choices[pk.candidate];
    k.primitives.assign(candidate.primitives.begin(), candidate.primitives.end());
    std::vector<ValueId> outputs;
    for (int p : pk.outputs)
      for (ValueId v : graph.node(p).outputs) outputs.push_back(v);
    k.backend = pick_backend(k.choice, codegen::extract_kernel(graph, k.primitives, outputs));
    check(k.backend == "halide" || k.backend == "dnnl" || k.backend == "reference",
          "kernel {} ({}): unknown backend '{}'", k.name, candidate.label, k.backend);
    layouter.lay_out_kernel(k, outputs, layout);
    if (k.backend == "halide") {
      try {
        std::string prefix = (out / runtime::kBuildDir / k.name).string();
        codegen::HalideSchedule schedule;
        if (!k.choice.config.empty())
          schedule = codegen::halide_schedule_from_text(k.choice.config);
        codegen::halide_compile_kernel_object(k.graph, prefix + ".o", prefix + ".h",
                                              "orch_" + k.name,
                                              k.choice.config.empty() ? nullptr : &schedule);
      } catch (const Error& e) {
        // A kernel Halide cannot build ahead of time still runs, by the interpreter.
        result.notes.push_back(
            fmt::format("{}: Halide failed, runs as reference: {}", k.name, e.what()));
        k.backend = "reference";
        layouter.lay_out_kernel(k, outputs, layout);
      }
    }
    if (k.external)
      write_file(out / runtime::kKernelGraphDir / (k.name + ".orch"), print_graph(k.graph));
    result.halide_kernels += k.backend == "halide";
    result.dnnl_kernels += k.backend == "dnnl";
    result.reference_kernels += k.backend == "reference";
    layout.kernels.push_back(std::move(k));
  }
  layouter.place_copied_outputs(layout);

  build_library(layout, out, options);
  write_weights(graph, layout, out / runtime::kWeightsFile);
  result.kernels = static_cast<int>(layout.kernels.size());
  result.arena_bytes = layout.memory.arena_bytes;
  result.intermediate_bytes = layout.memory.total_bytes;
  result.weights_bytes = layout.weights_bytes;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file(out / runtime::kManifestFile, manifest_json(layout));
  write_file(out / runtime::kReportFile, report_markdown(layout, result));
  write_explain(out.string());
  return result;
}

}  // namespace orch::stitch
