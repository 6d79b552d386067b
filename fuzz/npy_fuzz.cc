// Fuzz target: the .npy reader. A tensor that parses must serialize again.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/error.h"
#include "ir/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    orch::Tensor t = orch::parse_npy(bytes, "fuzz.npy");
    orch::serialize_npy(t);
  } catch (const orch::Error&) {
  }
  return 0;
}
