// ONNX TensorProto <-> orch::Tensor, and the test-data `.pb` tensor files.
//
// The ONNX protobuf types are only forward-declared here so that users of this header (tools,
// tests) need not see the ONNX headers.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/tensor.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace orch::frontend {

/// orch dtype of an ONNX TensorProto data type; throws naming the type when orch has none
/// (string, complex, float8, ...). `what` names the tensor or value in the message.
DType dtype_from_onnx(int onnx_type, std::string_view what);
/// ONNX TensorProto data type of an orch dtype.
int onnx_from_dtype(DType dtype);
/// "FLOAT", "STRING", "COMPLEX64", or "unknown (17)" for values this ONNX version lacks.
std::string onnx_dtype_name(int onnx_type);

/// Converts a TensorProto (raw_data, the typed fields, or external data read relative to
/// `base_dir`). When `owner` keeps `proto` alive, aligned raw_data is shared, not copied.
/// Errors name the tensor.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::shared_ptr<const void>& owner = nullptr);
/// Fills `proto` (name untouched) with the tensor's dtype, dims and raw_data.
void tensor_to_proto(const Tensor& tensor, onnx::TensorProto& proto);

/// Reads a serialized TensorProto file (the test data's input_N.pb / output_N.pb).
/// Errors name the file.
Tensor read_tensor_pb_file(const std::string& path);
/// Writes `tensor` as a serialized TensorProto named `name`; throws naming the file on failure.
void write_tensor_pb_file(const Tensor& tensor, const std::string& path,
                          const std::string& name = "");

}  // namespace orch::frontend
