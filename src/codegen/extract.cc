#include <fmt/format.h>

#include <algorithm>

#include "codegen/kernel.h"
#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::codegen {

namespace {

// Constants that some member reads in a slot its op needs constant (shapes, axes, ...).
std::vector<bool> needed_constant(const Graph& graph, std::span<const NodeId> members) {
  std::vector<bool> needed(graph.num_values(), false);
  for (NodeId n : members) {
    const Node& node = graph.node(n);
    const OpSchema* schema = find_op(node.op);
    if (schema == nullptr) continue;
    for (int slot : schema->constant_inputs)
      if (slot < static_cast<int>(node.inputs.size()) && node.inputs[slot] != kNoValue)
        needed[node.inputs[slot]] = true;
  }
  return needed;
}

Graph extract(const Graph& graph, std::span<const NodeId> members, std::span<const ValueId> outputs,
              int64_t min_weight_bytes) {
  std::vector<NodeId> nodes(members.begin(), members.end());
  std::sort(nodes.begin(), nodes.end());  // node order is topological
  std::vector<bool> inside(graph.num_nodes(), false);
  for (NodeId n : nodes) inside.at(n) = true;

  Graph kernel;
  kernel.name = "kernel";
  std::vector<bool> keep_constant = needed_constant(graph, nodes);
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  auto bring_in = [&](ValueId v) {
    if (remap[v] != kNoValue) return;
    const Value& value = graph.value(v);
    bool as_input =
        !value.is_constant() || (min_weight_bytes >= 0 && !keep_constant[v] &&
                                 static_cast<int64_t>(value.constant.nbytes()) >= min_weight_bytes);
    remap[v] = as_input ? kernel.add_input(value.name, value.type)
                        : kernel.add_constant(value.name, value.constant);
  };
  for (NodeId n : nodes) {
    const Node& node = graph.node(n);
    for (ValueId in : node.inputs)
      if (in != kNoValue &&
          (graph.value(in).producer == kNoNode || !inside[graph.value(in).producer]))
        bring_in(in);
    copy_node(kernel, graph, node, remap);
  }
  std::vector<ValueId> kernel_outputs;
  for (ValueId out : outputs) {
    NodeId producer = graph.value(out).producer;
    check(producer != kNoNode && inside[producer], "kernel output '{}' is not computed inside it",
          graph.value(out).name);
    kernel_outputs.push_back(remap[out]);
  }
  kernel.set_outputs(std::move(kernel_outputs));
  return kernel;
}

}  // namespace

Graph extract_kernel(const Graph& graph, std::span<const NodeId> members,
                     std::span<const ValueId> outputs) {
  return extract(graph, members, outputs, -1);
}

Graph extract_kernel_with_weight_inputs(const Graph& graph, std::span<const NodeId> members,
                                        std::span<const ValueId> outputs, int64_t min_bytes) {
  return extract(graph, members, outputs, min_bytes);
}

std::string reject_kernel_sizes(const Graph& kernel) {
  if (kernel.outputs().empty()) return "the kernel has no outputs";
  for (const Value& v : kernel.values()) {
    if (num_elements(v.type.shape) >= (int64_t{1} << 31))
      return fmt::format("value '{}' has 2^31 elements or more", v.name);
    if (num_elements(v.type.shape) == 0)
      return fmt::format("value '{}' is empty (a zero-size dim)", v.name);
  }
  return "";
}

int kernel_input_index(const Graph& kernel, ValueId v) {
  auto it = std::find(kernel.inputs().begin(), kernel.inputs().end(), v);
  return it == kernel.inputs().end() ? -1 : static_cast<int>(it - kernel.inputs().begin());
}

}  // namespace orch::codegen
