#include "driver/model_stats.h"

#include <functional>

namespace orch::driver {
namespace {

using FlopsFn = std::function<double(const Graph&, const Node&)>;

const Shape& shape_of(const Graph& g, ValueId v) {
  return g.value(v).type.shape;
}

double out_elems(const Graph& g, const Node& n) {
  return static_cast<double>(num_elements(shape_of(g, n.outputs[0])));
}

double in_elems(const Graph& g, const Node& n) {
  return static_cast<double>(num_elements(shape_of(g, n.inputs[0])));
}

// Multiply-add ops: 2 * outputs * reduction length.
double matmul_flops(const Graph& g, const Node& n) {
  const Shape& a = shape_of(g, n.inputs[0]);
  bool trans_a = n.op == "Gemm" && attr_int(n.attrs, "transA", 0) != 0;
  int64_t k = a.empty() ? 1 : (trans_a ? a.front() : a.back());
  return 2.0 * out_elems(g, n) * static_cast<double>(k);
}

double conv_flops(const Graph& g, const Node& n) {
  const Shape& w = shape_of(g, n.inputs[1]);
  double per_output = 1;
  for (size_t i = 1; i < w.size(); ++i) per_output *= static_cast<double>(w[i]);
  return 2.0 * out_elems(g, n) * per_output;
}

double conv_transpose_flops(const Graph& g, const Node& n) {
  const Shape& w = shape_of(g, n.inputs[1]);
  double per_input = 1;
  for (size_t i = 1; i < w.size(); ++i) per_input *= static_cast<double>(w[i]);
  return 2.0 * in_elems(g, n) * per_input;
}

double zero(const Graph&, const Node&) {
  return 0;
}

// Ops whose cost is not one operation per output element. Everything else counts that way.
const std::map<std::string, FlopsFn, std::less<>>& flops_rules() {
  static const std::map<std::string, FlopsFn, std::less<>> kRules = {
      {"MatMul", matmul_flops},
      {"Gemm", matmul_flops},
      {"Conv", conv_flops},
      {"ConvTranspose", conv_transpose_flops},
      // Reductions, pooling and normalizations read every input element about once.
      {"ReduceSum", in_elems},
      {"ReduceMean", in_elems},
      {"ReduceMax", in_elems},
      {"MaxPool", in_elems},
      {"AveragePool", in_elems},
      {"GlobalAveragePool", in_elems},
      {"Softmax", [](const Graph& g, const Node& n) { return 5 * in_elems(g, n); }},
      {"LayerNormalization", [](const Graph& g, const Node& n) { return 8 * in_elems(g, n); }},
      {"Transpose", zero},
      {"Reshape", zero},
      {"Flatten", zero},
      {"Squeeze", zero},
      {"Unsqueeze", zero},
      {"Concat", zero},
      {"Split", zero},
      {"Slice", zero},
      {"Gather", zero},
      {"Expand", zero},
      {"Shape", zero},
      {"Identity", zero},
  };
  return kRules;
}

}  // namespace

ModelStats model_stats(const Graph& graph) {
  ModelStats stats;
  for (const Value& v : graph.values()) {
    if (!v.is_constant()) continue;
    stats.parameters += v.constant.numel();
    stats.parameter_bytes += static_cast<int64_t>(v.constant.nbytes());
  }
  for (const Node& node : graph.nodes()) {
    ++stats.op_counts[node.op];
    auto rule = flops_rules().find(node.op);
    stats.flops += rule != flops_rules().end() ? rule->second(graph, node) : out_elems(graph, node);
  }
  return stats;
}

}  // namespace orch::driver
