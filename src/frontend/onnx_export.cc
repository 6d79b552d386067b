#include "frontend/onnx_export.h"

#include <onnx/onnx_pb.h>

#include "frontend/opset_upgrade.h"
#include "frontend/proto_util.h"
#include "frontend/tensor_proto.h"

namespace orch::frontend {
namespace {

constexpr int64_t kIrVersion = 8;

void set_value_info(const Value& value, onnx::ValueInfoProto& info) {
  info.set_name(value.name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx_from_dtype(value.type.dtype));
  auto* shape = tensor->mutable_shape();
  for (int64_t d : value.type.shape) shape->add_dim()->set_dim_value(d);
}

}  // namespace

std::string export_onnx_bytes(const Graph& graph) {
  onnx::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("orch");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kTargetOpset);
  onnx::GraphProto& proto = *model.mutable_graph();
  proto.set_name(graph.name);

  std::vector<bool> is_output(graph.num_values(), false);
  for (ValueId out : graph.outputs()) is_output[out] = true;
  for (ValueId in : graph.inputs()) set_value_info(graph.value(in), *proto.add_input());
  for (const Value& v : graph.values()) {
    if (!v.is_constant()) continue;
    onnx::TensorProto& init = *proto.add_initializer();
    init.set_name(v.name);
    tensor_to_proto(v.constant, init);
  }
  for (const Node& node : graph.nodes()) {
    onnx::NodeProto& n = *proto.add_node();
    n.set_op_type(node.op);
    n.set_name(node.name);
    for (ValueId in : node.inputs) n.add_input(in == kNoValue ? "" : graph.value(in).name);
    for (ValueId out : node.outputs) {
      n.add_output(graph.value(out).name);
      if (!is_output[out]) set_value_info(graph.value(out), *proto.add_value_info());
    }
    for (const auto& [name, value] : node.attrs) attr_to_proto(name, value, *n.add_attribute());
  }
  for (ValueId out : graph.outputs()) set_value_info(graph.value(out), *proto.add_output());
  return model.SerializeAsString();
}

void export_onnx_file(const Graph& graph, const std::string& path) {
  write_file(path, export_onnx_bytes(graph));
}

}  // namespace orch::frontend
