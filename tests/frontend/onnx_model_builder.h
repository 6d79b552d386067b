// Builds small ONNX models with the protobuf API for the frontend tests.
#pragma once

// test_frontend links the ONNX targets only through orch_frontend, whose compile definitions
// are private; the ONNX headers need these two.
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#include <onnx/onnx_pb.h>

#include "frontend/onnx_import.h"

#include <unistd.h>

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace orch::frontend::testing {

/// A declared dim: a number or a name.
using Dim = std::variant<int64_t, std::string>;

/// An empty model at the given default-domain opset.
inline onnx::ModelProto empty_model(int opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* entry = model.add_opset_import();
  entry->set_domain("");
  entry->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

inline void set_type(onnx::ValueInfoProto& info, const std::string& name, int elem,
                     const std::vector<Dim>& dims) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    if (const auto* v = std::get_if<int64_t>(&d))
      shape->add_dim()->set_dim_value(*v);
    else
      shape->add_dim()->set_dim_param(std::get<std::string>(d));
  }
}

inline void add_input(onnx::ModelProto& model, const std::string& name,
                      const std::vector<Dim>& dims, int elem = onnx::TensorProto::FLOAT) {
  set_type(*model.mutable_graph()->add_input(), name, elem, dims);
}

inline void add_output(onnx::ModelProto& model, const std::string& name,
                       const std::vector<Dim>& dims, int elem = onnx::TensorProto::FLOAT) {
  set_type(*model.mutable_graph()->add_output(), name, elem, dims);
}

inline onnx::NodeProto& add_node(onnx::ModelProto& model, const std::string& op,
                                 const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::string& name = "") {
  onnx::NodeProto& node = *model.mutable_graph()->add_node();
  node.set_op_type(op);
  node.set_name(name);
  for (const auto& in : inputs) node.add_input(in);
  for (const auto& out : outputs) node.add_output(out);
  return node;
}

inline void add_int_attr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

inline void add_ints_attr(onnx::NodeProto& node, const std::string& name,
                          const std::vector<int64_t>& values) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

inline void add_float_attr(onnx::NodeProto& node, const std::string& name, float value) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::FLOAT);
  attr->set_f(value);
}

/// An f32 initializer with float_data.
inline onnx::TensorProto& add_float_initializer(onnx::ModelProto& model, const std::string& name,
                                                const std::vector<int64_t>& dims,
                                                const std::vector<float>& values) {
  onnx::TensorProto& t = *model.mutable_graph()->add_initializer();
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

/// Imports an in-memory model (no external data).
inline orch::Graph import(const onnx::ModelProto& model, const ImportOptions& options = {}) {
  return import_onnx_bytes(model.SerializeAsString(), "", options);
}

/// A fresh, empty folder under the system temp dir, named after the test and process.
inline std::filesystem::path temp_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("orch_frontend_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace orch::frontend::testing
