#include "ir/graph.h"

#include <fmt/format.h>

#include "ir/error.h"

namespace orch {

std::string format_type(const TensorType& type) {
  return fmt::format("{}{}", dtype_name(type.dtype), format_shape(type.shape));
}

ValueId Graph::add_value(std::string name, TensorType type, NodeId producer) {
  if (name.empty()) name = fresh_name("t");
  check(!by_name_.contains(name), "duplicate value name '{}'", name);
  num_elements(type.shape);  // rejects negative or overflowing dims early
  auto id = static_cast<ValueId>(values_.size());
  by_name_.emplace(name, id);
  values_.push_back(Value{std::move(name), std::move(type), producer, Tensor()});
  return id;
}

ValueId Graph::add_input(std::string name, TensorType type) {
  ValueId id = add_value(std::move(name), std::move(type), kNoNode);
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string name, Tensor data) {
  check(data.defined(), "constant '{}' has no data", name);
  ValueId id = add_value(name.empty() ? fresh_name("c") : std::move(name),
                         TensorType{data.dtype(), data.shape()}, kNoNode);
  values_[id].constant = std::move(data);
  return id;
}

NodeId Graph::add_node(std::string op, std::vector<ValueId> inputs, Attributes attrs,
                       std::vector<std::string> output_names, std::vector<TensorType> output_types,
                       std::string node_name) {
  check(output_names.size() == output_types.size(), "{} output names for {} output types",
        output_names.size(), output_types.size());
  for (ValueId in : inputs)
    check(in == kNoValue || (in >= 0 && static_cast<size_t>(in) < values_.size()),
          "node {} refers to unknown value id {}", op, in);
  auto id = static_cast<NodeId>(nodes_.size());
  std::vector<ValueId> outputs;
  for (size_t i = 0; i < output_names.size(); ++i)
    outputs.push_back(add_value(std::move(output_names[i]), std::move(output_types[i]), id));
  nodes_.push_back(Node{std::move(op), std::move(node_name), std::move(inputs), std::move(outputs),
                        std::move(attrs)});
  return id;
}

void Graph::bind_input(ValueId input, Tensor data) {
  Value& v = values_.at(input);
  check(v.producer == kNoNode && !v.is_constant(), "'{}' is not a graph input", v.name);
  check(TensorType{data.dtype(), data.shape()} == v.type, "value for '{}' is {}, expected {}",
        v.name, format_type({data.dtype(), data.shape()}), format_type(v.type));
  v.constant = std::move(data);
  std::erase(inputs_, input);
}

ValueId Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoValue : it->second;
}

std::string Graph::fresh_name(std::string_view base) {
  while (true) {
    std::string name = fmt::format("{}{}", base, next_fresh_++);
    if (!by_name_.contains(name)) return name;
  }
}

std::vector<std::vector<NodeId>> Graph::consumers() const {
  std::vector<std::vector<NodeId>> result(values_.size());
  for (NodeId n = 0; n < static_cast<NodeId>(nodes_.size()); ++n)
    for (ValueId in : nodes_[n].inputs)
      if (in != kNoValue) result[in].push_back(n);
  return result;
}

std::string Graph::describe(NodeId id) const {
  const Node& n = nodes_.at(id);
  return n.name.empty() ? fmt::format("{} #{}", n.op, id) : fmt::format("{} '{}'", n.op, n.name);
}

NodeId copy_node(Graph& dst, const Graph& src, const Node& node, std::vector<ValueId>& remap,
                 const std::function<std::string(ValueId)>& output_name) {
  std::vector<ValueId> inputs;
  for (ValueId in : node.inputs) inputs.push_back(in == kNoValue ? kNoValue : remap.at(in));
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (ValueId out : node.outputs) {
    names.push_back(output_name ? output_name(out) : src.value(out).name);
    types.push_back(src.value(out).type);
  }
  NodeId copy = dst.add_node(node.op, std::move(inputs), node.attrs, std::move(names),
                             std::move(types), node.name);
  for (size_t i = 0; i < node.outputs.size(); ++i)
    remap.at(node.outputs[i]) = dst.node(copy).outputs[i];
  return copy;
}

Graph remove_dead_code(const Graph& graph) {
  std::vector<bool> live_value(graph.num_values(), false);
  std::vector<bool> live_node(graph.num_nodes(), false);
  for (ValueId out : graph.outputs()) live_value[out] = true;
  for (NodeId n = static_cast<NodeId>(graph.num_nodes()) - 1; n >= 0; --n) {
    const Node& node = graph.node(n);
    bool live = false;
    for (ValueId out : node.outputs) live = live || live_value[out];
    if (!live) continue;
    live_node[n] = true;
    for (ValueId in : node.inputs)
      if (in != kNoValue) live_value[in] = true;
  }
  Graph result;
  result.name = graph.name;
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  for (ValueId in : graph.inputs())
    remap[in] = result.add_input(graph.value(in).name, graph.value(in).type);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant() && live_value[v])
      remap[v] = result.add_constant(graph.value(v).name, graph.value(v).constant);
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n)
    if (live_node[n]) copy_node(result, graph, graph.node(n), remap);
  std::vector<ValueId> outputs;
  for (ValueId out : graph.outputs()) outputs.push_back(remap[out]);
  result.set_outputs(std::move(outputs));
  return result;
}

}  // namespace orch
