// Helpers shared by ONNX import and export: files, attributes, messages.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "ir/attribute.h"

namespace orch::frontend {

/// The whole file; throws naming the file when it cannot be read.
std::string read_file(const std::string& path);
/// Writes (replaces) the file; throws naming the file on failure.
void write_file(const std::string& path, const std::string& bytes);

/// An ONNX attribute as an orch attribute. Graph, sparse-tensor and type attributes are
/// errors naming the attribute. Tensor attributes share bytes with `owner` when possible.
AttrValue attr_from_proto(const onnx::AttributeProto& proto, const std::string& base_dir,
                          const std::shared_ptr<const void>& owner);
/// Fills `proto` (its name included) from an orch attribute.
void attr_to_proto(const std::string& name, const AttrValue& value, onnx::AttributeProto& proto);

}  // namespace orch::frontend
