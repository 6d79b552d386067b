// Generator kernels and shape rules against hand-derived expectations.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch {
namespace {

using D = std::vector<double>;
using I = std::vector<int64_t>;

std::vector<Tensor> run_all(std::string_view text, std::vector<Tensor> inputs = {}) {
  return interp::interpret(parse_graph(text), inputs);
}

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

TEST(Generator, ShapeStartEndClamp) {
  auto out = run_all(R"(graph g(%x: f32[2,3,4]) {
    %a: i64[3] = Shape(%x)
    %b: i64[1] = Shape(%x) {start = -1}
    %c: i64[1] = Shape(%x) {end = -1, start = 1}
    %d: i64[3] = Shape(%x) {end = 10, start = -10}
    %e: i64[0] = Shape(%x) {end = 1, start = 2}
    return %a, %b, %c, %d, %e
  })",
                     {Tensor(DType::f32, {2, 3, 4})});
  EXPECT_EQ(out[0].to_ints(), (I{2, 3, 4}));
  EXPECT_EQ(out[1].to_ints(), (I{4}));
  EXPECT_EQ(out[2].to_ints(), (I{3}));
  EXPECT_EQ(out[3].to_ints(), (I{2, 3, 4}));
}

TEST(Generator, Size) {
  auto out = run_all("graph g(%x: u8[2,3,4]) {\n %s: i64[] = Size(%x)\n return %s\n}",
                     {Tensor(DType::u8, {2, 3, 4})});
  EXPECT_EQ(out[0].to_ints(), (I{24}));
}

TEST(Generator, ConstantOfShape) {
  auto out = run_all(R"(graph g() {
    const %s = i64[2]{2, 3}
    const %e = i64[0]{}
    %a: i32[2,3] = ConstantOfShape(%s) {value = i32[1]{7}}
    %b: f32[2,3] = ConstantOfShape(%s)
    %c: i64[] = ConstantOfShape(%e) {value = i64[1]{-9223372036854775807}}
    return %a, %b, %c
  })");
  EXPECT_EQ(out[0].to_ints(), (I{7, 7, 7, 7, 7, 7}));
  EXPECT_EQ(out[1].to_doubles(), (D{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(out[2].to_ints(), (I{-9223372036854775807}));
}

TEST(Generator, RangeFloatsIntsAndNegativeDelta) {
  // Floats: ceil((2 - 1) / 0.25) = 4 and ceil(1 / 0.3) = 4. Ints: ceil((4 - 10) / -2) = 3.
  auto out = run_all(R"(graph g() {
    const %s = f32[]{1}
    const %l = f32[]{2}
    const %d = f32[]{0.25}
    const %z = f64[]{0}
    const %o = f64[]{1}
    const %t = f64[]{0.3}
    const %a = i32[]{10}
    const %b = i32[]{4}
    const %c = i32[]{-2}
    const %big = i64[]{9007199254740993}
    const %big3 = i64[]{9007199254740996}
    const %one = i64[]{1}
    %f: f32[4] = Range(%s, %l, %d)
    %g: f64[4] = Range(%z, %o, %t)
    %i: i32[3] = Range(%a, %b, %c)
    %e: i32[0] = Range(%b, %a, %c)
    %h: i64[3] = Range(%big, %big3, %one)
    return %f, %g, %i, %e, %h
  })");
  EXPECT_EQ(out[0].to_doubles(), (D{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(out[1].to_doubles(), (D{0, 0.3, 0.6, 0.3 * 3}));
  EXPECT_EQ(out[2].to_ints(), (I{10, 8, 6}));
  // 2^53 + 1 onwards is not representable in double: the kernel must stay in int64.
  EXPECT_EQ(out[4].to_ints(), (I{9007199254740993, 9007199254740994, 9007199254740995}));
}

TEST(Generator, RangeZeroDeltaIsAnError) {
  EXPECT_EQ(parse_error(R"(graph g() {
    const %s = i64[]{1}
    const %z = i64[]{0}
    %r: i64[0] = Range(%s, %s, %z)
    return %r
  })"),
            "Range: delta is 0");
}

TEST(Generator, EyeLikeDtypeAndK) {
  auto out = run_all(R"(graph g(%x: i32[3,4]) {
    %a: f64[3,4] = EyeLike(%x) {dtype = 11, k = 1}
    %b: i32[3,4] = EyeLike(%x) {k = -1}
    return %a, %b
  })",
                     {Tensor(DType::i32, {3, 4})});
  EXPECT_EQ(out[0].to_doubles(), (D{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(out[1].to_ints(), (I{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0}));
}

TEST(Generator, OneHotNegativeIndicesWrap) {
  // -1 is depth - 1 = 3, -3 is 1; 4 is out of range and gives all off.
  auto out = run_all(R"(graph g(%i: i64[4]) {
    const %depth = f32[]{4}
    const %v = f32[2]{0, 5}
    %y: f32[4,4] = OneHot(%i, %depth, %v)
    return %y
  })",
                     {Tensor::from_ints(DType::i64, {4}, I{0, -1, -3, 4})});
  EXPECT_EQ(out[0].to_doubles(), (D{5, 0, 0, 0, 0, 0, 0, 5, 0, 5, 0, 0, 0, 0, 0, 0}));
}

TEST(Generator, OneHotAxisZero) {
  // out[d, i] is on when indices[i] == d.
  auto out = run_all(R"(graph g(%i: i32[2]) {
    const %depth = i64[1]{3}
    const %v = i64[2]{-1, 1}
    %y: i64[3,2] = OneHot(%i, %depth, %v) {axis = -2}
    return %y
  })",
                     {Tensor::from_ints(DType::i32, {2}, I{1, 0})});
  EXPECT_EQ(out[0].to_ints(), (I{-1, 1, 1, -1, -1, -1}));
}

TEST(Generator, ConstantNodeForms) {
  auto out = run_all(R"(graph g() {
    %a: i64[2] = Constant() {value_ints = [4, -5]}
    %b: f32[] = Constant() {value_float = 2.5}
    %c: u16[2] = Constant() {value = u16[2]{65535, 1}}
    %d: f32[3] = Constant() {value_floats = [1.0, 2.0, 3.5]}
    %e: i64[] = Constant() {value_int = 9}
    return %a, %b, %c, %d, %e
  })");
  EXPECT_EQ(out[0].to_ints(), (I{4, -5}));
  EXPECT_EQ(out[1].to_doubles(), (D{2.5}));
  EXPECT_EQ(out[2].to_ints(), (I{65535, 1}));
  EXPECT_EQ(out[3].to_doubles(), (D{1, 2, 3.5}));
  EXPECT_EQ(out[4].to_ints(), (I{9}));
  EXPECT_EQ(parse_error("graph g() {\n %a: f32[] = Constant()\n return %a\n}"),
            "Constant: exactly one value attribute must be given, got 0");
}

}  // namespace
}  // namespace orch
