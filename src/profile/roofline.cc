#include "profile/roofline.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace orch::profile {

double kernel_flops(const Graph& kernel) {
  double flops = 0;
  for (const Node& node : kernel.nodes()) {
    const OpSchema* schema = find_op(node.op);
    double per_element = 1;
    if (schema && schema->index_map && node.outputs.size() == 1) {
      std::vector<TensorType> inputs;
      bool complete = true;
      for (ValueId in : node.inputs) {
        if (in == kNoValue) {
          complete = false;
          break;
        }
        inputs.push_back(kernel.value(in).type);
      }
      if (complete) {
        IndexMap map = schema->index_map(node.attrs, inputs, kernel.value(node.outputs[0]).type);
        for (int64_t e : map.reduce_extents) per_element *= static_cast<double>(e);
      }
      if (schema->category == Category::Linear) per_element *= 2;
    }
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
