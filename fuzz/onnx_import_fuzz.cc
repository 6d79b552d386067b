// Fuzz target: ONNX model bytes -> import -> verify. Import errors (orch::Error) are the
// expected outcome for broken models; anything else (a crash, a sanitizer report, another
// exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    // A base folder that does not exist: external data must fail cleanly, never read files.
    orch::Graph graph = orch::frontend::import_onnx_bytes(bytes, "/nonexistent-orch-fuzz");
    orch::verify(graph);
  } catch (const orch::Error&) {
  }
  return 0;
}
