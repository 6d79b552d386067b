// Fused kernels the code generators' tests share (softmax, layernorm, MatMul + bias + GELU,
// Conv + bias + ReLU): the CUDA tests emulate and compile them all, the Halide tests lower the
// layernorm.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace orch::codegen {

struct FusedKernel {
  std::string name;
  std::string text;
};

inline std::vector<FusedKernel> fused_kernels() {
  std::string gamma;
  for (int i = 0; i < 48; ++i) gamma += (i ? ", " : "") + std::to_string(0.5 + i * 0.01);
  return {
      {"softmax", R"(graph g(%x: f32[64,100]) {
  %m: f32[64,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %mb: f32[64,100] = prim.Broadcast(%m) {shape = [64, 100]}
  %s: f32[64,100] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %e: f32[64,100] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[64,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[64,100] = prim.Broadcast(%t) {shape = [64, 100]}
  %y: f32[64,100] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})"},
      {"layernorm", R"(graph g(%x: f32[3,10,48]) {
  const %inv = f32[]{0.020833333}
  const %eps = f32[]{0.00001}
  const %gamma = f32[1,1,48]{)" +
                        gamma + R"(}
  %s: f32[3,10,1] = prim.Reduce(%x) {axes = [2], kind = "sum"}
  %m: f32[3,10,1] = prim.Elementwise(%s, %inv) {fn = "mul"}
  %mb: f32[3,10,48] = prim.Broadcast(%m) {shape = [3, 10, 48]}
  %d: f32[3,10,48] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %d2: f32[3,10,48] = prim.Elementwise(%d, %d) {fn = "mul"}
  %v: f32[3,10,1] = prim.Reduce(%d2) {axes = [-1], kind = "sum"}
  %vm: f32[3,10,1] = prim.Elementwise(%v, %inv) {fn = "mul"}
  %ve: f32[3,10,1] = prim.Elementwise(%vm, %eps) {fn = "add"}
  %sd: f32[3,10,1] = prim.Elementwise(%ve) {fn = "sqrt"}
  %r: f32[3,10,1] = prim.Elementwise(%sd) {fn = "reciprocal"}
  %rb: f32[3,10,48] = prim.Broadcast(%r) {shape = [3, 10, 48]}
  %n: f32[3,10,48] = prim.Elementwise(%d, %rb) {fn = "mul"}
  %gb: f32[3,10,48] = prim.Broadcast(%gamma) {shape = [3, 10, 48]}
  %y: f32[3,10,48] = prim.Elementwise(%n, %gb) {fn = "mul"}
  return %y, %m
})"},
      {"matmul_bias_gelu", R"(graph g(%a: f32[66,20], %b: f32[20,40], %c: f32[1,40]) {
  const %half = f32[]{0.5}
  const %one = f32[]{1}
  const %rsqrt2 = f32[]{0.70710678}
  %m: f32[66,40] = prim.MatMul(%a, %b)
  %cb: f32[66,40] = prim.Broadcast(%c) {shape = [66, 40]}
  %s: f32[66,40] = prim.Elementwise(%m, %cb) {fn = "add"}
  %u: f32[66,40] = prim.Elementwise(%s, %rsqrt2) {fn = "mul"}
  %f: f32[66,40] = prim.Elementwise(%u) {fn = "erf"}
  %p: f32[66,40] = prim.Elementwise(%f, %one) {fn = "add"}
  %h: f32[66,40] = prim.Elementwise(%s, %half) {fn = "mul"}
  %y: f32[66,40] = prim.Elementwise(%h, %p) {fn = "mul"}
  return %y
})"},
      {"conv_bias_relu", R"(graph g(%x: f32[2,3,9,9], %w: f32[8,3,3,3], %b: f32[1,8,1,1]) {
  %c: f32[2,8,9,9] = prim.Conv(%x, %w) {dilations = [1, 1], group = 1, pads = [1, 1, 1, 1], strides = [1, 1]}
  %bb: f32[2,8,9,9] = prim.Broadcast(%b) {shape = [2, 8, 9, 9]}
  %s: f32[2,8,9,9] = prim.Elementwise(%c, %bb) {fn = "add"}
  %y: f32[2,8,9,9] = prim.Elementwise(%s) {fn = "relu"}
  return %y
})"},
  };
}

/// The text of the fused kernel called `name` ("" when there is none).
inline std::string fused_kernel_text(std::string_view name) {
  std::vector<FusedKernel> all = fused_kernels();
  auto it =
      std::find_if(all.begin(), all.end(), [&](const FusedKernel& k) { return k.name == name; });
  return it == all.end() ? "" : it->text;
}

}  // namespace orch::codegen
