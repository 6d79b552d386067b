// Shared by the Halide backend tests: run a kernel through Halide and the interpreter.
#pragma once

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "codegen/halide/halide_backend.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/op_registry.h"
#include "schedule/machine.h"

namespace orch::codegen {

/// A fixed machine for tile searches, so rankings do not depend on the host running the tests.
inline schedule::Machine test_machine() {
  return schedule::machine_from_json(R"({
  "name": "test", "kind": "cpu", "cores": 4, "simd_bytes": 32,
  "levels": [
    {"name": "reg", "capacity": 512, "line": 32, "bandwidth_gbs": 400},
    {"name": "L1", "capacity": 32768, "line": 64, "bandwidth_gbs": 200},
    {"name": "L2", "capacity": 1048576, "line": 64, "bandwidth_gbs": 100},
    {"name": "DRAM", "capacity": 0, "line": 64, "bandwidth_gbs": 50, "shared": true}
  ]})");
}

/// Softmax over the rows of f32[64,100] as fission writes it (the tests' fused kernel).
constexpr std::string_view kSoftmax = R"(graph g(%x: f32[64,100]) {
  %m: f32[64,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %mb: f32[64,100] = prim.Broadcast(%m) {shape = [64, 100]}
  %s: f32[64,100] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %e: f32[64,100] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[64,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[64,100] = prim.Broadcast(%t) {shape = [64, 100]}
  %y: f32[64,100] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})";

/// "" when the tensors agree (rtol 1e-3 as the ONNX backend tests, atol 1e-5 by default: f32
/// sums in another order than the interpreter's double sums; NaNs agree with NaNs), else the
/// first difference.
inline std::string compare(const Tensor& want, const Tensor& got, double atol = 1e-5) {
  if (want.dtype() != got.dtype() || want.shape() != got.shape()) return "types differ";
  for (int64_t i = 0; i < want.numel(); ++i) {
    double a = want.get(i), b = got.get(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (!(std::abs(a - b) <= atol + 1e-3 * std::abs(a)))
      return fmt::format("element {}: want {}, got {}", i, a, b);
  }
  return "";
}

/// The absolute tolerance for a kernel's f32 results: 1e-5 times the square root of its longest
/// reduction (the rounding error of an f32 sum of n terms of size ~1 grows like sqrt(n) ulps; a
/// result that nearly cancels keeps that absolute error, far beyond rtol).
inline double reduction_atol(const Graph& kernel) {
  int64_t longest = 1;
  for (const Node& n : kernel.nodes()) {
    const OpSchema* schema = find_op(n.op);
    if (schema == nullptr || schema->index_map == nullptr) continue;
    std::vector<TensorType> in;
    for (ValueId v : n.inputs) in.push_back(kernel.value(v).type);
    int64_t extent = 1;
    for (int64_t e : schema->index_map(n.attrs, in, kernel.value(n.outputs[0]).type).reduce_extents)
      extent *= e;
    longest = std::max(longest, extent);
  }
  return 1e-5 * std::sqrt(static_cast<double>(longest));
}

/// Compiles `kernel` with Halide, runs it on random inputs and compares with the interpreter.
inline std::string halide_matches(const Graph& kernel, uint64_t seed,
                                  const HalideSchedule* schedule = nullptr) {
  HalideKernel hk = halide_jit(kernel, schedule);
  std::vector<Tensor> inputs = interp::random_inputs(kernel, seed);
  std::vector<Tensor> want = interp::interpret(kernel, inputs);
  std::vector<Tensor> got;
  for (ValueId v : kernel.outputs())
    got.emplace_back(kernel.value(v).type.dtype, kernel.value(v).type.shape);
  hk.kernel->run(inputs, got);
  for (size_t i = 0; i < want.size(); ++i) {
    std::string diff = compare(want[i], got[i]);
    if (!diff.empty()) return fmt::format("output {}: {}", i, diff);
  }
  return "";
}

}  // namespace orch::codegen
