#include "profile/roofline.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace orch::profile {

double reduce_volume(const Graph& graph, const Node& node) {
  const OpSchema* schema = find_op(node.op);
  if (!schema || !schema->index_map || node.outputs.size() != 1) return 1;
  std::vector<TensorType> inputs;
  for (ValueId in : node.inputs) {
    if (in == kNoValue) return 1;
    inputs.push_back(graph.value(in).type);
  }
  IndexMap map = schema->index_map(node.attrs, inputs, graph.value(node.outputs[0]).type);
  double volume = 1;
  for (int64_t e : map.reduce_extents) volume *= static_cast<double>(e);
  return volume;
}

double flops_per_element(const Graph& graph, const Node& node) {
  const OpSchema* schema = find_op(node.op);
  bool linear = schema && schema->index_map && node.outputs.size() == 1 &&
                schema->category == Category::Linear;
  return reduce_volume(graph, node) * (linear ? 2 : 1);
}

double kernel_flops(const Graph& kernel) {
  double flops = 0;
  for (const Node& node : kernel.nodes()) {
    double per_element = flops_per_element(kernel, node);
    for (ValueId out : node.outputs)
      flops += per_element * static_cast<double>(num_elements(kernel.value(out).type.shape));
  }
  return flops;
}

namespace {

double value_bytes(const Graph& kernel, ValueId v) {
  const TensorType& t = kernel.value(v).type;
  return static_cast<double>(num_elements(t.shape)) * static_cast<double>(dtype_size(t.dtype));
}

}  // namespace

double kernel_unavoidable_bytes(const Graph& kernel) {
  double total = kernel_output_bytes(kernel);
  for (ValueId v : kernel.inputs()) total += value_bytes(kernel, v);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    if (kernel.value(v).is_constant()) total += value_bytes(kernel, v);
  return total;
}

double kernel_output_bytes(const Graph& kernel) {
  double total = 0;
  for (ValueId v : kernel.outputs()) total += value_bytes(kernel, v);
  return total;
}

double peak_gflops(const schedule::Machine& machine) {
  double lanes = std::max(1, machine.simd_bytes / 4);
  return std::max(1, machine.cores) * lanes * 2 * 2 * 5.0;
}

double roofline_lower_bound_us(const Graph& kernel, const schedule::Machine& machine) {
  double compute_us = kernel_flops(kernel) / (peak_gflops(machine) * 1e3);
  double bytes = kernel_unavoidable_bytes(kernel);
  // The first cache level (after registers) that holds everything, else main memory.
  double bandwidth_gbs = 1000;
  for (size_t i = 1; i < machine.levels.size(); ++i) {
    const schedule::MemoryLevel& level = machine.levels[i];
    if (level.capacity == 0 || bytes <= static_cast<double>(level.capacity)) {
      // A private level's bandwidth is one core's; a shared level's already all cores'.
      bandwidth_gbs = level.bandwidth_gbs * (level.shared ? 1 : std::max(1, machine.cores));
      break;
    }
  }
  double memory_us = bytes / (bandwidth_gbs * 2 * 1e3);
  return std::max(compute_us, memory_us);
}

}  // namespace orch::profile
