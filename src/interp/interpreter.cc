#include "interp/interpreter.h"

#include <algorithm>

#include "interp/kernel.h"
#include "ir/error.h"

namespace orch::interp {

std::vector<Tensor> run_op(std::string_view op, const Attributes& attrs, std::vector<Tensor> inputs,
                           const std::vector<TensorType>& outputs) {
  Kernel kernel = find_kernel(op);
  check(kernel != nullptr, "the interpreter has no kernel for '{}'", op);
  KernelArgs args{op, attrs, std::move(inputs), {}};
  for (const TensorType& t : outputs) args.outputs.emplace_back(t.dtype, t.shape);
  // Outputs without elements leave nothing to compute, while a kernel's per-axis tables could
  // still be huge: Tile of an empty input to [0, 2^35] (found by fuzz_onnx_import).
  if (!args.outputs.empty() && std::all_of(args.outputs.begin(), args.outputs.end(),
                                           [](const Tensor& t) { return t.numel() == 0; }))
    return std::move(args.outputs);
  kernel(args);
  return std::move(args.outputs);
}

std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs) {
  check(inputs.size() == graph.inputs().size(), "the model takes {} inputs, {} given",
        graph.inputs().size(), inputs.size());
  std::vector<Tensor> env(graph.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    TensorType given{inputs[i].dtype(), inputs[i].shape()};
    check(given == v.type, "input '{}' is {}, the model expects {}", v.name, format_type(given),
          format_type(v.type));
    env[graph.inputs()[i]] = inputs[i];
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant()) env[v] = graph.value(v).constant;

  // Free each intermediate after its last use so large models fit in memory.
  std::vector<int> uses(graph.num_values(), 0);
  for (const Node& node : graph.nodes())
    for (ValueId in : node.inputs)
      if (in != kNoValue) ++uses[in];
  for (ValueId out : graph.outputs()) ++uses[out];

  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& node = graph.node(n);
    std::vector<Tensor> args;
    for (ValueId in : node.inputs) args.push_back(in == kNoValue ? Tensor() : env[in]);
    std::vector<TensorType> types;
    for (ValueId out : node.outputs) types.push_back(graph.value(out).type);
    std::vector<Tensor> results;
    try {
      results = run_op(node.op, node.attrs, std::move(args), types);
    } catch (const Error& e) {
      rethrow_with_context(e, graph.describe(n));
    }
    for (size_t i = 0; i < node.outputs.size(); ++i) env[node.outputs[i]] = std::move(results[i]);
    for (ValueId in : node.inputs)
      if (in != kNoValue && --uses[in] == 0 && graph.value(in).producer != kNoNode)
        env[in] = Tensor();
  }
  std::vector<Tensor> outputs;
  for (ValueId out : graph.outputs()) outputs.push_back(env[out]);
  return outputs;
}

}  // namespace orch::interp
