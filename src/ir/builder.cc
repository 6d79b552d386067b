#include "ir/builder.h"

#include "ir/op_registry.h"

namespace orch {

ValueId Builder::op(const std::string& op, std::vector<ValueId> inputs, Attributes attrs,
                    std::string output_name) {
  auto types = infer_node(graph_, op, inputs, attrs, 1, op);
  std::vector<std::string> names = {std::move(output_name)};
  NodeId n =
      graph_.add_node(op, std::move(inputs), std::move(attrs), std::move(names), std::move(types));
  return graph_.node(n).outputs[0];
}

std::vector<ValueId> Builder::op_multi(const std::string& op, std::vector<ValueId> inputs,
                                       Attributes attrs, int num_outputs) {
  auto types = infer_node(graph_, op, inputs, attrs, num_outputs, op);
  std::vector<std::string> names(num_outputs);
  NodeId n =
      graph_.add_node(op, std::move(inputs), std::move(attrs), std::move(names), std::move(types));
  return graph_.node(n).outputs;
}

void Builder::output(ValueId v) {
  auto outputs = graph_.outputs();
  outputs.push_back(v);
  graph_.set_outputs(std::move(outputs));
}

}  // namespace orch
