#include "frontend/proto_util.h"

#include <fstream>
#include <sstream>

#include "frontend/tensor_proto.h"
#include "ir/error.h"

namespace orch::frontend {
namespace {

using onnx::AttributeProto;

// Very old models leave `type` unset; the field that is present tells the kind.
AttributeProto::AttributeType attr_kind(const AttributeProto& proto) {
  if (proto.type() != AttributeProto::UNDEFINED) return proto.type();
  if (proto.has_f()) return AttributeProto::FLOAT;
  if (proto.has_i()) return AttributeProto::INT;
  if (proto.has_s()) return AttributeProto::STRING;
  if (proto.has_t()) return AttributeProto::TENSOR;
  if (proto.has_g()) return AttributeProto::GRAPH;
  if (proto.floats_size() > 0) return AttributeProto::FLOATS;
  if (proto.strings_size() > 0) return AttributeProto::STRINGS;
  return AttributeProto::INTS;
}

}  // namespace

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  check(file.good(), "{}: cannot open file", path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  check(!file.bad(), "{}: read error", path);
  return std::move(bytes).str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  check(file.good(), "{}: cannot open file for writing", path);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  check(file.good(), "{}: write error", path);
}

AttrValue attr_from_proto(const AttributeProto& proto, const std::string& base_dir,
                          const std::shared_ptr<const void>& owner) {
  if (!proto.ref_attr_name().empty())
    unsupported("attribute '{}' refers to a function attribute", proto.name());
  switch (attr_kind(proto)) {
    case AttributeProto::FLOAT:
      return proto.f();
    case AttributeProto::INT:
      return static_cast<int64_t>(proto.i());
    case AttributeProto::STRING:
      return proto.s();
    case AttributeProto::TENSOR:
      return tensor_from_proto(proto.t(), base_dir, owner);
    case AttributeProto::FLOATS:
      return std::vector<float>(proto.floats().begin(), proto.floats().end());
    case AttributeProto::INTS:
      return std::vector<int64_t>(proto.ints().begin(), proto.ints().end());
    case AttributeProto::STRINGS:
      return std::vector<std::string>(proto.strings().begin(), proto.strings().end());
    default:
      unsupported("attribute '{}' is of kind {}, which orch does not support", proto.name(),
                  AttributeProto::AttributeType_Name(attr_kind(proto)));
  }
}

void attr_to_proto(const std::string& name, const AttrValue& value, AttributeProto& proto) {
  proto.set_name(name);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          proto.set_type(AttributeProto::INT);
          proto.set_i(x);
        } else if constexpr (std::is_same_v<T, float>) {
          proto.set_type(AttributeProto::FLOAT);
          proto.set_f(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          proto.set_type(AttributeProto::STRING);
          proto.set_s(x);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          proto.set_type(AttributeProto::TENSOR);
          tensor_to_proto(x, *proto.mutable_t());
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          proto.set_type(AttributeProto::INTS);
          for (int64_t v : x) proto.add_ints(v);
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          proto.set_type(AttributeProto::FLOATS);
          for (float v : x) proto.add_floats(v);
        } else {
          proto.set_type(AttributeProto::STRINGS);
          for (const std::string& v : x) proto.add_strings(v);
        }
      },
      value);
}

}  // namespace orch::frontend
