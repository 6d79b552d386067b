#include "fission/lower.h"

#include "ir/ops/prim.h"

namespace orch::fission {
namespace {

bool is_broadcast(const Graph& g, ValueId v) {
  NodeId p = g.value(v).producer;
  return p != kNoNode && g.node(p).op == "prim.Broadcast";
}

// A broadcast can be left to ONNX's numpy broadcasting when each consumer is elementwise and
// keeps another input of its full output shape (so the result shape cannot shrink).
bool implicit(const Graph& g, const std::vector<std::vector<NodeId>>& consumers, ValueId v) {
  if (consumers[v].empty()) return false;
  for (ValueId out : g.outputs())
    if (out == v) return false;
  for (NodeId c : consumers[v]) {
    const Node& n = g.node(c);
    if (n.op != "prim.Elementwise") return false;
    const Shape& shape = g.value(n.outputs[0]).type.shape;
    bool anchored = false;
    for (ValueId in : n.inputs) anchored |= !is_broadcast(g, in) && g.value(in).type.shape == shape;
    if (!anchored) return false;
  }
  return true;
}

}  // namespace

Graph lower_primitives(const Graph& graph, const LowerOptions& options) {
  std::vector<std::vector<NodeId>> consumers = graph.consumers();
  Graph out;
  out.name = graph.name;
  std::vector<ValueId> map(graph.num_values(), kNoValue);
  for (ValueId v : graph.inputs()) map[v] = out.add_input(graph.value(v).name, graph.value(v).type);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant())
      map[v] = out.add_constant(graph.value(v).name, graph.value(v).constant);
  for (const Node& n : graph.nodes()) {
    std::vector<ValueId> inputs;
    for (ValueId v : n.inputs) inputs.push_back(v == kNoValue ? kNoValue : map[v]);
    if (options.implicit_broadcast && n.op == "prim.Broadcast" &&
        implicit(graph, consumers, n.outputs[0])) {
      map[n.outputs[0]] = inputs[0];
      continue;
    }
    std::string op = n.op;
    Attributes attrs = n.attrs;
    if (prim::is_primitive(n.op)) {
      std::vector<TensorType> types;
      for (ValueId v : n.inputs) types.push_back(graph.value(v).type);
      prim::OnnxForm form = prim::onnx_form(n.op, n.attrs, types);
      std::vector<ValueId> args;
      for (prim::OnnxArg& arg : form.args) {
        if (arg.input >= 0)
          args.push_back(inputs[arg.input]);
        else if (arg.constant.defined())
          args.push_back(out.add_constant(out.fresh_name(n.op + ".param"), arg.constant));
        else
          args.push_back(kNoValue);
      }
      op = form.op;
      attrs = std::move(form.attrs);
      inputs = std::move(args);
    }
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (ValueId v : n.outputs) {
      names.push_back(graph.value(v).name);
      types.push_back(graph.value(v).type);
    }
    NodeId id = out.add_node(op, inputs, attrs, names, types, n.name);
    for (size_t i = 0; i < n.outputs.size(); ++i) map[n.outputs[i]] = out.node(id).outputs[i];
  }
  std::vector<ValueId> outputs;
  for (ValueId v : graph.outputs()) outputs.push_back(map[v]);
  out.set_outputs(outputs);
  return out;
}

}  // namespace orch::fission
