// A patch: the replacement a rewrite rule builds for part of a graph. Rules never edit a graph
// (graphs are append-only); they describe new nodes and which old values they replace, and
// apply_patch() rebuilds the graph from that description, dropping what became dead.
//
//   Patch p(graph);
//   Ref ones = p.constant(Tensor(...));
//   Ref mm = p.op("prim.MatMul", {p.value(x), ones});
//   p.replace(reduce_output, mm);  // every consumer of reduce_output now reads mm
//   std::optional<Graph> rewritten = apply_patch(graph, p);
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch::rewrite {

/// A value a patch refers to: an old value of the graph (>= 0) or a new one (< 0).
using Ref = int32_t;

class Patch {
 public:
  explicit Patch(const Graph& graph) : graph_(graph) {}

  const Graph& graph() const { return graph_; }
  /// An existing value. New nodes read it as it is in the graph (replacements do not apply).
  Ref value(ValueId v) const { return v; }
  /// A new constant.
  Ref constant(Tensor data);
  /// A new single-output node; its type comes from the op's shape rule (throws Error when the
  /// node is invalid, so a rule cannot build an ill-typed replacement).
  Ref op(const std::string& op, std::vector<Ref> inputs, Attributes attrs = {});
  /// Every consumer of `old` (and the graph output, if it is one) reads `with` instead. Throws
  /// when the types differ.
  void replace(ValueId old, Ref with);

  const TensorType& type(Ref r) const;
  /// The contents of a constant (old or new), nullptr otherwise.
  const Tensor* constant_of(Ref r) const;
  const Shape& shape(Ref r) const { return type(r).shape; }

  /// New values, in creation order: index i is Ref -(i + 1).
  struct NewValue {
    TensorType type;
    Tensor constant;  // defined for new constants
    std::string op;   // empty for constants
    std::vector<Ref> inputs;
    Attributes attrs;
  };
  const std::vector<NewValue>& new_values() const { return new_; }
  const std::vector<std::pair<ValueId, Ref>>& replacements() const { return replacements_; }

 private:
  const Graph& graph_;
  std::vector<NewValue> new_;
  std::vector<std::pair<ValueId, Ref>> replacements_;
};

/// The graph with the patch applied and dead nodes and constants removed; graph inputs and
/// output names are kept. nullopt when the patch cannot apply: it would make a cycle, or a
/// graph output would need a name it cannot take (e.g. it is replaced by a graph input).
std::optional<Graph> apply_patch(const Graph& graph, const Patch& patch);

}  // namespace orch::rewrite
