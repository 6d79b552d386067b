// Opset normalization: rewrites nodes of older default-domain opsets (1-16) into orch's internal
// form, ONNX opset 17. The rules are data (op, opset range, rewrite) in opset_upgrade.cc.
//
// Example: a Squeeze node from an opset-11 model, Squeeze(x) {axes = [0]}, becomes
// Squeeze(x, c) with a new constant c = i64[1]{0}, as opset 13 moved `axes` to an input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace orch::frontend {

/// The opset orch's op set follows.
inline constexpr int kTargetOpset = 17;

/// A node as the model states it, before it enters the Graph. "" is an absent input/output.
struct OnnxNode {
  std::string op;
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  Attributes attrs;
};

/// What a rewrite may ask of the model being imported.
class UpgradeContext {
 public:
  virtual ~UpgradeContext() = default;
  /// Type of a value already imported; throws naming the value when unknown.
  virtual const TensorType& type_of(const std::string& name) const = 0;
  /// Constant contents of a value, or nullptr when it is not a constant.
  virtual const Tensor* constant_of(const std::string& name) const = 0;
  /// Whether a node or a graph output reads the value.
  virtual bool is_used(const std::string& name) const = 0;
  /// A value name used nowhere in the model, derived from `base`.
  virtual std::string fresh_name(std::string_view base) = 0;
  /// Adds a constant under a fresh name derived from `base`; returns the name.
  virtual std::string add_constant(Tensor data, std::string_view base) = 0;
};

/// Rewrites `node`, taken from a model whose default-domain opset is `opset`, into opset-17
/// nodes (in order; the last ones produce the original outputs). Throws Error (without the
/// node label: the caller adds it) when the opset's form cannot be expressed.
std::vector<OnnxNode> upgrade_node(OnnxNode node, int opset, UpgradeContext& ctx);

/// The opset-17 op that `op` becomes (Upsample -> Resize, ...); `op` itself otherwise.
std::string_view upgraded_op_name(std::string_view op);

}  // namespace orch::frontend
