#include "frontend/model_ops.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <set>

#include "ir/error.h"

namespace orch::frontend {

std::vector<std::string> model_op_types(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open '{}'", path);
  onnx::ModelProto model;
  check(model.ParseFromIstream(&in), "'{}' is not a valid ONNX model", path);
  std::set<std::string> ops;
  for (const auto& node : model.graph().node()) {
    bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
    ops.insert(default_domain ? node.op_type() : node.domain() + "::" + node.op_type());
  }
  return {ops.begin(), ops.end()};
}

}  // namespace orch::frontend
