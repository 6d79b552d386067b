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

Interpretation::Interpretation(const Graph& graph, std::span<const Tensor> inputs,
                               std::vector<int> holds)
    : graph_(graph), env_(graph.num_values()), uses_(std::move(holds)) {
  check(inputs.size() == graph.inputs().size(), "the model takes {} inputs, {} given",
        graph.inputs().size(), inputs.size());
  check(uses_.size() == graph.num_values(), "interpretation: {} holds for {} values", uses_.size(),
        graph.num_values());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    TensorType given{inputs[i].dtype(), inputs[i].shape()};
    check(given == v.type, "input '{}' is {}, the model expects {}", v.name, format_type(given),
          format_type(v.type));
    env_[graph.inputs()[i]] = inputs[i];
  }
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant()) env_[v] = graph.value(v).constant;
  for (const Node& node : graph.nodes())
    for (ValueId in : node.inputs)
      if (in != kNoValue) ++uses_[in];
}

const Tensor& Interpretation::value(ValueId v) {
  NodeId producer = graph_.value(v).producer;
  while (producer != kNoNode && next_ <= producer) run_next();
  check(producer == kNoNode || uses_[v] > 0, "interpretation: '{}' was already freed",
        graph_.value(v).name);
  return env_[v];
}

void Interpretation::run_rest() {
  while (next_ < static_cast<NodeId>(graph_.num_nodes())) run_next();
}

void Interpretation::run_next() {
  NodeId n = next_++;
  const Node& node = graph_.node(n);
  std::vector<Tensor> args;
  for (ValueId in : node.inputs) args.push_back(in == kNoValue ? Tensor() : env_[in]);
  std::vector<TensorType> types;
  for (ValueId out : node.outputs) types.push_back(graph_.value(out).type);
  std::vector<Tensor> results;
  try {
    results = run_op(node.op, node.attrs, std::move(args), types);
  } catch (const Error& e) {
    rethrow_with_context(e, graph_.describe(n));
  }
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    env_[node.outputs[i]] = std::move(results[i]);
    if (uses_[node.outputs[i]] == 0) env_[node.outputs[i]] = Tensor();  // nobody reads it
  }
  for (ValueId in : node.inputs)
    if (in != kNoValue) release(in);
}

void Interpretation::release(ValueId v) {
  // Inputs and constants are the caller's and the graph's: only intermediates are freed.
  if (--uses_[v] == 0 && graph_.value(v).producer != kNoNode) env_[v] = Tensor();
}

std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs) {
  std::vector<int> holds(graph.num_values(), 0);
  for (ValueId out : graph.outputs()) ++holds[out];
  Interpretation run(graph, inputs, std::move(holds));
  run.run_rest();  // nodes no output needs too: one that fails is an error either way
  std::vector<Tensor> outputs;
  for (ValueId out : graph.outputs()) outputs.push_back(run.value(out));
  return outputs;
}

}  // namespace orch::interp
