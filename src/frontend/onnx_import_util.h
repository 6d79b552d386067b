// The steps of ONNX import that need no importer state: labels, opset, node order, input
// binding, Constant nodes, output checks.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "frontend/onnx_import.h"
#include "frontend/opset_upgrade.h"

namespace orch::frontend {

/// "node 'conv1' (op Conv)", or "node producing 'y' (op Conv)" for an unnamed node.
std::string node_label(const onnx::NodeProto& node);
std::string node_label(const OnnxNode& node);

/// The model's default-domain opset; throws when it is newer than orch's.
int default_opset(const onnx::ModelProto& model);

/// Node indices in a topological order (stable: the file's order where it is valid).
/// Throws naming a node on a cycle, or the value on a duplicate output name.
std::vector<int> topological_order(const onnx::GraphProto& graph);

/// Types of the graph inputs with every dim bound: from `shapes`, from a known value, or
/// from a dim name bound by another input. Throws naming the input and dim when one stays
/// unbound.
std::vector<TensorType> bind_input_types(const std::vector<const onnx::ValueInfoProto*>& inputs,
                                         const std::map<std::string, Shape>& shapes,
                                         const std::map<std::string, const Tensor*>& known);

/// The tensor a Constant node's attributes hold (value, value_float(s), value_int(s)).
Tensor constant_node_value(const Attributes& attrs);

/// Throws naming the output when its declared dtype or dims disagree with `inferred`.
void check_declared_type(const onnx::ValueInfoProto& output, const TensorType& inferred);

/// A copy without constants that no node reads and no output returns.
Graph without_unused_constants(const Graph& graph);

/// The non-initializer inputs as declared.
std::vector<DeclaredInput> declared_graph_inputs(const onnx::GraphProto& graph);

}  // namespace orch::frontend
