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

// Softmax over the rows of x: f32[8, 64], in primitives (the tile graph's worked example).
inline constexpr const char* kSoftmaxRows = R"(graph main(%x: f32[8,64]) {
  %max: f32[8,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %bmax: f32[8,64] = prim.Broadcast(%max) {shape = [8, 64]}
  %sub: f32[8,64] = prim.Elementwise(%x, %bmax) {fn = "sub"}
  %exp: f32[8,64] = prim.Elementwise(%sub) {fn = "exp"}
  %sum: f32[8,1] = prim.Reduce(%exp) {axes = [1], kind = "sum"}
  %bsum: f32[8,64] = prim.Broadcast(%sum) {shape = [8, 64]}
  %y: f32[8,64] = prim.Elementwise(%exp, %bsum) {fn = "div"}
  return %y
})";

inline Machine test_machine() {
  return machine_from_json(kMachineJson);
}

}  // namespace orch::schedule::test
