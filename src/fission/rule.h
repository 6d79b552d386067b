// A fission rule: {op, guard, builder, sampler}. The builder emits primitives through a
// RuleContext, which maps the operator's inputs into the primitive graph and offers the small
// helpers every family needs (explicit broadcasting, scalar constants, casts, reductions).
#pragma once

#include <random>
#include <span>
#include <string>
#include <vector>

#include "ir/builder.h"

namespace orch::fission {

class RuleContext {
 public:
  RuleContext(const Graph& source, NodeId node, Graph& target, std::vector<ValueId> inputs);

  const Node& node() const { return source_.node(node_); }
  const Attributes& attrs() const { return node().attrs; }
  /// Input slot `i` mapped into the primitive graph; kNoValue when absent.
  ValueId in(size_t i) const { return i < inputs_.size() ? inputs_[i] : kNoValue; }
  bool has(size_t i) const { return in(i) != kNoValue; }
  size_t num_inputs() const { return inputs_.size(); }
  /// The constant contents of input `i` (the frontend guarantees shape inputs are constant).
  const Tensor& constant(size_t i) const;
  bool is_constant(size_t i) const;
  /// Output `i`'s type in the operator graph.
  const TensorType& out_type(size_t i = 0) const;
  size_t num_outputs() const { return node().outputs.size(); }
  /// Whether output `i` has a consumer or is a graph output.
  bool output_used(size_t i) const;
  const TensorType& type(ValueId v) const { return target_.value(v).type; }
  const Shape& shape_of(ValueId v) const { return type(v).shape; }
  DType dtype(ValueId v) const { return type(v).dtype; }

  /// Emits one primitive.
  ValueId emit(const std::string& op, std::vector<ValueId> inputs, Attributes attrs = {});
  ValueId constant_value(Tensor t);
  /// A rank-0 constant of `dtype`.
  ValueId scalar(double v, DType dtype);

  /// prim.Elementwise{fn}; inputs of other shapes are broadcast (numpy rules) to the common
  /// shape first, single-element ones become rank-0 scalars.
  ValueId ew(const std::string& fn, std::vector<ValueId> inputs, Attributes extra = {});
  /// `v` broadcast (numpy rules, right-aligned) to `shape`.
  ValueId broadcast_to(ValueId v, const Shape& shape);
  ValueId reshape(ValueId v, const Shape& shape);
  ValueId transpose(ValueId v, const std::vector<int64_t>& perm);
  /// prim.Reduce keeping dims; `axes` may be negative; empty axes return `v`.
  ValueId reduce(const std::string& kind, ValueId v, std::vector<int64_t> axes);
  /// Mean over `axes` (keeping dims).
  ValueId mean(ValueId v, const std::vector<int64_t>& axes);
  ValueId cast(ValueId v, DType to);
  /// prim.Slice of `count` elements from `start` with `step` along `axis`.
  ValueId slice_axis(ValueId v, int64_t axis, int64_t start, int64_t count, int64_t step = 1);

 private:
  const Graph& source_;
  NodeId node_;
  Graph& target_;
  std::vector<ValueId> inputs_;
  mutable std::vector<std::vector<NodeId>> consumers_;
};

/// A random instance of `op` for the rule test: a graph whose last node is the op.
using SampleFn = Graph (*)(std::string_view op, std::mt19937& rng);

struct FissionRule {
  std::string_view op;
  /// nullptr: always applies. Otherwise the node is kept whole when this returns false.
  bool (*guard)(const RuleContext& ctx) = nullptr;
  /// One value per operator output (kNoValue for unused optional outputs).
  std::vector<ValueId> (*build)(RuleContext& ctx) = nullptr;
  SampleFn sample = nullptr;
  /// When the guard declines, why (reported for the node kept whole).
  std::string_view declined = "";
};

using RuleTable = std::vector<FissionRule>;

/// Every rule, family by family.
std::span<const FissionRule> all_rules();

void add_elementwise_rules(RuleTable& rules);
void add_reduce_rules(RuleTable& rules);
void add_normalization_rules(RuleTable& rules);
void add_linear_rules(RuleTable& rules);
void add_pooling_rules(RuleTable& rules);
void add_layout_rules(RuleTable& rules);
void add_indexing_rules(RuleTable& rules);
void add_generator_rules(RuleTable& rules);
void add_quantize_rules(RuleTable& rules);

/// The type float chains compute in: f32 for f16/bf16 (whose operator kernels compute in
/// double and round once), else `t`.
inline DType compute_type(DType t) {
  return t == DType::f16 || t == DType::bf16 ? DType::f32 : t;
}

/// The ONNX TensorProto code of `t` (Cast's `to`).
int64_t onnx_code(DType t);

/// One value wrapped as a build result.
inline std::vector<ValueId> single(ValueId v) {
  return {v};
}

}  // namespace orch::fission
