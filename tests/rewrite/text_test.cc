// Each rule once on a small graph in the text format: the expected graph (written by hand), and
// graphs where the guard fails, which must not match.
#include <gtest/gtest.h>

#include "ir/text_format.h"
#include "ir/verifier.h"
#include "rewrite/rule.h"

namespace orch::rewrite {
namespace {

// Applies `rule` at its first match; "no match" or "refused" otherwise.
std::string rewrite_once(std::string_view rule, std::string_view text) {
  const RewriteRule* r = find_rule(rule);
  if (r == nullptr) return "no such rule";
  Graph graph = parse_graph(text);
  MatchContext ctx(graph);
  std::vector<NodeId> roots = matches(*r, ctx);
  if (roots.empty()) return "no match";
  std::optional<Graph> result = apply_rule(*r, graph, ctx, roots[0]);
  if (!result) return "refused";
  verify(*result);
  return print_graph(*result);
}

void expect_rewrite(std::string_view rule, std::string_view before, std::string_view after) {
  EXPECT_EQ(rewrite_once(rule, before), print_graph(parse_graph(after))) << rule;
}

void expect_no_match(std::string_view rule, std::string_view text) {
  EXPECT_EQ(rewrite_once(rule, text), "no match") << rule;
}

TEST(CleanupText, FoldConstants) {
  expect_rewrite("fold_constants", R"(graph main(%x: f32[2]) {
  const %c = f32[2]{1, 4}
  %s: f32[2] = prim.Elementwise(%c) {fn = "sqrt"}
  %y: f32[2] = prim.Elementwise(%x, %s) {fn = "add"}
  return %y
})",
                 R"(graph main(%x: f32[2]) {
  const %rw0 = f32[2]{1, 2}
  %y: f32[2] = prim.Elementwise(%x, %rw0) {fn = "add"}
  return %y
})");
  // Broadcasting a constant to 100 elements would grow the model.
  expect_no_match("fold_constants", R"(graph main(%x: f32[100]) {
  const %c = f32[1]{2}
  %b: f32[100] = prim.Broadcast(%c) {shape = [100]}
  %y: f32[100] = prim.Elementwise(%x, %b) {fn = "add"}
  return %y
})");
}

TEST(CleanupText, ElementwiseIdentity) {
  expect_rewrite("elementwise_identity", R"(graph main(%x: f32[2]) {
  const %one = f32[]{1}
  %r: f32[2] = prim.Elementwise(%x) {fn = "relu"}
  %y: f32[2] = prim.Elementwise(%r, %one) {fn = "mul"}
  %z: f32[2] = prim.Elementwise(%y) {fn = "neg"}
  return %z
})",
                 R"(graph main(%x: f32[2]) {
  %r: f32[2] = prim.Elementwise(%x) {fn = "relu"}
  %z: f32[2] = prim.Elementwise(%r) {fn = "neg"}
  return %z
})");
  expect_no_match("elementwise_identity", R"(graph main(%x: f32[2]) {
  const %c = f32[2]{1, 2}
  %y: f32[2] = prim.Elementwise(%x, %c) {fn = "mul"}
  %z: f32[2] = prim.Elementwise(%y) {fn = "neg"}
  return %z
})");
  // x - 0 at the graph output would rename the input.
  expect_no_match("elementwise_identity", R"(graph main(%x: f32[2]) {
  const %zero = f32[]{0}
  %y: f32[2] = prim.Elementwise(%x, %zero) {fn = "sub"}
  return %y
})");
}

TEST(CleanupText, LayoutIdentity) {
  expect_rewrite("layout_identity", R"(graph main(%x: f32[3,3]) {
  %r: f32[3,3] = prim.Elementwise(%x) {fn = "relu"}
  %t: f32[3,3] = prim.Transpose(%r) {perm = [0, 1]}
  %z: f32[3,3] = prim.Elementwise(%t) {fn = "neg"}
  return %z
})",
                 R"(graph main(%x: f32[3,3]) {
  %r: f32[3,3] = prim.Elementwise(%x) {fn = "relu"}
  %z: f32[3,3] = prim.Elementwise(%r) {fn = "neg"}
  return %z
})");
  expect_no_match("layout_identity", R"(graph main(%x: f32[3,3]) {
  %r: f32[3,3] = prim.Elementwise(%x) {fn = "relu"}
  %t: f32[3,3] = prim.Transpose(%r) {perm = [1, 0]}
  %z: f32[3,3] = prim.Elementwise(%t) {fn = "neg"}
  return %z
})");
}

TEST(CleanupText, TransposeTranspose) {
  expect_rewrite("transpose_transpose", R"(graph main(%x: f32[2,3,4]) {
  %t1: f32[3,4,2] = prim.Transpose(%x) {perm = [1, 2, 0]}
  %t2: f32[4,3,2] = prim.Transpose(%t1) {perm = [1, 0, 2]}
  return %t2
})",
                 R"(graph main(%x: f32[2,3,4]) {
  %t2: f32[4,3,2] = prim.Transpose(%x) {perm = [2, 1, 0]}
  return %t2
})");
  expect_rewrite("transpose_transpose", R"(graph main(%x: f32[2,3,4]) {
  %r: f32[2,3,4] = prim.Elementwise(%x) {fn = "relu"}
  %t1: f32[3,4,2] = prim.Transpose(%r) {perm = [1, 2, 0]}
  %t2: f32[2,3,4] = prim.Transpose(%t1) {perm = [2, 0, 1]}
  %z: f32[2,3,4] = prim.Elementwise(%t2) {fn = "neg"}
  return %z
})",
                 R"(graph main(%x: f32[2,3,4]) {
  %r: f32[2,3,4] = prim.Elementwise(%x) {fn = "relu"}
  %z: f32[2,3,4] = prim.Elementwise(%r) {fn = "neg"}
  return %z
})");
  expect_no_match("transpose_transpose", R"(graph main(%x: f32[2,3]) {
  %r: f32[2,3] = prim.Elementwise(%x) {fn = "relu"}
  %t: f32[3,2] = prim.Transpose(%r) {perm = [1, 0]}
  return %t
})");
}

TEST(CleanupText, ReshapeReshape) {
  expect_rewrite("reshape_reshape", R"(graph main(%x: f32[2,6]) {
  %a: f32[3,4] = prim.Reshape(%x) {shape = [3, 4]}
  %b: f32[12] = prim.Reshape(%a) {shape = [12]}
  return %b
})",
                 R"(graph main(%x: f32[2,6]) {
  %b: f32[12] = prim.Reshape(%x) {shape = [12]}
  return %b
})");
}

TEST(CleanupText, BroadcastBroadcast) {
  expect_rewrite("broadcast_broadcast", R"(graph main(%x: f32[1,1]) {
  %a: f32[1,3] = prim.Broadcast(%x) {shape = [1, 3]}
  %b: f32[2,3] = prim.Broadcast(%a) {shape = [2, 3]}
  return %b
})",
                 R"(graph main(%x: f32[1,1]) {
  %b: f32[2,3] = prim.Broadcast(%x) {shape = [2, 3]}
  return %b
})");
}

constexpr std::string_view kSliceOfConcat = R"(graph main(%a: f32[2,2], %b: f32[2,3]) {
  %c: f32[2,5] = prim.Concat(%a, %b) {axis = 1}
  %s: f32[2,2] = prim.Slice(%c) {ends = [2, %END], starts = [0, %START], steps = [1, 1]}
  %z: f32[2,2] = prim.Elementwise(%s) {fn = "neg"}
  return %z
})";

std::string slice_of_concat(int start, int end) {
  std::string text(kSliceOfConcat);
  text.replace(text.find("%END"), 4, std::to_string(end));
  text.replace(text.find("%START"), 6, std::to_string(start));
  return text;
}

TEST(CleanupText, SliceOfConcat) {
  expect_rewrite("slice_of_concat", slice_of_concat(3, 5),
                 R"(graph main(%a: f32[2,2], %b: f32[2,3]) {
  %rw0: f32[2,2] = prim.Slice(%b) {ends = [2, 3], starts = [0, 1], steps = [1, 1]}
  %z: f32[2,2] = prim.Elementwise(%rw0) {fn = "neg"}
  return %z
})");
  // Columns 1..2 take one column of each input.
  expect_no_match("slice_of_concat", slice_of_concat(1, 3));
}

TEST(CleanupText, CommonSubexpressions) {
  expect_rewrite("cse", R"(graph main(%x: f32[2]) {
  %a: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %b: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %c: f32[2] = prim.Elementwise(%a, %b) {fn = "sub"}
  return %c
})",
                 R"(graph main(%x: f32[2]) {
  %a: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %c: f32[2] = prim.Elementwise(%a, %a) {fn = "sub"}
  return %c
})");
  expect_no_match("cse", R"(graph main(%x: f32[2]) {
  %a: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %b: f32[2] = prim.Elementwise(%x) {fn = "log"}
  %c: f32[2] = prim.Elementwise(%a, %b) {fn = "sub"}
  return %c
})");
}

TEST(AttentionText, ReduceSumToMatMul) {
  expect_rewrite("reduce_sum_to_matmul", R"(graph main(%x: f32[2,3]) {
  %s: f32[2,1] = prim.Reduce(%x) {axes = [1], kind = "sum"}
  %z: f32[2,1] = prim.Elementwise(%s) {fn = "neg"}
  return %z
})",
                 R"(graph main(%x: f32[2,3]) {
  const %rw0 = f32[3,1]{1, 1, 1}
  %rw1: f32[2,1] = prim.MatMul(%x, %rw0)
  %z: f32[2,1] = prim.Elementwise(%rw1) {fn = "neg"}
  return %z
})");
  expect_no_match("reduce_sum_to_matmul", R"(graph main(%x: f32[2,3]) {
  %s: f32[1,3] = prim.Reduce(%x) {axes = [0], kind = "sum"}
  return %s
})");
  expect_no_match("reduce_sum_to_matmul", R"(graph main(%x: f32[2,3]) {
  %s: f32[2,1] = prim.Reduce(%x) {axes = [1], kind = "max"}
  return %s
})");
}

constexpr std::string_view kScaledMatMul = R"(graph main(%e: f32[2,3], %s: f32[2,1], %v: f32[3,4]) {
  %b: f32[2,3] = prim.Broadcast(%s) {shape = [2, 3]}
  %d: f32[2,3] = prim.Elementwise(%e, %b) {fn = "div"}
  %y: f32[2,4] = prim.MatMul(%d, %v)
  %z: f32[2,4] = prim.Elementwise(%y) {fn = "neg"}
  return %z%EXTRA
})";

TEST(AttentionText, ScalePastMatMul) {
  std::string text(kScaledMatMul);
  text.replace(text.find("%EXTRA"), 6, "");
  expect_rewrite("scale_past_matmul", text,
                 R"(graph main(%e: f32[2,3], %s: f32[2,1], %v: f32[3,4]) {
  %rw0: f32[2,4] = prim.MatMul(%e, %v)
  %rw1: f32[2,4] = prim.Broadcast(%s) {shape = [2, 4]}
  %rw2: f32[2,4] = prim.Elementwise(%rw0, %rw1) {fn = "div"}
  %z: f32[2,4] = prim.Elementwise(%rw2) {fn = "neg"}
  return %z
})");
  // The divided value is also a graph output: moving the division would compute it twice.
  text = kScaledMatMul;
  text.replace(text.find("%EXTRA"), 6, ", %d");
  expect_no_match("scale_past_matmul", text);
  // A divisor that varies along the row is not a per-row scale.
  expect_no_match("scale_past_matmul", R"(graph main(%e: f32[2,3], %s: f32[1,3], %v: f32[3,4]) {
  %b: f32[2,3] = prim.Broadcast(%s) {shape = [2, 3]}
  %d: f32[2,3] = prim.Elementwise(%e, %b) {fn = "div"}
  %y: f32[2,4] = prim.MatMul(%d, %v)
  return %y
})");
}

TEST(AttentionText, MergeMatMulsSharingTheLeftInput) {
  expect_rewrite("merge_matmuls_shared_lhs", R"(graph main(%a: f32[2,3]) {
  const %w1 = f32[3,2]{1, 2, 3, 4, 5, 6}
  const %w2 = f32[3,1]{7, 8, 9}
  %y1: f32[2,2] = prim.MatMul(%a, %w1)
  %y2: f32[2,1] = prim.MatMul(%a, %w2)
  %z1: f32[2,2] = prim.Elementwise(%y1) {fn = "neg"}
  %z2: f32[2,1] = prim.Elementwise(%y2) {fn = "tanh"}
  return %z1, %z2
})",
                 R"(graph main(%a: f32[2,3]) {
  const %w1 = f32[3,2]{1, 2, 3, 4, 5, 6}
  const %w2 = f32[3,1]{7, 8, 9}
  %rw0: f32[3,3] = prim.Concat(%w1, %w2) {axis = 1}
  %rw1: f32[2,3] = prim.MatMul(%a, %rw0)
  %rw2: f32[2,2] = prim.Slice(%rw1) {ends = [2, 2], starts = [0, 0], steps = [1, 1]}
  %z1: f32[2,2] = prim.Elementwise(%rw2) {fn = "neg"}
  %rw3: f32[2,1] = prim.Slice(%rw1) {ends = [2, 3], starts = [0, 2], steps = [1, 1]}
  %z2: f32[2,1] = prim.Elementwise(%rw3) {fn = "tanh"}
  return %z1, %z2
})");
  // The second weight is computed from the first product: merging would make a cycle.
  expect_no_match("merge_matmuls_shared_lhs", R"(graph main(%a: f32[2,2]) {
  const %w1 = f32[2,2]{1, 2, 3, 4}
  %y1: f32[2,2] = prim.MatMul(%a, %w1)
  %w2: f32[2,2] = prim.Elementwise(%y1) {fn = "exp"}
  %y2: f32[2,2] = prim.MatMul(%a, %w2)
  return %y2
})");
}

TEST(AttentionText, MergeMatMulsSharingTheRightInput) {
  expect_rewrite("merge_matmuls_shared_rhs", R"(graph main(%a1: f32[1,3], %a2: f32[2,3]) {
  const %w = f32[3,1]{1, 2, 3}
  %y1: f32[1,1] = prim.MatMul(%a1, %w)
  %y2: f32[2,1] = prim.MatMul(%a2, %w)
  %z1: f32[1,1] = prim.Elementwise(%y1) {fn = "neg"}
  %z2: f32[2,1] = prim.Elementwise(%y2) {fn = "neg"}
  return %z1, %z2
})",
                 R"(graph main(%a1: f32[1,3], %a2: f32[2,3]) {
  const %w = f32[3,1]{1, 2, 3}
  %rw0: f32[3,3] = prim.Concat(%a1, %a2) {axis = 0}
  %rw1: f32[3,1] = prim.MatMul(%rw0, %w)
  %rw2: f32[1,1] = prim.Slice(%rw1) {ends = [1, 1], starts = [0, 0], steps = [1, 1]}
  %z1: f32[1,1] = prim.Elementwise(%rw2) {fn = "neg"}
  %rw3: f32[2,1] = prim.Slice(%rw1) {ends = [3, 1], starts = [1, 0], steps = [1, 1]}
  %z2: f32[2,1] = prim.Elementwise(%rw3) {fn = "neg"}
  return %z1, %z2
})");
}

TEST(LayoutText, TransposeAsReshape) {
  expect_rewrite("transpose_as_reshape", R"(graph main(%x: f32[3,1,4]) {
  %t: f32[1,3,4] = prim.Transpose(%x) {perm = [1, 0, 2]}
  return %t
})",
                 R"(graph main(%x: f32[3,1,4]) {
  %t: f32[1,3,4] = prim.Reshape(%x) {shape = [1, 3, 4]}
  return %t
})");
  expect_no_match("transpose_as_reshape", R"(graph main(%x: f32[3,1,4]) {
  %t: f32[4,1,3] = prim.Transpose(%x) {perm = [2, 1, 0]}
  return %t
})");
}

TEST(LayoutText, TransposePastMatMul) {
  expect_rewrite("transpose_past_matmul", R"(graph main(%a: f32[2,3,4,5], %b: f32[2,3,5,6]) {
  %ta: f32[3,2,4,5] = prim.Transpose(%a) {perm = [1, 0, 2, 3]}
  %tb: f32[3,2,5,6] = prim.Transpose(%b) {perm = [1, 0, 2, 3]}
  %y: f32[3,2,4,6] = prim.MatMul(%ta, %tb)
  return %y
})",
                 R"(graph main(%a: f32[2,3,4,5], %b: f32[2,3,5,6]) {
  %rw0: f32[2,3,4,6] = prim.MatMul(%a, %b)
  %y: f32[3,2,4,6] = prim.Transpose(%rw0) {perm = [1, 0, 2, 3]}
  return %y
})");
  // A perm that moves the matrix dims changes what is multiplied.
  expect_no_match("transpose_past_matmul", R"(graph main(%a: f32[2,4,4], %b: f32[2,4,4]) {
  %ta: f32[2,4,4] = prim.Transpose(%a) {perm = [0, 2, 1]}
  %tb: f32[2,4,4] = prim.Transpose(%b) {perm = [0, 2, 1]}
  %y: f32[2,4,4] = prim.MatMul(%ta, %tb)
  return %y
})");
}

TEST(FoldingText, ScaleIntoLinear) {
  expect_rewrite("scale_into_linear", R"(graph main(%x: f32[2,3]) {
  const %w = f32[3,2]{1, 2, 3, 4, 5, 6}
  const %c = f32[1,2]{10, 100}
  %y: f32[2,2] = prim.MatMul(%x, %w)
  %b: f32[2,2] = prim.Broadcast(%c) {shape = [2, 2]}
  %z: f32[2,2] = prim.Elementwise(%y, %b) {fn = "mul"}
  %o: f32[2,2] = prim.Elementwise(%z) {fn = "neg"}
  return %o
})",
                 R"(graph main(%x: f32[2,3]) {
  const %rw0 = f32[3,2]{10, 200, 30, 400, 50, 600}
  %rw1: f32[2,2] = prim.MatMul(%x, %rw0)
  %o: f32[2,2] = prim.Elementwise(%rw1) {fn = "neg"}
  return %o
})");
  // A scale per row of the product is not a scale of W's columns.
  expect_no_match("scale_into_linear", R"(graph main(%x: f32[2,3]) {
  const %w = f32[3,2]{1, 2, 3, 4, 5, 6}
  const %c = f32[2,1]{10, 100}
  %y: f32[2,2] = prim.MatMul(%x, %w)
  %b: f32[2,2] = prim.Broadcast(%c) {shape = [2, 2]}
  %z: f32[2,2] = prim.Elementwise(%y, %b) {fn = "mul"}
  return %z
})");
}

TEST(FoldingText, ScalePastBias) {
  expect_rewrite("scale_past_bias", R"(graph main(%x: f32[2,2]) {
  const %bias = f32[1,2]{1, 2}
  const %c = f32[1,2]{3, 4}
  %y: f32[2,2] = prim.Elementwise(%x) {fn = "relu"}
  %bb: f32[2,2] = prim.Broadcast(%bias) {shape = [2, 2]}
  %a: f32[2,2] = prim.Elementwise(%y, %bb) {fn = "add"}
  %bc: f32[2,2] = prim.Broadcast(%c) {shape = [2, 2]}
  %m: f32[2,2] = prim.Elementwise(%a, %bc) {fn = "mul"}
  %o: f32[2,2] = prim.Elementwise(%m) {fn = "neg"}
  return %o
})",
                 R"(graph main(%x: f32[2,2]) {
  const %c = f32[1,2]{3, 4}
  const %rw1 = f32[1,2]{3, 8}
  %y: f32[2,2] = prim.Elementwise(%x) {fn = "relu"}
  %bc: f32[2,2] = prim.Broadcast(%c) {shape = [2, 2]}
  %rw0: f32[2,2] = prim.Elementwise(%y, %bc) {fn = "mul"}
  %rw2: f32[2,2] = prim.Broadcast(%rw1) {shape = [2, 2]}
  %rw3: f32[2,2] = prim.Elementwise(%rw0, %rw2) {fn = "add"}
  %o: f32[2,2] = prim.Elementwise(%rw3) {fn = "neg"}
  return %o
})");
}

TEST(FoldingText, AddConstants) {
  expect_rewrite("add_constants", R"(graph main(%x: f32[2,2]) {
  const %b1 = f32[1,2]{1, 2}
  const %b2 = f32[1,2]{10, 20}
  %y: f32[2,2] = prim.Elementwise(%x) {fn = "relu"}
  %bb1: f32[2,2] = prim.Broadcast(%b1) {shape = [2, 2]}
  %a: f32[2,2] = prim.Elementwise(%y, %bb1) {fn = "add"}
  %bb2: f32[2,2] = prim.Broadcast(%b2) {shape = [2, 2]}
  %z: f32[2,2] = prim.Elementwise(%a, %bb2) {fn = "add"}
  return %z
})",
                 R"(graph main(%x: f32[2,2]) {
  const %rw0 = f32[1,2]{11, 22}
  %y: f32[2,2] = prim.Elementwise(%x) {fn = "relu"}
  %rw1: f32[2,2] = prim.Broadcast(%rw0) {shape = [2, 2]}
  %z: f32[2,2] = prim.Elementwise(%y, %rw1) {fn = "add"}
  return %z
})");
}

}  // namespace
}  // namespace orch::rewrite
