#include "fission/lower.h"

#include "ir/ops/prim.h"

namespace orch::fission {

Graph lower_primitives(const Graph& graph) {
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
