// Fuzz target: the IR text parser. A parse that succeeds must verify and print again.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/error.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    orch::Graph graph = orch::parse_graph(text);
    orch::verify(graph);
    orch::print_graph(graph);
  } catch (const orch::Error&) {
  }
  return 0;
}
