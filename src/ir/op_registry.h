// The op registry: one entry of data per op (arity, shape rule, category). Passes ask the
// registry; nothing outside it switches on op names.
//
// orch's internal op set is ONNX opset 17: the frontend rewrites older opsets into that form
// (e.g. Squeeze's `axes` attribute becomes its constant second input) and exports it as is.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/index_map.h"

namespace orch {

/// Korch's primitive categories (§3); ONNX operators before fission are `Operator`.
enum class Category : uint8_t { Operator, Elementwise, Reduce, Broadcast, Layout, Linear, Opaque };

std::string_view category_name(Category c);

/// What a shape rule sees of a node.
struct InferInput {
  const Attributes& attrs;
  /// One entry per input slot; nullopt for an absent optional input.
  std::vector<std::optional<TensorType>> types;
  /// Constant contents per input slot, nullptr when the input is not a constant.
  std::vector<const Tensor*> values;
  int num_outputs;

  const TensorType& type(size_t i) const;
  bool has(size_t i) const { return i < types.size() && types[i].has_value(); }
  /// The constant contents of input `i`; throws naming the slot when it is not constant.
  const Tensor& value(size_t i) const;
};

/// Infers output types; throws Error (without the node name: the caller adds it) on bad input.
using InferFn = std::vector<TensorType> (*)(const InferInput& in);

struct OpSchema {
  std::string_view name;
  int min_inputs = 1;
  int max_inputs = 1;  // kVariadic for no limit
  int min_outputs = 1;
  int max_outputs = 1;
  InferFn infer = nullptr;
  /// Input slots whose contents decide output shapes (Reshape's shape, Slice's starts...):
  /// they must be constants once dims are bound.
  std::vector<int> constant_inputs;
  Category category = Category::Operator;
  /// Primitives only: which input region an output region reads (see ir/index_map.h).
  IndexMapFn index_map = nullptr;
};

inline constexpr int kVariadic = 1 << 20;

/// The schema of `op`, or nullptr when orch does not support it.
const OpSchema* find_op(std::string_view op);
/// Every registered op, in registration order.
std::span<const OpSchema> all_ops();

/// The nodes of `graph` whose op is of Category::Linear (MatMul, Conv, ConvTranspose).
int linear_primitives(const Graph& graph);

/// Runs the shape rule of `node` in `graph`, checking arity and constant inputs.
/// Errors name the node.
std::vector<TensorType> infer_node(const Graph& graph, const std::string& op,
                                   const std::vector<ValueId>& inputs, const Attributes& attrs,
                                   int num_outputs, std::string_view node_label);

}  // namespace orch
