#include "ir/op_registry.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/ops/families.h"

namespace orch {
namespace {

// The largest rank orch accepts: no model comes near it, while a Reshape whose shape input has
// millions of entries would otherwise make a tensor of that rank (found by fuzz_onnx_import).
constexpr size_t kMaxRank = 64;

std::vector<OpSchema> build_table() {
  std::vector<OpSchema> table;
  // One call per family, in a fixed order: no registration through static constructors.
  ops::add_elementwise_ops(table);
  ops::add_reduce_ops(table);
  ops::add_normalization_ops(table);
  ops::add_linear_ops(table);
  ops::add_pooling_ops(table);
  ops::add_layout_ops(table);
  ops::add_indexing_ops(table);
  ops::add_generator_ops(table);
  ops::add_opaque_ops(table);
  ops::add_quantize_ops(table);
  ops::add_loss_ops(table);
  ops::add_primitive_ops(table);
  return table;
}

const std::vector<OpSchema>& table() {
  static const std::vector<OpSchema> kTable = build_table();
  return kTable;
}

}  // namespace

std::string_view category_name(Category c) {
  static constexpr std::string_view kNames[] = {"Operator", "Elementwise", "Reduce", "Broadcast",
                                                "Layout",   "Linear",      "Opaque"};
  return kNames[static_cast<int>(c)];
}

const TensorType& InferInput::type(size_t i) const {
  check(has(i), "input {} is required", i);
  return *types[i];
}

const Tensor& InferInput::value(size_t i) const {
  check(i < values.size() && values[i] != nullptr, "input {} must be a constant", i);
  return *values[i];
}

const OpSchema* find_op(std::string_view op) {
  for (const OpSchema& s : table())
    if (s.name == op) return &s;
  return nullptr;
}

std::span<const OpSchema> all_ops() {
  return table();
}

int linear_primitives(const Graph& graph) {
  int linear = 0;
  for (const Node& node : graph.nodes()) {
    const OpSchema* schema = find_op(node.op);
    if (schema != nullptr && schema->category == Category::Linear) ++linear;
  }
  return linear;
}

std::vector<TensorType> infer_node(const Graph& graph, const std::string& op,
                                   const std::vector<ValueId>& inputs, const Attributes& attrs,
                                   int num_outputs, std::string_view node_label) {
  const OpSchema* schema = find_op(op);
  if (schema == nullptr) unsupported("{}: unsupported op '{}'", node_label, op);
  int n = static_cast<int>(inputs.size());
  check(n >= schema->min_inputs && n <= schema->max_inputs, "{}: {} inputs, {} takes {}",
        node_label, n, op,
        schema->max_inputs == kVariadic ? fmt::format("at least {}", schema->min_inputs)
        : schema->min_inputs == schema->max_inputs
            ? fmt::format("{}", schema->min_inputs)
            : fmt::format("{} to {}", schema->min_inputs, schema->max_inputs));
  check(num_outputs >= schema->min_outputs && num_outputs <= schema->max_outputs,
        "{}: {} outputs, {} produces {} to {}", node_label, num_outputs, op, schema->min_outputs,
        schema->max_outputs);
  InferInput in{attrs, {}, {}, num_outputs};
  for (int i = 0; i < n; ++i) {
    ValueId v = inputs[i];
    in.types.push_back(v == kNoValue ? std::nullopt : std::optional(graph.value(v).type));
    in.values.push_back(v != kNoValue && graph.value(v).is_constant() ? &graph.value(v).constant
                                                                      : nullptr);
  }
  for (int slot : schema->constant_inputs)
    if (slot < n && inputs[slot] != kNoValue)
      check(in.values[slot] != nullptr,
            "{}: input {} ('{}') must be a constant: orch needs static shapes, and its value "
            "decides the output shape",
            node_label, slot, graph.value(inputs[slot]).name);
  try {
    std::vector<TensorType> out = schema->infer(in);
    check(static_cast<int>(out.size()) == num_outputs, "shape rule gave {} outputs, node has {}",
          out.size(), num_outputs);
    for (const TensorType& t : out) {
      check(t.shape.size() <= kMaxRank, "an output of rank {} (orch allows up to {})",
            t.shape.size(), kMaxRank);
      num_elements(t.shape);
    }
    return out;
  } catch (const Error& e) {
    rethrow_with_context(e, node_label);
  }
}

}  // namespace orch
