// Fuzz target: a compiled module's manifest.json, parsed and checked against its regions
// (runtime::parse_manifest). Nothing is mapped or loaded: the layer that decides whether a
// manifest is safe to run is fuzzed on its own. A layout that parses must keep its promises.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/error.h"
#include "runtime/module_manifest.h"

namespace {

// parse_manifest's promise: every location inside its region, every external weight inside
// weights.bin. A broken promise is a bug: abort so that libFuzzer keeps the input.
void check_layout(const orch::runtime::ModuleLayout& layout) {
  using orch::runtime::Region;
  for (const auto* lists : {&layout.kernel_inputs, &layout.kernel_outputs})
    for (const auto& values : *lists)
      for (const orch::runtime::KernelValue& kv : values) {
        const orch::runtime::Location& at = kv.at;
        int64_t size = at.region == Region::arena ? layout.arena_bytes : layout.weights_bytes;
        if ((at.region == Region::arena || at.region == Region::weights) &&
            (at.offset < 0 || at.bytes < 0 || at.offset > size - at.bytes))
          __builtin_trap();
        if (at.region == Region::input && kv.type != layout.inputs.at(at.index).type)
          __builtin_trap();
        if (at.region == Region::output && kv.type != layout.outputs.at(at.index).type)
          __builtin_trap();
      }
  for (const auto& ext : layout.external)
    if (ext)
      for (const orch::runtime::WeightBinding& w : ext->weights)
        if (w.offset < 0 || w.bytes < 0 || w.offset > layout.weights_bytes - w.bytes)
          __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    check_layout(orch::runtime::parse_manifest(text, "fuzz/manifest.json"));
  } catch (const orch::Error&) {
  }
  return 0;
}
