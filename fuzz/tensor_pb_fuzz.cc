// Fuzz target: a serialized ONNX TensorProto (the test data's .pb files) -> Tensor.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

#include "frontend/tensor_proto.h"
#include "ir/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  try {
    // A base folder that does not exist: external data must fail cleanly, never read files.
    orch::Tensor t = orch::frontend::tensor_from_proto(proto, "/nonexistent-orch-fuzz");
    onnx::TensorProto back;
    orch::frontend::tensor_to_proto(t, back);
  } catch (const orch::Error&) {
  }
  return 0;
}
