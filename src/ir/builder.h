// Builder: builds graphs in C++ with shape inference and validation at each step.
//
//   Graph g;
//   Builder b(g);
//   ValueId x = b.input("x", {DType::f32, {1, 8}});
//   ValueId y = b.op("Relu", {x});
//   b.output(y);
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orch {

class Builder {
 public:
  explicit Builder(Graph& graph) : graph_(graph) {}

  ValueId input(std::string name, TensorType type) {
    return graph_.add_input(std::move(name), std::move(type));
  }
  ValueId constant(Tensor data, std::string name = "") {
    return graph_.add_constant(std::move(name), std::move(data));
  }
  /// A single-output op; output types come from the op's shape rule.
  ValueId op(const std::string& op, std::vector<ValueId> inputs, Attributes attrs = {},
             std::string output_name = "");
  /// An op with `num_outputs` outputs.
  std::vector<ValueId> op_multi(const std::string& op, std::vector<ValueId> inputs,
                                Attributes attrs, int num_outputs);
  void output(ValueId v);
  const TensorType& type(ValueId v) const { return graph_.value(v).type; }

 private:
  Graph& graph_;
};

}  // namespace orch
