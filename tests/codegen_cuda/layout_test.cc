// Every layout primitive, generated, emulated on the host and compared with the interpreter.
#include "cuda_util.h"

namespace orch::codegen {
namespace {

TEST(CudaLayout, EveryLayoutPrimitiveMatchesTheInterpreter) {
  std::vector<CudaCase> cases;
  cases.push_back(cuda_case("transpose_reshape", R"(graph g(%x: f32[8,16,5], %z: f32[5,8,16]) {
  %t: f32[5,8,16] = prim.Transpose(%x) {perm = [2, 0, 1]}
  %a: f32[5,8,16] = prim.Elementwise(%t, %z) {fn = "sub"}
  %r: f32[40,16] = prim.Reshape(%a) {shape = [40, 16]}
  %e: f32[40,16] = prim.Elementwise(%r) {fn = "exp"}
  %p: f32[16,40] = prim.Transpose(%e) {perm = [1, 0]}
  return %p, %a
})"));
  cases.push_back(cuda_case("slice_concat_pad_tile", R"(graph g(%x: f32[6,20], %y: f32[7,7]) {
  %s: f32[3,9] = prim.Slice(%x) {ends = [6, 19], starts = [0, 1], steps = [2, 2]}
  %t: f32[3,7] = prim.Slice(%y) {ends = [7, 7], starts = [1, 0], steps = [2, 1]}
  %c: f32[3,16] = prim.Concat(%s, %t) {axis = 1}
  %p: f32[5,21] = prim.Pad(%c) {pads = [1, 2, 1, 3], value = 1.5}
  %q: f32[5,25] = prim.Pad(%p) {mode = "reflect", pads = [0, 2, 0, 2]}
  %e: f32[7,25] = prim.Pad(%q) {mode = "edge", pads = [1, 0, 1, 0]}
  %r: f32[14,50] = prim.Tile(%e) {repeats = [2, 2]}
  %n: f32[14,50] = prim.Elementwise(%r) {fn = "neg"}
  return %n
})",
                            2));
  cases.push_back(cuda_case("gather", R"(graph g(%x: f32[10,12]) {
  const %i = i64[2,2]{0, -1, 9, 3}
  const %j = i64[10,2]{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7}
  %g: f32[2,2,12] = prim.Gather(%x, %i) {axis = 0}
  %e: f32[10,2] = prim.GatherElements(%x, %j) {axis = 1}
  %a: f32[2,2,12] = prim.Elementwise(%g) {fn = "abs"}
  return %a, %e
})",
                            3));
  cases.push_back(cuda_case("resize", R"(graph g(%x: f32[1,2,6,8]) {
  %n: f32[1,2,12,16] = prim.Resize(%x) {mode = "nearest", scales = [1.0, 1.0, 2.0, 2.0]}
  %l: f32[1,2,12,16] = prim.Resize(%x) {mode = "linear", scales = [1.0, 1.0, 2.0, 2.0]}
  %a: f32[1,2,5,4] = prim.Resize(%x) {coordinate_transformation_mode = "align_corners", mode = "linear", sizes = [1, 2, 5, 4]}
  %c: f32[1,2,9,8] = prim.Resize(%x) {mode = "cubic", scales = [1.0, 1.0, 1.5, 1.0]}
  %s: f32[1,2,12,16] = prim.Elementwise(%n, %l) {fn = "add"}
  return %s, %a, %c
})",
                            4));
  cases.push_back(cuda_case("resize_periodic", R"(graph g(%x: f32[1,3,7,8]) {
  %u: f32[1,3,28,32] = prim.Resize(%x) {mode = "linear", scales = [1.0, 1.0, 4.0, 4.0]}
  %d: f32[1,3,14,4] = prim.Resize(%u) {mode = "linear", scales = [1.0, 1.0, 0.5, 0.125]}
  %p: f32[1,3,7,12] = prim.Resize(%x) {mode = "nearest", nearest_mode = "floor", scales = [1.0, 1.0, 1.0, 1.5]}
  return %d, %p
})",
                            5));
  expect_all_match(cases);
}

// An upsampling by an integer ratio indexes with arithmetic: no tap table is baked, while an
// align_corners axis, whose taps do not repeat, reads its tables.
TEST(CudaLayout, IntegerResizeReadsNoTapTables) {
  Graph periodic = parse_graph(R"(graph g(%x: f32[1,2,6,8]) {
  %l: f32[1,2,12,32] = prim.Resize(%x) {mode = "linear", scales = [1.0, 1.0, 2.0, 4.0]}
  return %l
})");
  EXPECT_EQ(cuda_kernel_source(periodic, "k").code.find("_index["), std::string::npos);
  Graph tables = parse_graph(R"(graph g(%x: f32[1,2,6,8]) {
  %a: f32[1,2,5,4] = prim.Resize(%x) {coordinate_transformation_mode = "align_corners", mode = "linear", sizes = [1, 2, 5, 4]}
  return %a
})");
  EXPECT_NE(cuda_kernel_source(tables, "k").code.find("_index["), std::string::npos);
}

}  // namespace
}  // namespace orch::codegen
