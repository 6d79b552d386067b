#include "rewrite/cost.h"

#include <algorithm>

#include "ir/op_registry.h"

namespace orch::rewrite {
namespace {

// The shapes are verified: a plain product (num_elements formats its messages eagerly, which
// dominated the search's time).
double elements(const TensorType& t) {
  double n = 1;
  for (int64_t d : t.shape) n *= static_cast<double>(d);
  return n;
}

double bytes_of(const TensorType& t) {
  return elements(t) * static_cast<double>(dtype_size(t.dtype));
}

}  // namespace

NodeWork node_work(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  const OpSchema* schema = find_op(node.op);
  Category category = schema != nullptr ? schema->category : Category::Operator;
  double in_bytes = 0, out_bytes = 0, out_elements = 0;
  for (ValueId in : node.inputs)
    if (in != kNoValue) in_bytes += bytes_of(graph.value(in).type);
  for (ValueId out : node.outputs) {
    out_bytes += bytes_of(graph.value(out).type);
    out_elements += elements(graph.value(out).type);
  }
  NodeWork work{0, in_bytes + out_bytes};
  switch (category) {
    case Category::Elementwise:
      work.flops = out_elements * std::max<double>(1, static_cast<double>(node.inputs.size()) - 1);
      break;
    case Category::Reduce:
      work.flops = elements(graph.value(node.inputs[0]).type);
      break;
    case Category::Broadcast:
      work.bytes = in_bytes;
      break;
    case Category::Layout:
      work.bytes = 0;
      break;
    case Category::Linear: {
      // Each output element sums (input elements read per output) products.
      const Shape& w = graph.value(node.inputs[1]).type.shape;
      double per_output = 1;
      if (node.op == "prim.MatMul") {
        per_output = static_cast<double>(graph.value(node.inputs[0]).type.shape.back());
      } else {
        for (size_t d = 1; d < w.size(); ++d) per_output *= static_cast<double>(w[d]);
      }
      work.flops = 2 * out_elements * per_output;
      break;
    }
    case Category::Opaque:
    case Category::Operator:
      work.flops = out_elements;
      break;
  }
  return work;
}

double node_cost(const Graph& graph, NodeId node, const CostOptions& options) {
  NodeWork w = node_work(graph, node);
  // GFLOP/s and GB/s are 1e3 per microsecond.
  return std::max(w.flops / (options.peak_gflops * 1e3), w.bytes / (options.dram_gbps * 1e3)) +
         options.node_overhead_us;
}

double analytic_cost(const Graph& graph, const CostOptions& options) {
  double total = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    total += node_cost(graph, n, options);
  return total;
}

}  // namespace orch::rewrite
