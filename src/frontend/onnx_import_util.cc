#include "frontend/onnx_import_util.h"

#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/tensor_proto.h"
#include "ir/error.h"

namespace orch::frontend {
namespace {

std::string label_of(const std::string& name, const std::string& op,
                     const std::string& first_output) {
  if (!name.empty()) return fmt::format("node '{}' (op {})", name, op);
  return fmt::format("node producing '{}' (op {})", first_output, op);
}

// A declared dim: a number, a name, or neither (unknown).
struct DeclaredDim {
  int64_t value = -1;
  std::string param;
};

std::string_view type_kind(const onnx::TypeProto& type) {
  if (type.has_sequence_type()) return "a sequence";
  if (type.has_optional_type()) return "an optional";
  if (type.has_map_type()) return "a map";
  if (type.has_sparse_tensor_type()) return "a sparse tensor";
  return "not a tensor";
}

const onnx::TypeProto::Tensor& tensor_type_of(const onnx::ValueInfoProto& info,
                                              std::string_view kind) {
  if (!info.type().has_tensor_type())
    unsupported("{} '{}' is {}; orch supports tensors only", kind, info.name(),
                type_kind(info.type()));
  return info.type().tensor_type();
}

// nullopt when the rank is not declared.
std::optional<std::vector<DeclaredDim>> declared_dims(const onnx::ValueInfoProto& info) {
  const auto& tensor = info.type().tensor_type();
  if (!tensor.has_shape()) return std::nullopt;
  std::vector<DeclaredDim> dims;
  for (const auto& d : tensor.shape().dim()) {
    DeclaredDim dim;
    if (d.has_dim_value() && d.dim_value() >= 0) dim.value = d.dim_value();
    if (d.has_dim_param()) dim.param = d.dim_param();
    dims.push_back(dim);
  }
  return dims;
}

std::string dims_text(const std::vector<DeclaredDim>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    if (dims[i].value >= 0)
      out += std::to_string(dims[i].value);
    else
      out += dims[i].param.empty() ? "?" : dims[i].param;
  }
  return out + "]";
}

// Dim names bound so far, and which input bound each.
using DimBindings = std::map<std::string, std::pair<int64_t, std::string>>;

void bind_given_shape(const onnx::ValueInfoProto& info, const Shape& shape, DimBindings& bound) {
  auto dims = declared_dims(info);
  if (!dims) return;
  check(dims->size() == shape.size(), "input '{}' has rank {} ({}), but {} is given", info.name(),
        dims->size(), dims_text(*dims), format_shape(shape));
  for (size_t i = 0; i < shape.size(); ++i) {
    const DeclaredDim& d = (*dims)[i];
    check(d.value < 0 || d.value == shape[i], "input '{}' fixes dim {} at {}, but {} is given",
          info.name(), i, d.value, format_shape(shape));
    if (d.param.empty()) continue;
    auto [it, fresh] = bound.emplace(d.param, std::pair(shape[i], info.name()));
    check(fresh || it->second.first == shape[i],
          "dim '{}' is {} in input '{}' but {} in input '{}'", d.param, it->second.first,
          it->second.second, shape[i], info.name());
  }
}

Shape declared_shape(const onnx::ValueInfoProto& info, const DimBindings& bound) {
  auto dims = declared_dims(info);
  check(dims.has_value(), "input '{}' has no declared shape; pass --shape {}=...", info.name(),
        info.name());
  Shape shape;
  for (size_t i = 0; i < dims->size(); ++i) {
    const DeclaredDim& d = (*dims)[i];
    if (d.value >= 0) {
      shape.push_back(d.value);
      continue;
    }
    check(!d.param.empty(), "input '{}' has unknown dim {}; pass --shape {}=...", info.name(), i,
          info.name());
    auto it = bound.find(d.param);
    check(it != bound.end(), "input '{}' has unbound dim '{}'; pass --shape {}=...", info.name(),
          d.param, info.name());
    shape.push_back(it->second.first);
  }
  return shape;
}

}  // namespace

std::string node_label(const onnx::NodeProto& node) {
  return label_of(node.name(), node.op_type(), node.output_size() ? node.output(0) : "");
}

std::string node_label(const OnnxNode& node) {
  return label_of(node.name, node.op, node.outputs.empty() ? "" : node.outputs[0]);
}

int default_opset(const onnx::ModelProto& model) {
  // ONNX: a model without a default-domain entry uses opset 1.
  int opset = 1;
  for (const auto& entry : model.opset_import())
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = static_cast<int>(entry.version());
  check(opset >= 1, "opset {} is not a valid opset", opset);
  if (opset > kTargetOpset)
    unsupported("opset {} is not supported (orch reads opsets 1 to {})", opset, kTargetOpset);
  return opset;
}

std::vector<int> topological_order(const onnx::GraphProto& graph) {
  int n = graph.node_size();
  std::unordered_set<std::string_view> graph_names;
  for (const auto& in : graph.input()) graph_names.insert(in.name());
  for (const auto& init : graph.initializer()) graph_names.insert(init.name());
  std::unordered_map<std::string_view, int> producer;
  for (int i = 0; i < n; ++i)
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      check(!graph_names.contains(out),
            "duplicate value name '{}': {} redefines a graph input or initializer", out,
            node_label(graph.node(i)));
      auto [it, fresh] = producer.emplace(out, i);
      check(fresh, "duplicate value name '{}': {} and {} both produce it", out,
            node_label(graph.node(it->second)), node_label(graph.node(i)));
    }
  std::vector<std::vector<int>> users(n);
  std::vector<std::set<int>> deps(n);
  for (int i = 0; i < n; ++i)
    for (const std::string& in : graph.node(i).input()) {
      auto it = producer.find(in);
      if (it != producer.end() && deps[i].insert(it->second).second) users[it->second].push_back(i);
    }
  std::vector<size_t> pending(n);
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if ((pending[i] = deps[i].size()) == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) == n) return order;
  // Every node left waits on another node left: walking such waits must come back round.
  int at = 0;
  while (pending[at] == 0) ++at;
  std::vector<bool> seen(n, false);
  while (!seen[at]) {
    seen[at] = true;
    for (int d : deps[at])
      if (pending[d] > 0) {
        at = d;
        break;
      }
  }
  fail("the graph has a cycle through {}", node_label(graph.node(at)));
}

std::vector<TensorType> bind_input_types(const std::vector<const onnx::ValueInfoProto*>& inputs,
                                         const std::map<std::string, Shape>& shapes,
                                         const std::map<std::string, const Tensor*>& known) {
  DimBindings bound;
  std::vector<std::optional<Shape>> given(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& name = inputs[i]->name();
    tensor_type_of(*inputs[i], "input");
    if (auto it = shapes.find(name); it != shapes.end())
      given[i] = it->second;
    else if (auto k = known.find(name); k != known.end())
      given[i] = k->second->shape();
    if (given[i]) bind_given_shape(*inputs[i], *given[i], bound);
  }
  std::vector<TensorType> types;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& tensor = inputs[i]->type().tensor_type();
    std::string label = fmt::format("input '{}'", inputs[i]->name());
    DType dtype = dtype_from_onnx(tensor.elem_type(), label);
    types.push_back({dtype, given[i] ? *given[i] : declared_shape(*inputs[i], bound)});
    try {
      num_elements(types.back().shape);
    } catch (const Error& e) {
      rethrow_with_context(e, label);
    }
  }
  return types;
}

Tensor constant_node_value(const Attributes& attrs) {
  check(attrs.size() == 1, "a Constant needs exactly one attribute, it has {}", attrs.size());
  const auto& [name, value] = *attrs.begin();
  if (name == "value") {
    const Tensor* t = attr_tensor(attrs, "value");
    check(t != nullptr, "attribute 'value' must be a tensor");
    return *t;
  }
  if (name == "value_float") return Tensor::scalar(DType::f32, attr_float(attrs, name, 0));
  if (name == "value_int") {
    std::vector<int64_t> v = {attr_int(attrs, name, 0)};
    return Tensor::from_ints(DType::i64, {}, v);
  }
  if (name == "value_floats") {
    std::vector<float> f = attr_floats(attrs, name);
    std::vector<double> v(f.begin(), f.end());
    return Tensor::from_doubles(DType::f32, {static_cast<int64_t>(v.size())}, v);
  }
  if (name == "value_ints") {
    std::vector<int64_t> v = attr_ints(attrs, name);
    return Tensor::from_ints(DType::i64, {static_cast<int64_t>(v.size())}, v);
  }
  unsupported("attribute '{}' is not supported (orch has no string tensors)", name);
}

void check_declared_type(const onnx::ValueInfoProto& output, const TensorType& inferred) {
  if (!output.has_type()) return;
  const auto& tensor = tensor_type_of(output, "output");
  auto dims = declared_dims(output);
  std::string declared = fmt::format("{}{}", onnx_dtype_name(tensor.elem_type()),
                                     dims ? dims_text(*dims) : std::string("[...]"));
  bool same = tensor.elem_type() == 0 || tensor.elem_type() == onnx_from_dtype(inferred.dtype);
  if (dims) {
    same = same && dims->size() == inferred.shape.size();
    for (size_t i = 0; same && i < dims->size(); ++i)
      same = (*dims)[i].value < 0 || (*dims)[i].value == inferred.shape[i];
  }
  check(same, "output '{}' is declared {} but orch infers {}", output.name(), declared,
        format_type(inferred));
}

Graph without_unused_constants(const Graph& graph) {
  std::vector<bool> used(graph.num_values(), false);
  for (const Node& node : graph.nodes())
    for (ValueId in : node.inputs)
      if (in != kNoValue) used[in] = true;
  for (ValueId out : graph.outputs()) used[out] = true;
  Graph result;
  result.name = graph.name;
  std::vector<ValueId> remap(graph.num_values(), kNoValue);
  for (ValueId in : graph.inputs())
    remap[in] = result.add_input(graph.value(in).name, graph.value(in).type);
  for (ValueId v = 0; v < static_cast<ValueId>(graph.num_values()); ++v)
    if (graph.value(v).is_constant() && used[v])
      remap[v] = result.add_constant(graph.value(v).name, graph.value(v).constant);
  for (const Node& node : graph.nodes()) copy_node(result, graph, node, remap);
  std::vector<ValueId> outputs;
  for (ValueId out : graph.outputs()) outputs.push_back(remap[out]);
  result.set_outputs(std::move(outputs));
  return result;
}

std::vector<DeclaredInput> declared_graph_inputs(const onnx::GraphProto& graph) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<DeclaredInput> result;
  for (const auto& in : graph.input()) {
    if (initializers.contains(in.name())) continue;
    DeclaredInput decl{in.name(), "?", {}};
    if (in.type().has_tensor_type()) {
      int elem = in.type().tensor_type().elem_type();
      try {
        decl.dtype = std::string(dtype_name(dtype_from_onnx(elem, in.name())));
      } catch (const Error&) {
        decl.dtype = onnx_dtype_name(elem);
      }
      if (auto dims = declared_dims(in))
        for (const DeclaredDim& d : *dims)
          decl.dims.push_back(d.value >= 0 ? std::to_string(d.value)
                                           : (d.param.empty() ? "?" : d.param));
    }
    result.push_back(std::move(decl));
  }
  return result;
}

}  // namespace orch::frontend
