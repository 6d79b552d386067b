// The IR: a Graph owns its Values (tensors) and Nodes (ops); everything refers to them by id.
//
// Invariants (checked by verify()): value names are unique; every value has at most one
// producer; nodes are stored in a topological order; each node's output types are those its
// op's shape rule infers. Constants are values with a defined `constant` tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/tensor.h"

namespace orch {

using ValueId = int32_t;
using NodeId = int32_t;
/// An absent optional input (ONNX's empty input name).
inline constexpr ValueId kNoValue = -1;
inline constexpr NodeId kNoNode = -1;

/// Element type and static shape of a value.
struct TensorType {
  DType dtype = DType::f32;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

/// "f32[1,3]".
std::string format_type(const TensorType& type);

struct Value {
  std::string name;
  TensorType type;
  NodeId producer = kNoNode;  // kNoNode for graph inputs and constants
  Tensor constant;            // defined() for constants (initializers)
  bool is_constant() const { return constant.defined(); }
};

struct Node {
  std::string op;
  std::string name;  // optional, from the model; used in messages
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  Attributes attrs;
};

class Graph {
 public:
  std::string name = "main";

  /// Adds a graph input. Throws on a duplicate name.
  ValueId add_input(std::string name, TensorType type);
  /// Adds a constant sharing `data`'s buffer. An empty name gets a fresh one.
  ValueId add_constant(std::string name, Tensor data);
  /// Appends a node whose outputs have the given names and types (no inference: see Builder).
  /// Inputs must already exist, so appending keeps the node list topological.
  NodeId add_node(std::string op, std::vector<ValueId> inputs, Attributes attrs,
                  std::vector<std::string> output_names, std::vector<TensorType> output_types,
                  std::string node_name = "");
  void set_outputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }
  /// Turns an existing input into a constant with the given data (binding a known input).
  void bind_input(ValueId input, Tensor data);

  const Value& value(ValueId id) const { return values_.at(id); }
  Value& value(ValueId id) { return values_.at(id); }
  const Node& node(NodeId id) const { return nodes_.at(id); }
  const std::vector<Value>& values() const { return values_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  size_t num_values() const { return values_.size(); }
  size_t num_nodes() const { return nodes_.size(); }

  /// kNoValue when absent.
  ValueId find_value(std::string_view name) const;
  /// A name not yet used, derived from `base`.
  std::string fresh_name(std::string_view base);
  /// For each value, the nodes reading it (in node order, a node once per use).
  std::vector<std::vector<NodeId>> consumers() const;
  /// "Add 'name'" or "Add #3" for messages.
  std::string describe(NodeId id) const;

 private:
  ValueId add_value(std::string name, TensorType type, NodeId producer);

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::unordered_map<std::string, ValueId> by_name_;
  int64_t next_fresh_ = 0;
};

/// Appends a copy of `node` (a node of `src`) to `dst`: its inputs are read through `remap`
/// (src value id -> dst value id) and its outputs are recorded there. Outputs keep their names
/// unless `output_name` gives another.
NodeId copy_node(Graph& dst, const Graph& src, const Node& node, std::vector<ValueId>& remap,
                 const std::function<std::string(ValueId)>& output_name = {});

/// A copy without the nodes and constants that no graph output depends on.
Graph remove_dead_code(const Graph& graph);

}  // namespace orch
