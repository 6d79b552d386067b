// Layout kernels and shape rules against hand-derived expectations.
#include <gtest/gtest.h>

#include <limits>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch {
namespace {

// Parses a graph, runs it on `inputs` and returns its first output.
Tensor run(std::string_view text, std::vector<Tensor> inputs = {}) {
  Graph g = parse_graph(text);
  return interp::interpret(g, inputs).at(0);
}

Tensor iota(DType t, Shape shape) {
  Tensor x(t, std::move(shape));
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i));
  return x;
}

using D = std::vector<double>;

// The message of the Error that parsing `text` throws, without the parser's "line N: " prefix.
std::string parse_error(std::string_view text) {
  try {
    parse_graph(text);
  } catch (const Error& e) {
    std::string message = e.what();
    return message.substr(message.find(": ") + 2);
  }
  return "no error";
}

TEST(Layout, TransposeDefaultReversesDims) {
  Tensor y = run(R"(graph g(%x: f32[2,3]) {
    %y: f32[3,2] = Transpose(%x)
    return %y
  })",
                 {iota(DType::f32, {2, 3})});
  EXPECT_EQ(y.to_doubles(), (D{0, 3, 1, 4, 2, 5}));
}

TEST(Layout, TransposePermMovesLastAxisFirst) {
  // out[k, i, 0] = x[i, 0, k] = 3i + k.
  Tensor y = run(R"(graph g(%x: f32[2,1,3]) {
    %y: f32[3,2,1] = Transpose(%x) {perm = [2, 0, 1]}
    return %y
  })",
                 {iota(DType::f32, {2, 1, 3})});
  EXPECT_EQ(y.to_doubles(), (D{0, 3, 1, 4, 2, 5}));
}

TEST(Layout, TransposeCopiesI64Exactly) {
  int64_t big = std::numeric_limits<int64_t>::max() - 1;
  Tensor x = Tensor::from_ints(DType::i64, {2, 1}, std::vector<int64_t>{big, -big});
  Tensor y = run(R"(graph g(%x: i64[2,1]) {
    %y: i64[1,2] = Transpose(%x)
    return %y
  })",
                 {x});
  EXPECT_EQ(y.to_ints(), (std::vector<int64_t>{big, -big}));
}

TEST(Layout, ReshapeZeroCopiesAndMinusOneInfers) {
  // [0, -1] on [2,3,4]: 0 keeps 2, -1 becomes 24 / 2 = 12; [-1, 0, 2]: 0 keeps 3, -1 is 4.
  Graph g = parse_graph(R"(graph g(%x: f32[2,3,4]) {
    const %s1 = i64[2]{0, -1}
    const %s2 = i64[3]{-1, 0, 2}
    %a: f32[2,12] = Reshape(%x, %s1)
    %b: f32[4,3,2] = Reshape(%x, %s2)
    return %a, %b
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {2, 3, 4})});
  EXPECT_EQ(out[0].to_doubles(), iota(DType::f32, {24}).to_doubles());
  EXPECT_EQ(out[1].to_doubles(), iota(DType::f32, {24}).to_doubles());
}

TEST(Layout, ReshapeAllowzeroKeepsZero) {
  Tensor y = run(R"(graph g(%x: f32[0,3]) {
    const %s = i64[2]{3, 0}
    %y: f32[3,0] = Reshape(%x, %s) {allowzero = 1}
    return %y
  })",
                 {Tensor(DType::f32, {0, 3})});
  EXPECT_EQ(y.shape(), (Shape{3, 0}));
}

TEST(Layout, ReshapeErrors) {
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[2,3]) {
    const %s = i64[2]{-1, -1}
    %y: f32[6] = Reshape(%x, %s)
    return %y
  })"),
            "Reshape: shape [-1,-1] has more than one -1");
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[0,3]) {
    const %s = i64[2]{0, -1}
    %y: f32[0,3] = Reshape(%x, %s) {allowzero = 1}
    return %y
  })"),
            "Reshape: shape [0,-1] has both 0 and -1 with allowzero=1");
}

TEST(Layout, FlattenNegativeAxis) {
  Graph g = parse_graph(R"(graph g(%x: f32[2,3,4]) {
    %a: f32[6,4] = Flatten(%x) {axis = -1}
    %b: f32[1,24] = Flatten(%x) {axis = 0}
    %c: f32[24,1] = Flatten(%x) {axis = 3}
    return %a, %b, %c
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {2, 3, 4})});
  EXPECT_EQ(out[0].to_doubles(), iota(DType::f32, {24}).to_doubles());
}

TEST(Layout, SqueezeWithAndWithoutAxes) {
  Graph g = parse_graph(R"(graph g(%x: f32[1,3,1]) {
    const %ax = i64[1]{-1}
    %a: f32[3] = Squeeze(%x)
    %b: f32[1,3] = Squeeze(%x, %ax)
    return %a, %b
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {1, 3, 1})});
  EXPECT_EQ(out[0].to_doubles(), (D{0, 1, 2}));
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[1,3]) {
    const %ax = i64[1]{1}
    %y: f32[1] = Squeeze(%x, %ax)
    return %y
  })"),
            "Squeeze: cannot squeeze axis 1 of size 3");
}

TEST(Layout, UnsqueezeNegativeAxesCountInTheOutput) {
  // Output rank 4: -1 is axis 3, 0 is axis 0; [1, -2] are axes 1 and 2.
  Graph g = parse_graph(R"(graph g(%x: f32[3,4]) {
    const %a1 = i64[2]{-1, 0}
    const %a2 = i64[2]{1, -2}
    %a: f32[1,3,4,1] = Unsqueeze(%x, %a1)
    %b: f32[3,1,1,4] = Unsqueeze(%x, %a2)
    return %a, %b
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {3, 4})});
  EXPECT_EQ(out[1].to_doubles(), iota(DType::f32, {12}).to_doubles());
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[3]) {
    const %a = i64[2]{0, -3}
    %y: f32[1,1,3] = Unsqueeze(%x, %a)
    return %y
  })"),
            "Unsqueeze: axis -3 is repeated");
}

TEST(Layout, ConcatNegativeAxisWithZeroSizeInput) {
  Tensor a = Tensor::from_doubles(DType::f32, {2, 1}, D{1, 2});
  Tensor y =
      run(R"(graph g(%a: f32[2,1], %e: f32[2,0], %b: f32[2,2]) {
    %y: f32[2,3] = Concat(%a, %e, %b) {axis = -1}
    return %y
  })",
          {a, Tensor(DType::f32, {2, 0}), Tensor::from_doubles(DType::f32, {2, 2}, D{3, 4, 5, 6})});
  EXPECT_EQ(y.to_doubles(), (D{1, 3, 4, 2, 5, 6}));
  EXPECT_EQ(parse_error(R"(graph g(%a: f32[2,1], %b: f32[3,1]) {
    %y: f32[2,2] = Concat(%a, %b) {axis = 1}
    return %y
  })"),
            "Concat: input 1 has shape [3,1], input 0 has [2,1]: only axis 1 may differ");
}

TEST(Layout, SplitBySizesEquallyAndByNumOutputs) {
  Graph g = parse_graph(R"(graph g(%x: f32[2,7]) {
    const %s = i64[3]{1, 4, 2}
    %a: f32[2,1], %b: f32[2,4], %c: f32[2,2] = Split(%x, %s) {axis = -1}
    %d: f32[1,7], %e: f32[1,7] = Split(%x)
    %f: f32[2,2], %g: f32[2,2], %h: f32[2,2], %i: f32[2,1] = Split(%x) {axis = 1, num_outputs = 4}
    return %b, %e, %i
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {2, 7})});
  EXPECT_EQ(out[0].to_doubles(), (D{1, 2, 3, 4, 8, 9, 10, 11}));
  EXPECT_EQ(out[1].to_doubles(), (D{7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(out[2].to_doubles(), (D{6, 13}));
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[5]) {
    %a: f32[2], %b: f32[2] = Split(%x)
    return %a
  })"),
            "Split: axis 0 of size 5 does not split into 2 equal parts");
}

TEST(Layout, SliceNegativeStepsAndClamping) {
  Tensor x = iota(DType::f32, {10});
  // 8, 5, 2: stops before 1.
  EXPECT_EQ(run(R"(graph g(%x: f32[10]) {
    const %b = i64[1]{8}
    const %e = i64[1]{1}
    const %a = i64[1]{0}
    const %s = i64[1]{-3}
    %y: f32[3] = Slice(%x, %b, %e, %a, %s)
    return %y
  })",
                {x})
                .to_doubles(),
            (D{8, 5, 2}));
  // start -1 is 9; end INT64_MIN clamps to -1, so the whole axis reversed.
  EXPECT_EQ(run(R"(graph g(%x: f32[10]) {
    const %b = i64[1]{-1}
    const %e = i64[1]{-9223372036854775808}
    const %a = i64[1]{0}
    const %s = i64[1]{-1}
    %y: f32[10] = Slice(%x, %b, %e, %a, %s)
    return %y
  })",
                {x})
                .to_doubles(),
            (D{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  // Axis 0: rows 0, 2. Axis 1: start 10 clamps to 3 (dim - 1), end -10 + 4 = -6 clamps to -1.
  EXPECT_EQ(run(R"(graph g(%x: f32[3,4]) {
    const %b = i64[2]{0, 10}
    const %e = i64[2]{3, -10}
    const %a = i64[2]{0, -1}
    const %s = i64[2]{2, -1}
    %y: f32[2,4] = Slice(%x, %b, %e, %a, %s)
    return %y
  })",
                {iota(DType::f32, {3, 4})})
                .to_doubles(),
            (D{3, 2, 1, 0, 11, 10, 9, 8}));
  // Positive steps: start -100 clamps to 0; a start past the end gives an empty axis.
  Graph g = parse_graph(R"(graph g(%x: f32[4]) {
    const %b1 = i32[1]{-100}
    const %e1 = i32[1]{2}
    const %b2 = i64[1]{5}
    const %e2 = i64[1]{100}
    %y: f32[2] = Slice(%x, %b1, %e1)
    %z: f32[0] = Slice(%x, %b2, %e2)
    return %y, %z
  })");
  EXPECT_EQ(interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {4})})[0].to_doubles(),
            (D{0, 1}));
}

TEST(Layout, SliceZeroStepIsAnError) {
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[4]) {
    const %b = i64[1]{0}
    const %a = i64[1]{0}
    const %s = i64[1]{0}
    %y: f32[4] = Slice(%x, %b, %b, %a, %s)
    return %y
  })"),
            "Slice: steps[0] is 0");
}

const Tensor kPadInput = Tensor::from_doubles(DType::f32, {2, 3}, D{1, 2, 3, 4, 5, 6});

TEST(Layout, PadReflect) {
  // Axis 1 gets 2 before and 1 after: [1,2,3] -> [3,2,1,2,3,2].
  EXPECT_EQ(run(R"(graph g(%x: f32[2,3]) {
    const %p = i64[4]{0, 2, 0, 1}
    %y: f32[2,6] = Pad(%x, %p) {mode = "reflect"}
    return %y
  })",
                {kPadInput})
                .to_doubles(),
            (D{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5}));
}

TEST(Layout, PadEdge) {
  EXPECT_EQ(run(R"(graph g(%x: f32[2,3]) {
    const %p = i64[4]{1, 1, 0, 0}
    %y: f32[3,4] = Pad(%x, %p) {mode = "edge"}
    return %y
  })",
                {kPadInput})
                .to_doubles(),
            (D{1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6}));
}

TEST(Layout, PadConstantRuntimeValueAndNegativeCrop) {
  // Crop column 0, add a row and a column of 9 at the end.
  EXPECT_EQ(run(R"(graph g(%x: f32[2,3], %v: f32[]) {
    const %p = i64[4]{0, -1, 1, 1}
    %y: f32[3,3] = Pad(%x, %p, %v)
    return %y
  })",
                {kPadInput, Tensor::scalar(DType::f32, 9)})
                .to_doubles(),
            (D{2, 3, 9, 5, 6, 9, 9, 9, 9}));
}

TEST(Layout, PadAxesInput) {
  EXPECT_EQ(run(R"(graph g(%x: f32[2,3]) {
    const %p = i64[2]{1, 1}
    const %a = i64[1]{-1}
    %y: f32[2,5] = Pad(%x, %p, _, %a)
    return %y
  })",
                {kPadInput})
                .to_doubles(),
            (D{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}));
}

TEST(Layout, PadErrors) {
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {2, 3}});
  ValueId p = b.constant(Tensor::from_ints(DType::i64, {4}, std::vector<int64_t>{0, 1, 0, 1}));
  try {
    b.op("Pad", {x, p}, {{"mode", std::string("wrap")}});
    FAIL();
  } catch (const Unsupported& e) {
    EXPECT_STREQ(e.what(), "Pad: pad mode 'wrap' is not supported (constant, reflect, edge)");
  }
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[2,3]) {
    const %p = i64[2]{0, 1}
    %y: f32[2,5] = Pad(%x, %p)
    return %y
  })"),
            "Pad: pads has 2 entries, expected 4 (2 per axis)");
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[2,3]) {
    const %p = i64[4]{0, -2, 0, -2}
    %y: f32[2,0] = Pad(%x, %p)
    return %y
  })"),
            "Pad: pads crop 4 elements from axis 1 of size 3");
  EXPECT_EQ(parse_error(R"(graph g(%x: f32[2,3]) {
    const %p = i64[4]{0, -3, 0, 1}
    %y: f32[2,1] = Pad(%x, %p) {mode = "edge"}
    return %y
  })"),
            "Pad: edge padding of axis 1 needs at least one element to repeat");
}

TEST(Layout, ExpandBroadcastsBothWays) {
  // [3,1] with [2,1,2]: output [2,3,2]; the input's 3 beats the shape's 1.
  EXPECT_EQ(run(R"(graph g(%x: f32[3,1]) {
    const %s = i64[3]{2, 1, 2}
    %y: f32[2,3,2] = Expand(%x, %s)
    return %y
  })",
                {Tensor::from_doubles(DType::f32, {3, 1}, D{1, 2, 3})})
                .to_doubles(),
            (D{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(Layout, Tile) {
  EXPECT_EQ(run(R"(graph g(%x: f32[2,2]) {
    const %r = i64[2]{2, 2}
    %y: f32[4,4] = Tile(%x, %r)
    return %y
  })",
                {Tensor::from_doubles(DType::f32, {2, 2}, D{1, 2, 3, 4})})
                .to_doubles(),
            (D{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
}

TEST(Layout, DepthToSpaceDcrAndCrdDiffer) {
  // 8 channels, blocksize 2. DCR: channel = (b1 * 2 + b2) * 2 + c; CRD: channel = c * 4 +
  // b1 * 2 + b2; out[c, b1, b2] reads that channel.
  Graph g = parse_graph(R"(graph g(%x: f32[1,8,1,1]) {
    %d: f32[1,2,2,2] = DepthToSpace(%x) {blocksize = 2}
    %c: f32[1,2,2,2] = DepthToSpace(%x) {blocksize = 2, mode = "CRD"}
    return %d, %c
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{iota(DType::f32, {1, 8, 1, 1})});
  EXPECT_EQ(out[0].to_doubles(), (D{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_EQ(out[1].to_doubles(), (D{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Layout, SpaceToDepthInvertsDcr) {
  // out channel (b1 * 2 + b2) * 2 + c reads x[c, b1, b2] = 4c + 2 b1 + b2.
  EXPECT_EQ(run(R"(graph g(%x: f32[1,2,2,2]) {
    %y: f32[1,8,1,1] = SpaceToDepth(%x) {blocksize = 2}
    return %y
  })",
                {iota(DType::f32, {1, 2, 2, 2})})
                .to_doubles(),
            (D{0, 4, 1, 5, 2, 6, 3, 7}));
}

TEST(Layout, TriluUpperAndLowerWithK) {
  Tensor x = Tensor::from_doubles(DType::f32, {3, 3}, D{1, 2, 3, 4, 5, 6, 7, 8, 9});
  Graph g = parse_graph(R"(graph g(%x: f32[3,3]) {
    const %k1 = i64[]{1}
    const %km = i64[]{-1}
    %u: f32[3,3] = Trilu(%x, %k1)
    %l: f32[3,3] = Trilu(%x, %km) {upper = 0}
    %d: f32[3,3] = Trilu(%x)
    return %u, %l, %d
  })");
  auto out = interp::interpret(g, std::vector<Tensor>{x});
  EXPECT_EQ(out[0].to_doubles(), (D{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  EXPECT_EQ(out[1].to_doubles(), (D{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  EXPECT_EQ(out[2].to_doubles(), (D{1, 2, 3, 0, 5, 6, 0, 0, 9}));
}

TEST(Layout, TriluBatchedRectangular) {
  // Two 2x3 matrices, lower with k = 0.
  EXPECT_EQ(run(R"(graph g(%x: f32[2,2,3]) {
    %y: f32[2,2,3] = Trilu(%x) {upper = 0}
    return %y
  })",
                {iota(DType::f32, {2, 2, 3})})
                .to_doubles(),
            (D{0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0}));
}

}  // namespace
}  // namespace orch
