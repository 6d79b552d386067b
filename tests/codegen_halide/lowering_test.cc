#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../common/fused_kernels.h"
#include "halide_util.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch::codegen {
namespace {

constexpr std::string_view kChain = R"(graph g(%x: f32[5,37], %y: f32[5,37]) {
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
})";

TEST(HalideLowering, ElementwiseChain) {
  Graph g = parse_graph(kChain);
  EXPECT_EQ(halide_reject(g), "");
  EXPECT_EQ(halide_matches(g, 1), "");
}

// tanh, sinh, cosh and sigmoid are written out (halide_math.cc): checked on a sweep of [-30, 30]
// that crosses every branch point (0.5, 0.625, the exp clamps), tiny values, and inf and NaN.
TEST(HalideLowering, VectorTranscendentalFunctions) {
  std::vector<float> xs = {0.0f,   -0.0f,   1e-30f, -1e-7f,  0.4999f,  0.5f,      0.6249f,
                           0.625f, -0.625f, 9.0f,   44.1f,   86.9f,    -86.9f,    87.1f,
                           -87.1f, 89.0f,   -89.0f, -104.0f, INFINITY, -INFINITY, NAN};
  for (int i = -3000; i <= 3000; ++i) xs.push_back(static_cast<float>(i) / 100);
  int64_t n = static_cast<int64_t>(xs.size());
  for (const char* fn : {"tanh", "sinh", "cosh", "sigmoid"}) {
    Graph g = parse_graph(fmt::format(R"(graph g(%x: f32[{0}]) {{
  %y: f32[{0}] = prim.Elementwise(%x) {{fn = "{1}"}}
  return %y
}})",
                                      n, fn));
    HalideKernel hk = halide_jit(g, nullptr);
    std::vector<Tensor> in = {Tensor(DType::f32, {n})};
    for (int64_t i = 0; i < n; ++i) in[0].set(i, xs[static_cast<size_t>(i)]);
    std::vector<Tensor> want = interp::interpret(g, in);
    std::vector<Tensor> got = {Tensor(DType::f32, {n})};
    hk.kernel->run(in, got);
    EXPECT_EQ(compare(want[0], got[0]), "") << fn;  // NaN and inf must match exactly
  }
}

// A scalar divisor is inverted once, unless the quotient is rounded: x * (1 / s) can land on the
// other side of a .5 from x / s (with s = 0.3: -74.25 / s = -247.49998 rounds to -247, -74.25 *
// (1 / s) = -247.5 to -248; -73.95 / s = -246.5 to -246, -73.95 * (1 / s) to -247), and
// QuantizeLinear's round(x / scale) was one off.
TEST(HalideLowering, RoundedQuotientsAreExact) {
  Graph g = parse_graph(R"(graph g(%x: f32[2,4]) {
  const %s = f32[]{0.3}
  %q: f32[2,4] = prim.Elementwise(%x, %s) {fn = "div"}
  %r: f32[2,4] = prim.Elementwise(%q) {fn = "round"}
  return %r
})");
  HalideKernel hk = halide_jit(g, nullptr);
  std::vector<Tensor> in = {Tensor(DType::f32, {2, 4})};
  for (int64_t i = 0; i < 8; ++i) in[0].set(i, i % 2 == 0 ? -74.25f : -73.95f);
  std::vector<Tensor> got = {Tensor(DType::f32, {2, 4})};
  hk.kernel->run(in, got);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(got[0].get(i), i % 2 == 0 ? -247 : -246) << i;
}

TEST(HalideLowering, SoftmaxRows) {
  Graph g = parse_graph(kSoftmax);
  EXPECT_EQ(halide_matches(g, 2), "");
}

TEST(HalideLowering, SoftmaxUnderExplicitSchedules) {
  Graph g = parse_graph(kSoftmax);
  ValueId y = g.find_value("y");
  for (HalidePlacement p :
       {HalidePlacement::inline_, HalidePlacement::tile, HalidePlacement::root}) {
    HalideSchedule s;
    s.tiles[y] = {4, 32};
    s.vector_width = 8;
    s.reduce_step = 4;
    for (const char* name : {"m", "e", "t"}) s.placement[g.find_value(name)] = p;
    EXPECT_EQ(halide_matches(g, 3, &s), "") << static_cast<int>(p);
  }
  HalideSchedule serial;
  serial.parallel_dim = -2;
  serial.vector_width = 1;
  EXPECT_EQ(halide_matches(g, 4, &serial), "");
  HalideSchedule rows;
  rows.parallel_dim = 0;
  rows.tiles[y] = {1, 0};
  rows.reduce_steps[g.find_value("t")] = 5;
  EXPECT_EQ(halide_matches(g, 5, &rows), "");
}

TEST(HalideLowering, ParallelTasksOfConsecutiveTiles) {
  Graph g = parse_graph(kSoftmax);
  ValueId y = g.find_value("y");
  // 22 row tiles (the last shifted inwards) in 5 tasks of 5 (the last guarded); then 16 x 4
  // tiles with the row tiles in 3 tasks around the column tile loop.
  HalideSchedule rows;
  rows.parallel_dim = 0;
  rows.parallel_tasks = 5;
  rows.vector_width = 8;
  rows.tiles[y] = {3, 0};
  rows.placement[g.find_value("e")] = HalidePlacement::tile;
  EXPECT_EQ(halide_matches(g, 9, &rows), "");
  HalideSchedule blocks = rows;
  blocks.parallel_tasks = 3;
  blocks.tiles[y] = {4, 32};
  blocks.placement[g.find_value("m")] = HalidePlacement::root;
  EXPECT_EQ(halide_matches(g, 10, &blocks), "");
}

// Row reductions split into partial results of several vectors, narrowing for short rows; a
// divisor constant along the row is inverted once per row.
TEST(HalideLowering, RowReductionsAndRowDivisorsOfEveryWidth) {
  for (int width : {9, 17, 40, 100, 333}) {
    Graph g = parse_graph(fmt::format(R"(graph g(%x: f32[6,{0}], %z: f32[6,{0}]) {{
  const %three = f32[]{{3}}
  %m: f32[6,1] = prim.Reduce(%x) {{axes = [1], kind = "max"}}
  %t: f32[6,1] = prim.Reduce(%z) {{axes = [1], kind = "sum"}}
  %tb: f32[6,{0}] = prim.Broadcast(%t) {{shape = [6, {0}]}}
  %mb: f32[6,{0}] = prim.Broadcast(%m) {{shape = [6, {0}]}}
  %a: f32[6,{0}] = prim.Elementwise(%x, %tb) {{fn = "div"}}
  %b: f32[6,{0}] = prim.Elementwise(%a, %three) {{fn = "div"}}
  %c: f32[6,{0}] = prim.Elementwise(%b, %mb) {{fn = "sub"}}
  %d: f32[6,{0}] = prim.Elementwise(%c, %z) {{fn = "div"}}
  return %d, %m
}})",
                                      width));
    for (int vw : {8, 16}) {
      HalideSchedule s;
      s.vector_width = vw;
      s.parallel_dim = 0;
      s.tiles[g.find_value("d")] = {2, 0};
      EXPECT_EQ(halide_matches(g, 11, &s), "") << "width " << width << " vector " << vw;
    }
  }
}

TEST(HalideLowering, LayerNormLike) {
  Graph g = parse_graph(fused_kernel_text("layernorm"));
  EXPECT_EQ(halide_matches(g, 6), "");
}

TEST(HalideLowering, TransposeReshapeAndElementwise) {
  Graph g = parse_graph(R"(graph g(%x: f32[8,16,5], %z: f32[5,8,16]) {
  %t: f32[5,8,16] = prim.Transpose(%x) {perm = [2, 0, 1]}
  %a: f32[5,8,16] = prim.Elementwise(%t, %z) {fn = "sub"}
  %r: f32[40,16] = prim.Reshape(%a) {shape = [40, 16]}
  %e: f32[40,16] = prim.Elementwise(%r) {fn = "exp"}
  %p: f32[16,40] = prim.Transpose(%e) {perm = [1, 0]}
  return %p, %a
})");
  EXPECT_EQ(halide_matches(g, 7), "");
}

TEST(HalideLowering, SliceConcatPadTile) {
  Graph g = parse_graph(R"(graph g(%x: f32[6,20], %y: f32[7,7]) {
  %s: f32[3,9] = prim.Slice(%x) {ends = [6, 19], starts = [0, 1], steps = [2, 2]}
  %t: f32[3,7] = prim.Slice(%y) {ends = [7, 7], starts = [1, 0], steps = [2, 1]}
  %c: f32[3,16] = prim.Concat(%s, %t) {axis = 1}
  %p: f32[5,21] = prim.Pad(%c) {pads = [1, 2, 1, 3], value = 1.5}
  %q: f32[5,25] = prim.Pad(%p) {mode = "reflect", pads = [0, 2, 0, 2]}
  %e: f32[7,25] = prim.Pad(%q) {mode = "edge", pads = [1, 0, 1, 0]}
  %r: f32[14,50] = prim.Tile(%e) {repeats = [2, 2]}
  %n: f32[14,50] = prim.Elementwise(%r) {fn = "neg"}
  return %n
})");
  EXPECT_EQ(halide_reject(g), "");
  EXPECT_EQ(halide_matches(g, 8), "");
}

TEST(HalideLowering, ReshapesIndexWithinTheirDimGroups) {
  // [2,6,1,5] -> [2,1,2,3,5]: dims 0 and 3 map directly, 6 splits into 2x3; then back to 12x5,
  // which merges the first three.
  Graph g = parse_graph(R"(graph g(%x: f32[2,6,1,5]) {
  %r: f32[2,1,2,3,5] = prim.Reshape(%x) {shape = [2, 1, 2, 3, 5]}
  %e: f32[2,1,2,3,5] = prim.Elementwise(%r) {fn = "exp"}
  %m: f32[12,5] = prim.Reshape(%e) {shape = [12, 5]}
  %n: f32[12,5] = prim.Elementwise(%m) {fn = "neg"}
  return %n, %e
})");
  EXPECT_EQ(halide_matches(g, 9), "");
}

TEST(HalideLowering, MaxPoolWindowStack) {
  // What fission makes of a 3-tap MaxPool along the last dim: its reduction over the stacked
  // Slices is unrolled (halide_schedule.cc), each step reading one Slice.
  Graph g = parse_graph(R"(graph g(%x: f32[1,4,5,9]) {
  %p: f32[1,4,5,11] = prim.Pad(%x) {pads = [0, 0, 0, 1, 0, 0, 0, 1], value = -inf}
  %s0: f32[1,4,5,9] = prim.Slice(%p) {ends = [1, 4, 5, 9], starts = [0, 0, 0, 0], steps = [1, 1, 1, 1]}
  %s1: f32[1,4,5,9] = prim.Slice(%p) {ends = [1, 4, 5, 10], starts = [0, 0, 0, 1], steps = [1, 1, 1, 1]}
  %s2: f32[1,4,5,9] = prim.Slice(%p) {ends = [1, 4, 5, 11], starts = [0, 0, 0, 2], steps = [1, 1, 1, 1]}
  %c: f32[3,4,5,9] = prim.Concat(%s0, %s1, %s2) {axis = 0}
  %r: f32[3,1,4,5,9] = prim.Reshape(%c) {shape = [3, 1, 4, 5, 9]}
  %m: f32[1,1,4,5,9] = prim.Reduce(%r) {axes = [0], kind = "max"}
  %y: f32[1,4,5,9] = prim.Reshape(%m) {shape = [1, 4, 5, 9]}
  return %y
})");
  EXPECT_EQ(halide_reject(g), "");
  EXPECT_EQ(halide_matches(g, 10), "");
}

TEST(HalideLowering, GatherWithConstantIndices) {
  Graph g = parse_graph(R"(graph g(%x: f32[10,12]) {
  const %i = i64[2,2]{0, -1, 9, 3}
  const %j = i64[10,2]{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7}
  %g: f32[2,2,12] = prim.Gather(%x, %i) {axis = 0}
  %e: f32[10,2] = prim.GatherElements(%x, %j) {axis = 1}
  %a: f32[2,2,12] = prim.Elementwise(%g) {fn = "abs"}
  return %a, %e
})");
  EXPECT_EQ(halide_matches(g, 9), "");
}

TEST(HalideLowering, Resize) {
  Graph g = parse_graph(R"(graph g(%x: f32[1,2,6,8]) {
  %n: f32[1,2,12,16] = prim.Resize(%x) {mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]}
  %l: f32[1,2,12,16] = prim.Resize(%x) {mode = "linear", scales = [1.0, 1.0, 2.0, 2.0]}
  %a: f32[1,2,5,4] = prim.Resize(%x) {coordinate_transformation_mode = "align_corners", mode = "linear", sizes = [1, 2, 5, 4]}
  %c: f32[1,2,9,8] = prim.Resize(%x) {mode = "cubic", scales = [1.0, 1.0, 1.5, 1.0]}
  %s: f32[1,2,12,16] = prim.Elementwise(%n, %l) {fn = "add"}
  return %s, %a, %c
})");
  EXPECT_EQ(halide_reject(g), "");
  EXPECT_EQ(halide_matches(g, 14), "");
}

// A Pad's or Resize's producer computed per output tile of rows and channels: each tile asks for
// its own rows (the reflect expression, the taps' band), and every tile edge still reads what
// the interpreter reads, with pads narrower than the dim (mirrored once) and wider (periodic).
TEST(HalideLowering, PadAndResizeOverTilesOfTheirProducer) {
  const std::string tails[] = {
      R"(%n: f32[1,3,14,18] = prim.Resize(%e) {mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]}
  %y: f32[1,3,16,20] = prim.Pad(%n) {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]})",
      R"(%y: f32[1,3,25,9] = prim.Pad(%e) {mode = "reflect", pads = [0, 0, 9, 0, 0, 0, 9, 0]})",
      R"(%y: f32[1,3,4,5] = prim.Resize(%e) {coordinate_transformation_mode = "align_corners", mode = "linear", sizes = [1, 3, 4, 5]})",
      R"(%y: f32[1,3,10,9] = prim.Resize(%e) {mode = "cubic", scales = [1.0, 1.0, 1.5, 1.0]})",
      R"(%y: f32[1,3,28,36] = prim.Resize(%e) {mode = "linear", scales = [1.0, 1.0, 4.0, 4.0]})",
      R"(%y: f32[1,3,3,4] = prim.Resize(%e) {mode = "linear", scales = [1.0, 1.0, 0.5, 0.5]})"};
  for (const std::string& tail : tails) {
    Graph g = parse_graph(
        "graph g(%x: f32[1,3,7,9]) {\n  %e: f32[1,3,7,9] = prim.Elementwise(%x) "
        "{fn = \"exp\"}\n  " +
        tail + "\n  return %y\n}");
    for (const std::vector<int64_t>& tile :
         {std::vector<int64_t>{1, 1, 3, 0}, std::vector<int64_t>{1, 2, 5, 4},
          std::vector<int64_t>{1, 3, 1, 0}}) {
      HalideSchedule s;
      s.placement[g.find_value("e")] = HalidePlacement::tile;
      s.tiles[g.outputs()[0]] = tile;
      s.parallel_dim = -2;
      EXPECT_EQ(halide_matches(g, 15, &s), "")
          << tail << "\ntile " << tile[1] << "x" << tile[2] << "x" << tile[3];
    }
  }
}

TEST(HalideLowering, MatMulWithEpilogue) {
  Graph g = parse_graph(R"(graph g(%a: f32[2,33,20], %b: f32[2,20,40], %c: f32[2,1,40]) {
  %m: f32[2,33,40] = prim.MatMul(%a, %b)
  %cb: f32[2,33,40] = prim.Broadcast(%c) {shape = [2, 33, 40]}
  %s: f32[2,33,40] = prim.Elementwise(%m, %cb) {fn = "add"}
  %y: f32[2,33,40] = prim.Elementwise(%s) {fn = "relu"}
  return %y
})");
  EXPECT_EQ(halide_matches(g, 10), "");
}

TEST(HalideLowering, MatMulThenRowSoftmax) {
  Graph g = parse_graph(R"(graph g(%a: f32[48,32], %b: f32[32,64]) {
  %m: f32[48,64] = prim.MatMul(%a, %b)
  %x: f32[48,1] = prim.Reduce(%m) {axes = [1], kind = "max"}
  %xb: f32[48,64] = prim.Broadcast(%x) {shape = [48, 64]}
  %s: f32[48,64] = prim.Elementwise(%m, %xb) {fn = "sub"}
  %e: f32[48,64] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[48,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[48,64] = prim.Broadcast(%t) {shape = [48, 64]}
  %y: f32[48,64] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})");
  EXPECT_EQ(halide_matches(g, 11), "");
  HalideSchedule root;
  root.placement[g.find_value("m")] = HalidePlacement::root;
  EXPECT_EQ(halide_matches(g, 12, &root), "");
}

TEST(HalideLowering, IntegersBoolsAndScalars) {
  Graph g = parse_graph(R"(graph g(%x: f32[4,9], %i: i32[4,9]) {
  const %zero = f32[]{0}
  %p: bool[4,9] = prim.Elementwise(%x, %zero) {fn = "greater"}
  %c: f32[4,9] = prim.Elementwise(%i) {fn = "cast", to = 1}
  %w: f32[4,9] = prim.Elementwise(%p, %x, %c) {fn = "where"}
  %j: i32[4,9] = prim.Elementwise(%i, %i) {fn = "mul"}
  %r: i32[4,1] = prim.Reduce(%j) {axes = [1], kind = "max"}
  %s: f32[1,1] = prim.Reduce(%w) {axes = [0, 1], kind = "sum"}
  return %w, %p, %r, %s
})");
  EXPECT_EQ(halide_matches(g, 13), "");
}

// The default schedule must never be the unscheduled pipeline's recompute-everything loop nest
// (seconds for a softmax); a scheduled one runs this in about a millisecond.
TEST(HalideSchedule, DefaultSoftmaxIsFast) {
  Graph g = parse_graph(R"(graph g(%x: f32[512,1024]) {
  %m: f32[512,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  %mb: f32[512,1024] = prim.Broadcast(%m) {shape = [512, 1024]}
  %s: f32[512,1024] = prim.Elementwise(%x, %mb) {fn = "sub"}
  %e: f32[512,1024] = prim.Elementwise(%s) {fn = "exp"}
  %t: f32[512,1] = prim.Reduce(%e) {axes = [1], kind = "sum"}
  %tb: f32[512,1024] = prim.Broadcast(%t) {shape = [512, 1024]}
  %y: f32[512,1024] = prim.Elementwise(%e, %tb) {fn = "div"}
  return %y
})");
  HalideKernel hk = halide_jit(g);
  std::vector<Tensor> in = interp::random_inputs(g, 15);
  std::vector<Tensor> out{Tensor(DType::f32, {512, 1024})};
  hk.kernel->run(in, out);  // warm-up: thread pool start
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) hk.kernel->run(in, out);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds / 5, 0.2);
  double row_sum = 0;
  for (int64_t j = 0; j < 1024; ++j) row_sum += out[0].get(j);
  EXPECT_NEAR(row_sum, 1.0, 1e-4);
}

TEST(HalideReject, NamesTheReason) {
  Graph mod = parse_graph(R"(graph g(%x: f32[4], %y: f32[4]) {
  %z: f32[4] = prim.Elementwise(%x, %y) {fn = "fmod"}
  return %z
})");
  EXPECT_EQ(halide_reject(mod), "prim.Elementwise #0: prim.Elementwise fn 'fmod' is not lowered");
  Graph onnx = parse_graph(R"(graph g(%x: f32[4]) {
  %y: f32[4] = Relu(%x)
  return %y
})");
  EXPECT_EQ(halide_reject(onnx), "Relu #0: 'Relu' is not a primitive");
  Graph erf = parse_graph(R"(graph g(%x: f64[4]) {
  %y: f64[4] = prim.Elementwise(%x) {fn = "erf"}
  return %y
})");
  EXPECT_EQ(halide_reject(erf), "prim.Elementwise #0: erf on f64 is not lowered");
  Graph idiv = parse_graph(R"(graph g(%x: i32[4], %y: i32[4]) {
  %z: i32[4] = prim.Elementwise(%x, %y) {fn = "div"}
  return %z
})");
  EXPECT_EQ(halide_reject(idiv),
            "prim.Elementwise #0: prim.Elementwise fn 'div' on i32 is not lowered");
  Graph empty = parse_graph(R"(graph g(%x: f32[0,3]) {
  %y: f32[0,3] = prim.Elementwise(%x) {fn = "exp"}
  return %y
})");
  EXPECT_EQ(halide_reject(empty), "value 'x' is empty (a zero-size dim)");
  try {
    halide_jit(mod);
    FAIL() << "compiled an fmod";
  } catch (const Unsupported& e) {
    EXPECT_STREQ(e.what(), "prim.Elementwise #0: prim.Elementwise fn 'fmod' is not lowered");
  }
}

// f16 and bf16 are stored as such and computed in f32, each computed value rounded to its type
// as the interpreter rounds it.
TEST(HalideLowering, HalfTypesComputeInF32) {
  for (const char* t : {"f16", "bf16"}) {
    Graph g = parse_graph(fmt::format(R"(graph g(%x: {0}[16,40], %y: {0}[16,40]) {{
  const %two = {0}[]{{2}}
  %a: {0}[16,40] = prim.Elementwise(%x, %y) {{fn = "add"}}
  %b: {0}[16,40] = prim.Elementwise(%a, %two) {{fn = "mul"}}
  %e: {0}[16,40] = prim.Elementwise(%b) {{fn = "exp"}}
  %s: {0}[16,1] = prim.Reduce(%e) {{axes = [1], kind = "sum"}}
  %sb: {0}[16,40] = prim.Broadcast(%s) {{shape = [16, 40]}}
  %y2: {0}[16,40] = prim.Elementwise(%e, %sb) {{fn = "div"}}
  %c: f32[16,40] = prim.Elementwise(%y2) {{fn = "cast", to = 1}}
  return %y2, %c
}})",
                                      t));
    EXPECT_EQ(halide_reject(g), "");
    EXPECT_EQ(halide_matches(g, 21), "") << t;
  }
}

TEST(HalideErrors, CompileFailureIsAnError) {
  Graph g = parse_graph(kSoftmax);
  try {
    halide_compile_to_object(g, "/nonexistent-dir/kernel", "softmax");
    FAIL() << "wrote into a missing directory";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_TRUE(message.starts_with("Halide: ")) << message;
    EXPECT_NE(message.find("Error opening output /nonexistent-dir/kernel.o"), std::string::npos)
        << message;
  }
}

TEST(HalideErrors, WrongInputIsAnError) {
  Graph g = parse_graph(kSoftmax);
  HalideKernel hk = halide_jit(g);
  std::vector<Tensor> in{Tensor(DType::f32, {64, 99})};
  std::vector<Tensor> out{Tensor(DType::f32, {64, 100})};
  try {
    hk.kernel->run(in, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 0 is f32[64,99], the kernel takes f32[64,100]");
  }
}

TEST(HalideAot, WritesObjectAndHeader) {
  Graph g = parse_graph(kSoftmax);
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "orch_halide_aot_test";
  std::filesystem::create_directories(dir);
  std::string prefix = (dir / "softmax_rows").string();
  halide_compile_to_object(g, prefix, "orch_softmax_rows");
  ASSERT_TRUE(std::filesystem::exists(prefix + ".o"));
  EXPECT_GT(std::filesystem::file_size(prefix + ".o"), 1000u);
  std::ifstream header(prefix + ".h");
  std::stringstream text;
  text << header.rdbuf();
  EXPECT_NE(text.str().find("int orch_softmax_rows(struct halide_buffer_t *"), std::string::npos)
      << text.str();
  std::filesystem::remove_all(dir);
}

TEST(HalideBackend, EntryRejectsAndCompiles) {
  const Backend& b = halide_backend();
  EXPECT_EQ(b.name, "halide");
  Graph g = parse_graph(kChain);
  EXPECT_EQ(b.reject(g), "");
  std::unique_ptr<Kernel> k = b.compile(g);
  std::vector<Tensor> in = interp::random_inputs(g, 5);
  std::vector<Tensor> out{Tensor(DType::f32, {5, 37})};
  k->run(in, out);
  EXPECT_EQ(compare(interp::interpret(g, in)[0], out[0]), "");
}

}  // namespace
}  // namespace orch::codegen
