#include "frontend/tensor_proto.h"

#include <onnx/onnx_pb.h>
// After onnx_pb.h, which defines the macros it uses.
#include <onnx/onnx-data.pb.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "frontend/proto_util.h"
#include "ir/error.h"

namespace orch::frontend {
namespace {

using onnx::TensorProto;

// ONNX data type of each orch dtype, indexed by DType.
constexpr std::array<int, kNumDTypes> kOnnxOf = {
    TensorProto::FLOAT, TensorProto::DOUBLE, TensorProto::FLOAT16, TensorProto::BFLOAT16,
    TensorProto::INT8,  TensorProto::UINT8,  TensorProto::INT16,   TensorProto::UINT16,
    TensorProto::INT32, TensorProto::UINT32, TensorProto::INT64,   TensorProto::UINT64,
    TensorProto::BOOL,
};

std::string tensor_label(const TensorProto& proto) {
  return proto.name().empty() ? std::string("tensor") : fmt::format("tensor '{}'", proto.name());
}

// Bytes of `numel` elements; throws when that overflows.
int64_t byte_size(int64_t numel, DType dtype, const TensorProto& proto) {
  auto size = static_cast<int64_t>(dtype_size(dtype));
  check(numel <= std::numeric_limits<int64_t>::max() / size, "{}: too many elements ({})",
        tensor_label(proto), numel);
  return numel * size;
}

// Number of values in the typed field that holds `dtype`.
int64_t typed_field_size(const TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::f32:
      return proto.float_data_size();
    case DType::f64:
      return proto.double_data_size();
    case DType::i64:
      return proto.int64_data_size();
    case DType::u32:
    case DType::u64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
  }
}

// Copies a typed repeated field into `t`, element by element, as the C type `T`.
template <typename T, typename Field>
void copy_field(const Field& field, Tensor& t, const TensorProto& proto) {
  T* out = t.mutable_data<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
}

// The int32_data field carries every dtype narrower than 32 bits (f16/bf16 as bit patterns).
void copy_int32_field(const TensorProto& proto, Tensor& t) {
  const auto& field = proto.int32_data();
  switch (t.dtype()) {
    case DType::i8:
      return copy_field<int8_t>(field, t, proto);
    case DType::u8:
    case DType::boolean:
      return copy_field<uint8_t>(field, t, proto);
    case DType::i16:
      return copy_field<int16_t>(field, t, proto);
    case DType::u16:
    case DType::f16:
    case DType::bf16:
      return copy_field<uint16_t>(field, t, proto);
    case DType::i32:
      return copy_field<int32_t>(field, t, proto);
    default:
      fail("{}: int32_data cannot hold {}", tensor_label(proto), dtype_name(t.dtype()));
  }
}

void copy_typed_fields(const TensorProto& proto, Tensor& t) {
  switch (t.dtype()) {
    case DType::f32:
      return copy_field<float>(proto.float_data(), t, proto);
    case DType::f64:
      return copy_field<double>(proto.double_data(), t, proto);
    case DType::i64:
      return copy_field<int64_t>(proto.int64_data(), t, proto);
    case DType::u32:
      return copy_field<uint32_t>(proto.uint64_data(), t, proto);
    case DType::u64:
      return copy_field<uint64_t>(proto.uint64_data(), t, proto);
    default:
      return copy_int32_field(proto, t);
  }
}

// Rejects locations that leave the model's folder: a model file must not read arbitrary files.
std::filesystem::path external_path(const std::string& base_dir, const std::string& location,
                                    const TensorProto& proto) {
  std::filesystem::path rel(location);
  check(!location.empty(), "{}: external data has no location", tensor_label(proto));
  check(rel.is_relative(), "{}: external data location '{}' must be relative to the model",
        tensor_label(proto), location);
  for (const auto& part : rel)
    check(part != "..", "{}: external data location '{}' leaves the model's folder",
          tensor_label(proto), location);
  return std::filesystem::path(base_dir.empty() ? "." : base_dir) / rel;
}

int64_t parse_external_int(const std::string& text, std::string_view key,
                           const TensorProto& proto) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  check(used == text.size() && v >= 0, "{}: external data {} '{}' is not a valid number",
        tensor_label(proto), key, text);
  return v;
}

Tensor read_external(const TensorProto& proto, const std::string& base_dir, DType dtype,
                     Shape shape) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = parse_external_int(entry.value(), "offset", proto);
    if (entry.key() == "length") length = parse_external_int(entry.value(), "length", proto);
  }
  std::filesystem::path path = external_path(base_dir, location, proto);
  std::ifstream file(path, std::ios::binary);
  check(file.good(), "{}: external data file '{}' cannot be opened", tensor_label(proto),
        path.string());
  file.seekg(0, std::ios::end);
  auto file_size = static_cast<int64_t>(file.tellg());
  int64_t need = byte_size(num_elements(shape), dtype, proto);
  check(length < 0 || length == need, "{}: external data length {} but {} {} needs {} bytes",
        tensor_label(proto), length, dtype_name(dtype), format_shape(shape), need);
  check(offset <= file_size && need <= file_size - offset,
        "{}: external data needs bytes [{}, {}) but '{}' has {} bytes", tensor_label(proto), offset,
        offset + need, path.string(), file_size);
  Tensor t(dtype, std::move(shape));
  file.seekg(offset);
  file.read(reinterpret_cast<char*>(t.mutable_bytes()), need);
  check(file.good() || need == 0, "{}: reading external data from '{}' failed", tensor_label(proto),
        path.string());
  return t;
}

}  // namespace

std::string onnx_dtype_name(int onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_type));
  return fmt::format("unknown ({})", onnx_type);
}

DType dtype_from_onnx(int onnx_type, std::string_view what) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kOnnxOf[i] == onnx_type) return static_cast<DType>(i);
  unsupported("{} has data type {}, which orch does not support", what, onnx_dtype_name(onnx_type));
}

int onnx_from_dtype(DType dtype) {
  return kOnnxOf[static_cast<int>(dtype)];
}

Tensor tensor_from_proto(const TensorProto& proto, const std::string& base_dir,
                         const std::shared_ptr<const void>& owner) {
  std::string label = tensor_label(proto);
  if (proto.has_segment()) unsupported("{}: segmented tensors are not supported", label);
  DType dtype = dtype_from_onnx(proto.data_type(), label);
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape) check(d >= 0, "{}: negative dim in {}", label, format_shape(shape));
  int64_t numel = 0;
  try {
    numel = num_elements(shape);
  } catch (const Error& e) {
    rethrow_with_context(e, label);
  }
  // Sizes are checked against the data before allocating: a corrupt file must not ask for
  // terabytes.
  if (proto.data_location() == TensorProto::EXTERNAL)
    return read_external(proto, base_dir, dtype, shape);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    int64_t need = byte_size(numel, dtype, proto);
    check(static_cast<int64_t>(raw.size()) == need, "{}: raw_data has {} bytes, {} {} needs {}",
          label, raw.size(), dtype_name(dtype), format_shape(shape), need);
    bool aligned = reinterpret_cast<uintptr_t>(raw.data()) % dtype_size(dtype) == 0;
    // Share the protobuf's bytes when their owner stays alive and the alignment allows.
    if (owner != nullptr && aligned && !raw.empty())
      return Tensor::wrap(dtype, std::move(shape), owner, raw.data());
    Tensor t(dtype, std::move(shape));
    if (!raw.empty()) std::memcpy(t.mutable_bytes(), raw.data(), raw.size());
    return t;
  }
  check(numel == typed_field_size(proto, dtype), "{}: {} values for shape {}", label,
        typed_field_size(proto, dtype), format_shape(shape));
  Tensor t(dtype, std::move(shape));
  copy_typed_fields(proto, t);
  return t;
}

void tensor_to_proto(const Tensor& tensor, TensorProto& proto) {
  proto.set_data_type(onnx_from_dtype(tensor.dtype()));
  proto.clear_dims();
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  proto.set_raw_data(reinterpret_cast<const char*>(tensor.bytes()), tensor.nbytes());
}

Tensor read_tensor_pb_file(const std::string& path) {
  std::string bytes = read_file(path);
  TensorProto proto;
  check(proto.ParseFromString(bytes), "{}: not a serialized ONNX TensorProto", path);
  try {
    std::string dir = std::filesystem::path(path).parent_path().string();
    return tensor_from_proto(proto, dir);
  } catch (const Error& e) {
    // Test data also stores sequences and optionals; say so rather than report garbage dims.
    onnx::SequenceProto sequence;
    onnx::OptionalProto optional;
    if (sequence.ParseFromString(bytes) && sequence.elem_type() != 0 &&
        sequence.elem_type() <= onnx::SequenceProto::OPTIONAL)
      unsupported("{}: holds a sequence, not a tensor; orch supports tensors only", path);
    if (optional.ParseFromString(bytes) && optional.elem_type() != 0 &&
        optional.elem_type() <= onnx::OptionalProto::OPTIONAL)
      unsupported("{}: holds an optional, not a tensor; orch supports tensors only", path);
    rethrow_with_context(e, path);
  }
}

void write_tensor_pb_file(const Tensor& tensor, const std::string& path, const std::string& name) {
  TensorProto proto;
  proto.set_name(name);
  tensor_to_proto(tensor, proto);
  write_file(path, proto.SerializeAsString());
}

}  // namespace orch::frontend
