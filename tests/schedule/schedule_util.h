// The machine every schedule test runs against, so results never depend on the host.
#pragma once

#include "schedule/machine.h"

namespace orch::schedule::test {

// 4 cores, AVX2 width; 64-byte lines; bandwidth weights relative to DRAM: L1 1/4, L2 1/2.
inline constexpr const char* kMachineJson = R"({
  "name": "test", "kind": "cpu", "cores": 4, "simd_bytes": 32,
  "levels": [
    {"name": "reg", "capacity": 512, "line": 32, "bandwidth_gbs": 400},
    {"name": "L1", "capacity": 32768, "line": 64, "bandwidth_gbs": 200},
    {"name": "L2", "capacity": 1048576, "line": 64, "bandwidth_gbs": 100},
    {"name": "DRAM", "capacity": 0, "line": 64, "bandwidth_gbs": 50, "shared": true}
  ]})";

inline Machine test_machine() {
  return machine_from_json(kMachineJson);
}

}  // namespace orch::schedule::test
