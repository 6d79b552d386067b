#include <algorithm>

#include "codegen/kernel.h"
#include "ir/error.h"

namespace orch::codegen {

Graph extract_kernel(const Graph& graph, std::span<const NodeId> members,
                     std::span<const ValueId> outputs) {
  std::vector<NodeId> nodes(members.begin(), members.end());
  std::sort(nodes.begin(), nodes.end());  // node order is topological
  std::vector<bool> inside(graph.num_nodes(), false);
  for (NodeId n : nodes) inside.at(n) = true;

  Graph kernel;
  kernel.name = "kernel";
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  auto bring_in = [&](ValueId v) {
    if (remap[v] != kNoValue) return;
    const Value& value = graph.value(v);
    remap[v] = value.is_constant() ? kernel.add_constant(value.name, value.constant)
                                   : kernel.add_input(value.name, value.type);
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

}  // namespace orch::codegen
