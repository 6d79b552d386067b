// Private to src/stitch: the parts of stitching every target shares. A plan is checked, its
// values placed (module inputs and outputs, an arena planned by lifetime, constants in
// weights.bin on first use), and the module's files written.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "codegen/choice.h"
#include "orchestrate/orchestrate.h"
#include "stitch/module_layout.h"
#include "stitch/stitch.h"

namespace orch::stitch {

int64_t value_bytes(const TensorType& type);

/// The layout under construction: where every value of the primitive graph lives.
class Layouter {
 public:
  /// Constants of `min_weight_bytes` or more are kernel inputs read from weights.bin.
  Layouter(const Graph& graph, int64_t min_weight_bytes)
      : graph_(graph), min_weight_bytes_(min_weight_bytes), where_(graph.num_values()) {}

  void place_inputs_and_outputs(ModuleLayout& layout);
  /// Every value a plan kernel writes that is not a module output gets an arena buffer.
  void plan_arena(const Plan& plan, ModuleLayout& layout);
  /// The kernel's graph, inputs and outputs for its backend (inputs and weights by location);
  /// kernels of the "dnnl" and "reference" backends are external (built by the runtime).
  /// `min_weight_bytes`, when set, replaces the module's threshold for this kernel.
  void lay_out_kernel(StitchedKernel& k, std::span<const ValueId> outputs, ModuleLayout& layout,
                      std::optional<int64_t> min_weight_bytes = std::nullopt);
  /// Outputs no kernel writes are copied from where their values live.
  void place_copied_outputs(ModuleLayout& layout);

 private:
  Location locate(ValueId v, ModuleLayout& layout);
  KernelValue kernel_value(const std::string& name, ModuleLayout& layout);
  int64_t bytes(ValueId v) const { return value_bytes(graph_.value(v).type); }

  const Graph& graph_;
  int64_t min_weight_bytes_;
  std::vector<std::optional<Location>> where_;
  std::vector<ValueId> arena_values_;
};

/// Checks that `plan` and `choices` fit `problem` and `graph`, and starts the module's layout:
/// its header fields, inputs, outputs and arena.
ModuleLayout start_layout(const Graph& graph, const OrchestrationProblem& problem, const Plan& plan,
                          std::span<const codegen::KernelChoice> choices,
                          const StitchOptions& options, Layouter& layouter);

/// Plan kernel `index` before layout: its name, choice, primitives and the values it writes.
StitchedKernel plan_kernel(const Graph& graph, const OrchestrationProblem& problem,
                           const Plan& plan, std::span<const codegen::KernelChoice> choices,
                           size_t index, std::vector<ValueId>& outputs);

/// The files every module ends with (weights.bin, manifest.json, report.md, the plan drawing),
/// and the result's totals; `result` already holds the per-backend counts and notes.
void finish_module(const Graph& graph, const ModuleLayout& layout, const std::filesystem::path& out,
                   double seconds, StitchResult& result);

void write_file(const std::filesystem::path& path, std::string_view text);
void write_weights(const Graph& graph, const ModuleLayout& layout,
                   const std::filesystem::path& path);

}  // namespace orch::stitch
