// ONNX import. The steps, in order:
//   1. parse the ModelProto and find the default-domain opset (1-17);
//   2. initializers become constants (sharing the protobuf's bytes);
//   3. graph inputs become Graph inputs with every dim bound (--shape, shared dim names, or a
//      known input value); known inputs that feed a constant slot become constants;
//   4. nodes are sorted topologically, rewritten to opset 17 (opset_upgrade.h), typed with the
//      registry's shape rules, and folded with the interpreter when all their inputs are
//      constant;
//   5. declared output types are checked, unused constants dropped, and the Graph verified.
#include "frontend/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx_import_util.h"
#include "frontend/opset_upgrade.h"
#include "frontend/proto_util.h"
#include "frontend/tensor_proto.h"
#include "interp/interpreter.h"
#include "interp/kernel.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/verifier.h"

namespace orch::frontend {
namespace {

// Ops whose results are random: folding them would freeze one draw into the model.
constexpr std::string_view kNeverFold[] = {"RandomNormalLike", "RandomUniformLike", "Multinomial",
                                           "Bernoulli", "Dropout"};

// The largest result import computes by folding (1 GiB).
constexpr size_t kMaxFoldBytes = size_t{1} << 30;

// Ops whose results depend only on their input's type: they fold once shapes are static.
constexpr std::string_view kShapeOnly[] = {"Shape", "Size"};

bool listed(std::span<const std::string_view> ops, std::string_view op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// A stand-in for a non-constant input of a shape-only op: the right type, no element storage
// (those kernels read only the shape).
Tensor type_only_tensor(const TensorType& type) {
  static const auto kNoData = std::make_shared<const std::byte>();
  return Tensor::wrap(type.dtype, type.shape, kNoData, kNoData.get());
}

class Importer final : public UpgradeContext {
 public:
  Importer(std::shared_ptr<const onnx::ModelProto> model, std::string base_dir,
           const ImportOptions& options)
      : model_(std::move(model)),
        proto_(model_->graph()),
        base_dir_(std::move(base_dir)),
        options_(options) {}

  Graph run() {
    opset_ = default_opset(*model_);
    graph_.name = proto_.name().empty() ? "main" : proto_.name();
    collect_names();
    add_initializers();
    std::vector<int> order = topological_order(proto_);
    mark_constant_feeders(order);
    add_inputs();
    for (int i : order) import_node(proto_.node(i));
    set_outputs();
    Graph result = without_unused_constants(graph_);
    verify(result);
    return result;
  }

  const TensorType& type_of(const std::string& name) const override {
    ValueId v = graph_.find_value(name);
    check(v != kNoValue, "value '{}' is not defined", name);
    return graph_.value(v).type;
  }

  const Tensor* constant_of(const std::string& name) const override {
    ValueId v = graph_.find_value(name);
    return v != kNoValue && graph_.value(v).is_constant() ? &graph_.value(v).constant : nullptr;
  }

  bool is_used(const std::string& name) const override { return used_.contains(name); }

  std::string fresh_name(std::string_view base) override {
    while (true) {
      std::string name = fmt::format("{}_{}", base, next_fresh_++);
      if (names_.insert(name).second) return name;
    }
  }

  std::string add_constant(Tensor data, std::string_view base) override {
    std::string name = fresh_name(base);
    graph_.add_constant(name, std::move(data));
    return name;
  }

 private:
  void collect_names() {
    for (const auto& in : proto_.input()) names_.insert(in.name());
    for (const auto& init : proto_.initializer()) names_.insert(init.name());
    for (const auto& node : proto_.node()) {
      names_.insert(node.output().begin(), node.output().end());
      for (const std::string& in : node.input())
        if (!in.empty()) used_.insert(in);
    }
    for (const auto& out : proto_.output()) used_.insert(out.name());
  }

  void add_initializers() {
    std::shared_ptr<const void> owner = model_;
    for (const auto& init : proto_.initializer()) {
      check(!init.name().empty(), "an initializer has no name");
      check(graph_.find_value(init.name()) == kNoValue, "duplicate value name '{}'", init.name());
      graph_.add_constant(init.name(), tensor_from_proto(init, base_dir_, owner));
    }
  }

  // Values whose contents decide a shape: the constant slots of each node's schema, and
  // (transitively) everything those are computed from. They are folded even without
  // fold_constants, and known inputs among them are bound.
  void mark_constant_feeders(const std::vector<int>& order) {
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < proto_.node_size(); ++i)
      for (const std::string& out : proto_.node(i).output()) producer.emplace(out, i);
    std::vector<std::string> work;
    for (int i : order) {
      const onnx::NodeProto& node = proto_.node(i);
      const OpSchema* schema = find_op(upgraded_op_name(node.op_type()));
      if (schema == nullptr) continue;
      for (int slot : schema->constant_inputs)
        if (slot < node.input_size() && !node.input(slot).empty()) work.push_back(node.input(slot));
    }
    while (!work.empty()) {
      std::string name = std::move(work.back());
      work.pop_back();
      if (!shape_feeders_.insert(name).second) continue;
      auto it = producer.find(name);
      // A shape-only op needs its input's type, not its contents.
      if (it == producer.end() || listed(kShapeOnly, proto_.node(it->second).op_type())) continue;
      for (const std::string& in : proto_.node(it->second).input())
        if (!in.empty()) work.push_back(in);
    }
  }

  void add_inputs() {
    std::vector<const onnx::ValueInfoProto*> inputs;
    for (const auto& in : proto_.input())
      if (graph_.find_value(in.name()) == kNoValue) inputs.push_back(&in);
    for (const auto& [name, shape] : options_.shapes) {
      bool found = false;
      for (const auto* in : inputs) found = found || in->name() == name;
      check(found, "--shape names '{}', which is not an input of the model", name);
    }
    std::map<std::string, const Tensor*> known;
    for (const auto* in : inputs) {
      auto it = options_.known_inputs.find(in->name());
      if (it != options_.known_inputs.end() && shape_feeders_.contains(in->name()))
        known.emplace(in->name(), &it->second);
    }
    std::vector<TensorType> types = bind_input_types(inputs, options_.shapes, known);
    for (size_t i = 0; i < inputs.size(); ++i) {
      ValueId v = graph_.add_input(inputs[i]->name(), types[i]);
      auto it = known.find(inputs[i]->name());
      if (it != known.end()) graph_.bind_input(v, *it->second);
    }
  }

  void import_node(const onnx::NodeProto& proto) {
    std::string label = node_label(proto);
    if (!proto.domain().empty() && proto.domain() != "ai.onnx")
      unsupported("{}: domain '{}' is not supported (orch supports the default ONNX domain)", label,
                  proto.domain());
    if (find_op(upgraded_op_name(proto.op_type())) == nullptr && proto.op_type() != "Constant")
      unsupported("{}: unsupported op '{}'", label, proto.op_type());
    OnnxNode node{proto.op_type(),
                  proto.name(),
                  {proto.input().begin(), proto.input().end()},
                  {proto.output().begin(), proto.output().end()},
                  {}};
    std::shared_ptr<const void> owner = model_;
    for (const auto& attr : proto.attribute()) {
      try {
        node.attrs[attr.name()] = attr_from_proto(attr, base_dir_, owner);
      } catch (const Error& e) {
        rethrow_with_context(e, label);
      }
    }
    if (node.op == "Constant") return add_constant_node(node, label);
    std::vector<OnnxNode> nodes;
    try {
      nodes = upgrade_node(std::move(node), opset_, *this);
    } catch (const Error& e) {
      rethrow_with_context(e, fmt::format("{} at opset {}", label, opset_));
    }
    for (OnnxNode& n : nodes) add_node(std::move(n));
  }

  void add_constant_node(const OnnxNode& node, const std::string& label) {
    check(node.outputs.size() == 1 && !node.outputs[0].empty(), "{}: needs one output", label);
    try {
      graph_.add_constant(node.outputs[0], constant_node_value(node.attrs));
    } catch (const Error& e) {
      rethrow_with_context(e, label);
    }
  }

  void add_node(OnnxNode node) {
    std::string label = node_label(node);
    while (!node.inputs.empty() && node.inputs.back().empty()) node.inputs.pop_back();
    while (!node.outputs.empty() && node.outputs.back().empty()) node.outputs.pop_back();
    std::vector<ValueId> inputs;
    bool shape_only = listed(kShapeOnly, node.op);
    bool all_constant = true;
    for (const std::string& name : node.inputs) {
      ValueId v = name.empty() ? kNoValue : graph_.find_value(name);
      check(name.empty() || v != kNoValue, "{}: input '{}' is not defined", label, name);
      inputs.push_back(v);
      all_constant = all_constant && (v == kNoValue || graph_.value(v).is_constant() || shape_only);
    }
    for (std::string& out : node.outputs) {
      if (out.empty()) out = fresh_name("unused");
      check(graph_.find_value(out) == kNoValue, "{}: duplicate value name '{}'", label, out);
    }
    auto num_outputs = static_cast<int>(node.outputs.size());
    std::vector<TensorType> types =
        infer_node(graph_, node.op, inputs, node.attrs, num_outputs, label);
    bool feeds_shape = false;
    for (const std::string& out : node.outputs)
      feeds_shape = feeds_shape || shape_feeders_.contains(out);
    bool fold = all_constant && !inputs.empty() && (options_.fold_constants || feeds_shape) &&
                !listed(kNeverFold, node.op) && interp::find_kernel(node.op) != nullptr &&
                fits_fold_limit(types, feeds_shape, label);
    if (fold) {
      std::vector<Tensor> args;
      for (ValueId v : inputs) {
        if (v == kNoValue)
          args.emplace_back();
        else if (graph_.value(v).is_constant())
          args.push_back(graph_.value(v).constant);
        else
          args.push_back(type_only_tensor(graph_.value(v).type));
      }
      std::vector<Tensor> results;
      try {
        results = interp::run_op(node.op, node.attrs, std::move(args), types);
      } catch (const Error& e) {
        rethrow_with_context(e, label + ": folding failed");
      }
      for (int i = 0; i < num_outputs; ++i) graph_.add_constant(node.outputs[i], results[i]);
      return;
    }
    graph_.add_node(node.op, std::move(inputs), std::move(node.attrs), std::move(node.outputs),
                    std::move(types), node.name);
  }

  // Folding allocates the results: a hostile model must not make import ask for terabytes.
  // Results over the limit stay nodes, except shape values, for which that size is absurd.
  static bool fits_fold_limit(const std::vector<TensorType>& types, bool feeds_shape,
                              const std::string& label) {
    for (const TensorType& type : types) {
      int64_t numel = num_elements(type.shape);
      auto limit = static_cast<int64_t>(kMaxFoldBytes / dtype_size(type.dtype));
      if (numel <= limit) continue;
      check(!feeds_shape, "{}: computes a shape value of type {}, over the {} MiB limit", label,
            format_type(type), kMaxFoldBytes >> 20);
      return false;
    }
    return true;
  }

  void set_outputs() {
    std::vector<ValueId> outputs;
    for (const auto& out : proto_.output()) {
      ValueId v = graph_.find_value(out.name());
      check(v != kNoValue, "graph output '{}' is not defined", out.name());
      check_declared_type(out, graph_.value(v).type);
      outputs.push_back(v);
    }
    check(!outputs.empty(), "the model has no outputs");
    graph_.set_outputs(std::move(outputs));
  }

  std::shared_ptr<const onnx::ModelProto> model_;
  const onnx::GraphProto& proto_;
  std::string base_dir_;
  const ImportOptions& options_;
  int opset_ = 0;
  Graph graph_;
  std::unordered_set<std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_set<std::string> shape_feeders_;
  int64_t next_fresh_ = 0;
};

std::shared_ptr<onnx::ModelProto> parse_model(const std::string& bytes) {
  auto model = std::make_shared<onnx::ModelProto>();
  check(model->ParseFromString(bytes),
        "not an ONNX model (the protobuf does not parse: truncated or another format)");
  check(model->ir_version() > 0 && model->has_graph(),
        "not an ONNX model (no ir_version or no graph)");
  return model;
}

// Errors name the file; its bytes are freed once parsed (constants share the ModelProto).
std::shared_ptr<onnx::ModelProto> parse_model_file(const std::string& path) {
  std::string bytes = read_file(path);
  try {
    return parse_model(bytes);
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                        const ImportOptions& options) {
  return Importer(parse_model(bytes), base_dir, options).run();
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::shared_ptr<onnx::ModelProto> model = parse_model_file(path);
  try {
    std::string dir = std::filesystem::path(path).parent_path().string();
    return Importer(std::move(model), dir, options).run();
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

std::vector<DeclaredInput> declared_inputs(const std::string& path) {
  std::shared_ptr<onnx::ModelProto> model = parse_model_file(path);
  try {
    return declared_graph_inputs(model->graph());
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

}  // namespace orch::frontend
