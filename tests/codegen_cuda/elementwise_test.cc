// prim.Elementwise (every generated fn, integers, bools, casts, f16 and bf16), prim.Reduce and
// prim.Broadcast.
#include "cuda_util.h"
#include "ir/builder.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

TEST(CudaElementwise, EveryFunctionMatchesTheInterpreter) {
  std::vector<CudaCase> cases;
  cases.push_back(cuda_case("chain", R"(graph g(%x: f32[5,37], %y: f32[5,37]) {
  const %two = f32[]{2}
  %a: f32[5,37] = prim.Elementwise(%x, %y) {fn = "add"}
  %b: f32[5,37] = prim.Elementwise(%a, %two) {fn = "mul"}
  %c: f32[5,37] = prim.Elementwise(%b) {fn = "relu"}
  %d: f32[5,37] = prim.Elementwise(%c) {fn = "sigmoid"}
  %e: f32[5,37] = prim.Elementwise(%d, %x) {fn = "pow"}
  %f: f32[5,37] = prim.Elementwise(%e) {fn = "erf"}
  %g: f32[5,37] = prim.Elementwise(%f, %y) {fn = "max"}
  %h: f32[5,37] = prim.Elementwise(%g) {fn = "tanh"}
  return %h
})"));
  std::string unary;
  std::string outputs;
  int i = 0;
  for (const char* fn :
       {"neg", "abs", "sign", "sqrt", "exp", "log", "floor", "ceil", "round", "sin", "cos", "tan",
        "atan", "sinh", "cosh", "asinh", "reciprocal", "sigmoid", "identity"}) {
    // sqrt and log of |x| + 0.5: defined everywhere.
    unary += fmt::format("  %u{0}: f32[3,11] = prim.Elementwise(%p) {{fn = \"{1}\"}}\n", i, fn);
    outputs += fmt::format("{}%u{}", i ? ", " : "", i);
    ++i;
  }
  cases.push_back(cuda_case("unary",
                            fmt::format(R"(graph g(%x: f32[3,11]) {{
  const %half = f32[]{{0.5}}
  const %ten = f32[]{{10}}
  %a: f32[3,11] = prim.Elementwise(%x) {{fn = "abs"}}
  %p0: f32[3,11] = prim.Elementwise(%a, %half) {{fn = "add"}}
  %p: f32[3,11] = prim.Elementwise(%p0, %ten) {{fn = "mul"}}
{}  %s: f32[3,11] = prim.Elementwise(%x, %half) {{fn = "mul"}}
  %as: f32[3,11] = prim.Elementwise(%s) {{fn = "asin"}}
  %ac: f32[3,11] = prim.Elementwise(%s) {{fn = "acos"}}
  %at: f32[3,11] = prim.Elementwise(%s) {{fn = "atanh"}}
  %two: f32[3,11] = prim.Elementwise(%p, %half) {{fn = "add"}}
  %ah: f32[3,11] = prim.Elementwise(%two) {{fn = "acosh"}}
  %mn: f32[3,11] = prim.Elementwise(%x, %s, %p) {{fn = "min"}}
  %dv: f32[3,11] = prim.Elementwise(%x, %p) {{fn = "div"}}
  %sb: f32[3,11] = prim.Elementwise(%x, %p) {{fn = "sub"}}
  return {}, %as, %ac, %at, %ah, %mn, %dv, %sb
}})",
                                        unary, outputs),
                            2));
  cases.push_back(cuda_case("integers bools and scalars",
                            R"(graph g(%x: f32[4,9], %i: i32[4,9], %j: i8[4,9], %u: u8[4,9]) {
  const %zero = f32[]{0}
  %p: bool[4,9] = prim.Elementwise(%x, %zero) {fn = "greater"}
  %c: f32[4,9] = prim.Elementwise(%i) {fn = "cast", to = 1}
  %w: f32[4,9] = prim.Elementwise(%p, %x, %c) {fn = "where"}
  %k: i32[4,9] = prim.Elementwise(%i, %i) {fn = "mul"}
  %r: i32[4,1] = prim.Reduce(%k) {axes = [1], kind = "max"}
  %s: f32[1,1] = prim.Reduce(%w) {axes = [0, 1], kind = "sum"}
  %n: i8[4,9] = prim.Elementwise(%j) {fn = "neg"}
  %a: i8[4,9] = prim.Elementwise(%j, %n) {fn = "add"}
  %ab: i8[4,9] = prim.Elementwise(%n) {fn = "abs"}
  %q: bool[4,9] = prim.Elementwise(%p) {fn = "not"}
  %o: bool[4,9] = prim.Elementwise(%p, %q) {fn = "or"}
  %x2: bool[4,9] = prim.Elementwise(%p, %o) {fn = "xor"}
  %an: bool[4,9] = prim.Elementwise(%x2, %o) {fn = "and"}
  %eq: bool[4,9] = prim.Elementwise(%i, %k) {fn = "less_equal"}
  %fi: i32[4,9] = prim.Elementwise(%w) {fn = "cast", to = 6}
  %fu: u8[4,9] = prim.Elementwise(%x) {fn = "cast", to = 2}
  %bf: f32[4,9] = prim.Elementwise(%an) {fn = "cast", to = 1}
  %ub: bool[4,9] = prim.Elementwise(%u) {fn = "cast", to = 9}
  %ui: i64[4,9] = prim.Elementwise(%u) {fn = "cast", to = 7}
  %um: u8[4,9] = prim.Elementwise(%u, %u) {fn = "mul"}
  %sg: i32[4,9] = prim.Elementwise(%i) {fn = "sign"}
  %rl: i8[4,9] = prim.Elementwise(%j) {fn = "relu"}
  %nan: bool[4,9] = prim.Elementwise(%x) {fn = "isnan"}
  return %w, %p, %r, %s, %a, %ab, %an, %eq, %fi, %fu, %bf, %ub, %ui, %um, %sg, %rl, %nan
})",
                            3));
  cases.push_back(cuda_case("infinities", R"(graph g(%x: f32[2,4]) {
  const %big = f32[2,4]{1e38, -1e38, 3, -3, 1e38, 0, -1e38, 1}
  const %inf = f32[]{inf}
  %m: f32[2,4] = prim.Elementwise(%x, %big) {fn = "mul"}
  %p: f32[2,4] = prim.Elementwise(%m, %big) {fn = "mul"}
  %i: bool[2,4] = prim.Elementwise(%p) {fn = "isinf"}
  %ip: bool[2,4] = prim.Elementwise(%p) {fn = "isposinf"}
  %in: bool[2,4] = prim.Elementwise(%p) {fn = "isneginf"}
  %e: bool[2,4] = prim.Elementwise(%p, %inf) {fn = "equal"}
  return %i, %ip, %in, %e
})",
                            4));
  cases.push_back(cuda_case("reductions and broadcasts",
                            R"(graph g(%x: f32[3,4,5], %i: i64[3,4,5], %d: f64[6,7]) {
  %a: f32[3,1,1] = prim.Reduce(%x) {axes = [1, 2], kind = "sum"}
  %b: f32[1,4,1] = prim.Reduce(%x) {axes = [0, 2], kind = "min"}
  %c: f32[3,4,1] = prim.Reduce(%x) {axes = [2], kind = "prod"}
  %e: i64[1,4,5] = prim.Reduce(%i) {axes = [0], kind = "sum"}
  %f: f64[1,7] = prim.Reduce(%d) {axes = [0], kind = "max"}
  %ab: f32[3,4,5] = prim.Broadcast(%a) {shape = [3, 4, 5]}
  %bb: f32[3,4,5] = prim.Broadcast(%b) {shape = [3, 4, 5]}
  %s: f32[3,4,5] = prim.Elementwise(%ab, %bb) {fn = "sub"}
  return %s, %c, %e, %f
})",
                            5));
  // Integer division, remainders, shifts and powers with the interpreter's edge cases: zero
  // divisors, MIN / -1, remainders of either sign, shifts past the width, negative exponents;
  // the constants are added to a zero product of an input, so the kernel reads one.
  cases.push_back(cuda_case("integer division and powers", R"(graph g(%x: i32[2,6], %u: u8[2,6],
                                                               %f: f32[2,6]) {
  const %ca = i32[2,6]{7, -7, 7, -7, 0, -2147483648, 5, -5, 3, 9, -9, 100}
  const %cb = i32[2,6]{3, 3, -3, -3, 5, -1, 0, 0, 2, -4, 4, 7}
  const %ce = i32[2,6]{0, 1, 2, 31, 3, -1, -2, 5, 10, 0, 1, 2}
  const %cs = u8[2,6]{0, 1, 2, 7, 8, 9, 63, 64, 65, 200, 3, 4}
  const %cf = f32[2,6]{2, -2, 0.5, -0.5, 3, -3, 0.25, -0.25, 1, -1, 0.75, -0.75}
  const %zero = i32[]{0}
  const %half = f32[]{0.5}
  %z: i32[2,6] = prim.Elementwise(%x, %zero) {fn = "mul"}
  %a: i32[2,6] = prim.Elementwise(%ca, %z) {fn = "add"}
  %dv: i32[2,6] = prim.Elementwise(%a, %cb) {fn = "div"}
  %md: i32[2,6] = prim.Elementwise(%a, %cb) {fn = "mod"}
  %fm: i32[2,6] = prim.Elementwise(%a, %cb) {fn = "fmod"}
  %pw: i32[2,6] = prim.Elementwise(%a, %ce) {fn = "pow"}
  %ph: i32[2,6] = prim.Elementwise(%x, %half) {fn = "pow"}
  %sl: u8[2,6] = prim.Elementwise(%u, %cs) {fn = "shl"}
  %sr: u8[2,6] = prim.Elementwise(%cs, %u) {fn = "shr"}
  %ff: f32[2,6] = prim.Elementwise(%f, %cf) {fn = "fmod"}
  %fp: f32[2,6] = prim.Elementwise(%cf, %ce) {fn = "pow"}
  return %dv, %md, %fm, %pw, %ph, %sl, %sr, %ff, %fp
})",
                            6));
  // f16 and bf16: stored as bits, computed in float and rounded after every primitive, as the
  // interpreter stores each value; a constant baked as bits, a MatMul and a reduction in float.
  cases.push_back(cuda_case("half floats",
                            R"(graph g(%x: f16[3,40], %y: f32[3,40], %b: bf16[40,5]) {
  const %w = f16[3,40]{0.1, -2.5, 65504, 0.00006, 1e-7, 3, 0.333, -0.1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40}
  const %third = f16[]{0.333}
  %m: f16[3,40] = prim.Elementwise(%x, %w) {fn = "mul"}
  %e: f16[3,40] = prim.Elementwise(%m, %third) {fn = "add"}
  %t: f16[3,40] = prim.Elementwise(%e) {fn = "tanh"}
  %h: f16[3,40] = prim.Elementwise(%y) {fn = "cast", to = 10}
  %s: f16[3,40] = prim.Elementwise(%t, %h) {fn = "sub"}
  %r: f16[3,1] = prim.Reduce(%s) {axes = [1], kind = "sum"}
  %c: bf16[3,40] = prim.Elementwise(%s) {fn = "cast", to = 16}
  %p: bf16[3,5] = prim.MatMul(%c, %b)
  %back: f32[3,5] = prim.Elementwise(%p) {fn = "cast", to = 1}
  return %s, %r, %back
})",
                            7));
  // A phase root's total (a tiled MatMul's register tile) is rounded before the epilogue that
  // reads it: here its fraction, where an unrounded total differs by up to half an f16 step.
  CudaCase tiled = cuda_case("half float total", R"(graph g(%a: f16[32,64], %b: f16[64,32]) {
  %p: f16[32,32] = prim.MatMul(%a, %b)
  %fl: f16[32,32] = prim.Elementwise(%p) {fn = "floor"}
  %q: f16[32,32] = prim.Elementwise(%p, %fl) {fn = "sub"}
  return %q
})",
                             7);
  tiled.config = best_h200_config(tiled.graph);
  cases.push_back(std::move(tiled));
  expect_all_match(cases, 1e-4);
}

TEST(CudaReject, NamesTheOpAndDtype) {
  auto reject = [](std::string_view text) { return cuda_reject(parse_graph(text)); };
  EXPECT_EQ(reject(R"(graph g(%x: f32[4]) {
  %y: f32[4] = Relu(%x)
  return %y
})"),
            "Relu #0: 'Relu' is not a primitive");
  EXPECT_EQ(reject(R"(graph g(%x: f32[0,3]) {
  %y: f32[0,3] = prim.Elementwise(%x) {fn = "exp"}
  return %y
})"),
            "value 'x' is empty (a zero-size dim)");
  // A constant over 64 KiB is not baked into the source.
  Graph big;
  Builder b(big);
  ValueId x = b.input("x", {DType::f32, {129, 128}});
  ValueId c = b.constant(Tensor(DType::f32, {129, 128}));
  b.output(b.op("prim.Elementwise", {x, c}, {{"fn", std::string("add")}}));
  EXPECT_EQ(cuda_reject(big),
            "66048 bytes of constants would be baked into the source (at most 65536; pass large "
            "constants as kernel inputs)");
  EXPECT_THROW(cuda_kernel_source(big, "k"), Unsupported);
}

}  // namespace
}  // namespace orch::codegen
