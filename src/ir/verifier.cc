#include "ir/verifier.h"

#include <unordered_set>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch {

void verify(const Graph& graph) {
  auto num_values = static_cast<ValueId>(graph.num_values());
  std::unordered_set<std::string_view> names;
  for (const Value& v : graph.values())
    check(names.insert(v.name).second, "duplicate value name '{}'", v.name);

  std::vector<bool> defined(num_values, false);
  for (ValueId in : graph.inputs()) {
    check(in >= 0 && in < num_values, "graph input id {} out of range", in);
    check(!graph.value(in).is_constant(), "graph input '{}' is also a constant",
          graph.value(in).name);
    defined[in] = true;
  }
  for (ValueId v = 0; v < num_values; ++v) {
    const Value& value = graph.value(v);
    if (!value.is_constant()) continue;
    check(value.producer == kNoNode, "constant '{}' has a producer", value.name);
    check(TensorType{value.constant.dtype(), value.constant.shape()} == value.type,
          "constant '{}' holds {} but is typed {}", value.name,
          format_type({value.constant.dtype(), value.constant.shape()}), format_type(value.type));
    defined[v] = true;
  }

  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) {
    const Node& node = graph.node(n);
    std::string label = graph.describe(n);
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      check(in >= 0 && in < num_values, "{}: input id {} out of range", label, in);
      check(defined[in], "{}: input '{}' is used before it is defined (cycle or wrong order)",
            label, graph.value(in).name);
    }
    for (ValueId out : node.outputs) {
      check(out >= 0 && out < num_values, "{}: output id {} out of range", label, out);
      check(!defined[out], "{}: output '{}' is defined twice", label, graph.value(out).name);
      check(graph.value(out).producer == n, "{}: output '{}' names another producer", label,
            graph.value(out).name);
      defined[out] = true;
    }
    auto types = infer_node(graph, node.op, node.inputs, node.attrs,
                            static_cast<int>(node.outputs.size()), label);
    for (size_t i = 0; i < types.size(); ++i) {
      const Value& out = graph.value(node.outputs[i]);
      check(types[i] == out.type, "{}: output '{}' is typed {} but the op gives {}", label,
            out.name, format_type(out.type), format_type(types[i]));
    }
  }
  for (ValueId v = 0; v < num_values; ++v)
    check(defined[v], "value '{}' has no definition", graph.value(v).name);
  check(!graph.outputs().empty(), "graph '{}' has no outputs", graph.name);
  for (ValueId out : graph.outputs())
    check(out >= 0 && out < num_values, "graph output id {} out of range", out);
}

}  // namespace orch
