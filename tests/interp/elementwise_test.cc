// Elementwise ops: shape rules and reference kernels. Expected values are derived by hand (or
// with numpy / Python's math module where noted), never taken from orch's own output.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::expect_near;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor floats(DType t, Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(t, std::move(shape), values);
}

Tensor ints(DType t, Shape shape, std::vector<int64_t> values) {
  return Tensor::from_ints(t, std::move(shape), values);
}

// Runs one `op` node over constant inputs (an undefined Tensor is an absent optional input)
// through shape inference and the interpreter.
std::vector<Tensor> run(const std::string& op, const std::vector<Tensor>& inputs,
                        Attributes attrs = {}, int num_outputs = 1) {
  Graph g;
  Builder b(g);
  std::vector<ValueId> ids;
  for (const Tensor& t : inputs) ids.push_back(t.defined() ? b.constant(t) : kNoValue);
  for (ValueId v : b.op_multi(op, ids, std::move(attrs), num_outputs)) b.output(v);
  return interp::interpret(g, {});
}

Tensor run1(const std::string& op, const std::vector<Tensor>& inputs, Attributes attrs = {}) {
  return run(op, inputs, std::move(attrs))[0];
}

// The message of the Error that building the node throws.
std::string build_error(const std::string& op, const std::vector<Tensor>& inputs,
                        Attributes attrs = {}, int num_outputs = 1) {
  try {
    run(op, inputs, std::move(attrs), num_outputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Elementwise, IntegerModFollowsDivisorSignUnlessFmod) {
  Tensor a = ints(DType::i32, {6}, {-4, 7, 5, 4, -7, 8});
  Tensor b = ints(DType::i32, {6}, {2, -3, 8, -2, 3, 5});
  // numpy: np.mod and np.fmod.
  EXPECT_EQ(run1("Mod", {a, b}).to_ints(), (std::vector<int64_t>{0, -2, 5, 0, 2, 3}));
  EXPECT_EQ(run1("Mod", {a, b}, {{"fmod", int64_t{1}}}).to_ints(),
            (std::vector<int64_t>{0, 1, 5, 0, -1, 3}));
}

TEST(Elementwise, ModIsExactForWideIntegers) {
  int64_t lowest = std::numeric_limits<int64_t>::min();
  Tensor a = ints(DType::i64, {3}, {lowest, lowest + 1, 9007199254740993});
  Tensor b = ints(DType::i64, {3}, {-1, 10, 2});
  // lowest + 1 = -9223372036854775807 = -922337203685477581 * 10 + 3.
  EXPECT_EQ(run1("Mod", {a, b}).to_ints(), (std::vector<int64_t>{0, 3, 1}));
  Tensor big = ints(DType::u64, {1}, {-1});  // 2^64 - 1
  EXPECT_EQ(run1("Mod", {big, ints(DType::u64, {1}, {10})}).to_ints(), (std::vector<int64_t>{5}));
}

TEST(Elementwise, FloatModNeedsFmod) {
  Tensor x = floats(DType::f32, {2}, {-7.5, 7.5});
  Tensor y = floats(DType::f32, {2}, {2, -2});
  expect_near(run1("Mod", {x, y}, {{"fmod", int64_t{1}}}), {-1.5, 1.5});
  EXPECT_EQ(build_error("Mod", {x, y}),
            "Mod: fmod must be 1 for floating-point inputs (ONNX Mod), got 0 with f32");
}

TEST(Elementwise, IntegerDivTruncatesTowardZero) {
  Tensor a = ints(DType::i64, {5}, {7, -7, 7, -7, std::numeric_limits<int64_t>::min()});
  Tensor b = ints(DType::i64, {5}, {2, 2, -2, -2, -1});
  // INT64_MIN / -1 wraps to INT64_MIN, as the fixed-width dtype does.
  EXPECT_EQ(run1("Div", {a, b}).to_ints(),
            (std::vector<int64_t>{3, -3, -3, 3, std::numeric_limits<int64_t>::min()}));
}

TEST(Elementwise, IntegerArithmeticIsExactAndWraps) {
  // 2^53 + 1 + 2 = 9007199254740995: not a double, so a double path would round it.
  EXPECT_EQ(run1("Add", {ints(DType::i64, {1}, {9007199254740993}), ints(DType::i64, {1}, {2})})
                .to_ints(),
            (std::vector<int64_t>{9007199254740995}));
  EXPECT_EQ(run1("Add", {ints(DType::u8, {2}, {250, 3}), ints(DType::u8, {1}, {10})}).to_ints(),
            (std::vector<int64_t>{4, 13}));
  EXPECT_EQ(run1("Sub", {ints(DType::u64, {1}, {0}), ints(DType::u64, {1}, {1})}).to_ints(),
            (std::vector<int64_t>{-1}));  // 2^64 - 1
  EXPECT_EQ(run1("Mul", {ints(DType::i8, {1}, {64}), ints(DType::i8, {1}, {2})}).to_ints(),
            (std::vector<int64_t>{-128}));
}

TEST(Elementwise, IntegerPowIsExact) {
  // 3^39 = 4052555153018976267 (Python).
  EXPECT_EQ(run1("Pow", {ints(DType::i64, {1}, {3}), ints(DType::i64, {1}, {39})}).to_ints(),
            (std::vector<int64_t>{4052555153018976267}));
  // An integer base with a float exponent truncates the real power: 2^0.5 -> 1, 3^2.5 -> 15.
  Tensor z = run1("Pow", {ints(DType::i32, {2}, {2, 3}), floats(DType::f32, {2}, {0.5, 2.5})});
  EXPECT_EQ(z.dtype(), DType::i32);
  EXPECT_EQ(z.to_ints(), (std::vector<int64_t>{1, 15}));
  expect_near(run1("Pow", {floats(DType::f32, {2}, {2, 4}), ints(DType::i64, {1}, {-2})}),
              {0.25, 0.0625});
}

TEST(Elementwise, RoundHalvesToEven) {
  Tensor x = floats(DType::f32, {8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, 2.6});
  EXPECT_EQ(run1("Round", {x}).to_doubles(), (std::vector<double>{0, 2, 2, 0, -2, -2, 2, 3}));
}

TEST(Elementwise, CastFloatToIntTruncatesAndSaturates) {
  Tensor x = floats(DType::f32, {5}, {-1.7, 1.7, 300, -300, kNaN});
  // ONNX leaves out-of-range values undefined; orch saturates and maps NaN to 0.
  EXPECT_EQ(run1("Cast", {x}, {{"to", int64_t{3}}}).to_ints(),
            (std::vector<int64_t>{-1, 1, 127, -128, 0}));
  EXPECT_EQ(run1("Cast", {x}, {{"to", int64_t{2}}}).to_ints(),
            (std::vector<int64_t>{0, 1, 255, 0, 0}));
}

TEST(Elementwise, CastBetweenIntegersWrapsExactly) {
  // numpy: np.array([300, -129]).astype(np.int8) == [44, 127].
  EXPECT_EQ(run1("Cast", {ints(DType::i64, {2}, {300, -129})}, {{"to", int64_t{3}}}).to_ints(),
            (std::vector<int64_t>{44, 127}));
  Tensor big = run1("Cast", {ints(DType::i64, {1}, {-1})}, {{"to", int64_t{13}}});
  EXPECT_EQ(big.dtype(), DType::u64);
  EXPECT_EQ(big.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
  // u64 to f64 reads the value as unsigned: 2^64 - 1 rounds to 2^64.
  EXPECT_EQ(run1("Cast", {big}, {{"to", int64_t{11}}}).to_doubles(),
            (std::vector<double>{18446744073709551616.0}));
}

TEST(Elementwise, CastToAndFromBool) {
  Tensor x = floats(DType::f32, {4}, {0, -0.0, kNaN, 0.1});
  EXPECT_EQ(run1("Cast", {x}, {{"to", int64_t{9}}}).to_ints(), (std::vector<int64_t>{0, 0, 1, 1}));
  Tensor b = ints(DType::boolean, {2}, {1, 0});
  EXPECT_EQ(run1("Cast", {b}, {{"to", int64_t{1}}}).to_doubles(), (std::vector<double>{1, 0}));
  EXPECT_EQ(run1("Cast", {ints(DType::i32, {2}, {0, -5})}, {{"to", int64_t{9}}}).to_ints(),
            (std::vector<int64_t>{0, 1}));
}

TEST(Elementwise, CastToHalfOverflowsToInfinity) {
  Tensor h = run1("Cast", {floats(DType::f64, {2}, {70000, 0.5})}, {{"to", int64_t{10}}});
  EXPECT_EQ(h.dtype(), DType::f16);
  EXPECT_EQ(h.to_doubles(), (std::vector<double>{kInf, 0.5}));
}

TEST(Elementwise, CastLikeTakesTheSecondInputsType) {
  Tensor y = run1("CastLike", {floats(DType::f32, {2}, {2.9, -2.9}), ints(DType::i16, {}, {0})});
  EXPECT_EQ(y.dtype(), DType::i16);
  EXPECT_EQ(y.to_ints(), (std::vector<int64_t>{2, -2}));
}

TEST(Elementwise, CastRejectsTypesOrchLacks) {
  Tensor x = floats(DType::f32, {1}, {1});
  EXPECT_EQ(build_error("Cast", {x}, {{"to", int64_t{8}}}),
            "Cast: Cast to STRING is not supported");
  EXPECT_EQ(build_error("Cast", {x}), "Cast: attribute 'to' is required");
}

TEST(Elementwise, WhereBroadcastsAllThreeInputs) {
  Graph g = parse_graph(R"(graph g() {
    const %c = bool[2,1]{1, 0}
    const %x = i64[3]{1, 2, 3}
    const %y = i64[2,3]{10, 20, 30, 40, 50, 60}
    %z: i64[2,3] = Where(%c, %x, %y)
    return %z
  })");
  EXPECT_EQ(interp::interpret(g, {})[0].to_ints(), (std::vector<int64_t>{1, 2, 3, 40, 50, 60}));
}

TEST(Elementwise, ClipWithAbsentBounds) {
  Tensor x = floats(DType::f32, {4}, {-5, 0, 5, kNaN});
  Tensor hi = floats(DType::f32, {}, {2});
  Tensor lo = floats(DType::f32, {}, {-1});
  expect_near(run1("Clip", {x, Tensor(), hi}), {-5, 0, 2, kNaN});
  expect_near(run1("Clip", {x, lo}), {-1, 0, 5, kNaN});
  expect_near(run1("Clip", {x}), {-5, 0, 5, kNaN});
  // min > max: every value becomes max.
  expect_near(run1("Clip", {x, floats(DType::f32, {}, {3}), hi}), {2, 2, 2, kNaN});
  Tensor i = ints(DType::i8, {3}, {-128, 0, 127});
  EXPECT_EQ(run1("Clip", {i, Tensor(), ints(DType::i8, {}, {100})}).to_ints(),
            (std::vector<int64_t>{-128, 0, 100}));
}

TEST(Elementwise, ClipBoundsMustBeScalars) {
  Tensor x = floats(DType::f32, {2}, {1, 2});
  EXPECT_EQ(build_error("Clip", {x, floats(DType::f32, {2}, {0, 1})}),
            "Clip: input 1 (min) must be a scalar, got shape [2]");
}

TEST(Elementwise, ComparisonsOutputBoolAndCompareUnsignedAsUnsigned) {
  Tensor a = ints(DType::u64, {2}, {std::numeric_limits<int64_t>::min(), 1});  // 2^63, 1
  Tensor b = ints(DType::u64, {1}, {1});
  Tensor gt = run1("Greater", {a, b});
  EXPECT_EQ(gt.dtype(), DType::boolean);
  EXPECT_EQ(gt.to_ints(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run1("GreaterOrEqual", {a, b}).to_ints(), (std::vector<int64_t>{1, 1}));
  Tensor x = floats(DType::f32, {3}, {1, kNaN, 3});
  Tensor y = floats(DType::f32, {3}, {1, kNaN, 2});
  EXPECT_EQ(run1("Equal", {x, y}).to_ints(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(run1("LessOrEqual", {x, y}).to_ints(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(run1("Less", {y, x}).to_ints(), (std::vector<int64_t>{0, 0, 1}));
}

TEST(Elementwise, LogicOpsTakeBoolOnly) {
  Tensor a = ints(DType::boolean, {4}, {0, 0, 1, 1});
  Tensor b = ints(DType::boolean, {4}, {0, 1, 0, 1});
  EXPECT_EQ(run1("And", {a, b}).to_ints(), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(run1("Or", {a, b}).to_ints(), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(run1("Xor", {a, b}).to_ints(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(run1("Not", {a}).to_ints(), (std::vector<int64_t>{1, 1, 0, 0}));
  EXPECT_EQ(build_error("And", {floats(DType::f32, {1}, {1}), floats(DType::f32, {1}, {1})}),
            "And: input 0 has type f32; the op takes bool");
}

TEST(Elementwise, VariadicOpsBroadcast) {
  Tensor a = floats(DType::f32, {2, 1}, {1, 6});
  Tensor b = floats(DType::f32, {3}, {2, 4, kNaN});
  Tensor c = floats(DType::f32, {}, {3});
  expect_near(run1("Max", {a, b, c}), {3, 4, kNaN, 6, 6, kNaN});
  expect_near(run1("Min", {a, b, c}), {1, 1, kNaN, 2, 3, kNaN});
  Tensor d = floats(DType::f32, {3}, {2, 4, 6});
  expect_near(run1("Sum", {a, d, c}), {6, 8, 10, 11, 13, 15});
  expect_near(run1("Mean", {a, d, c}), {2, 8.0 / 3, 10.0 / 3, 11.0 / 3, 13.0 / 3, 5});
  expect_near(run1("Sum", {d}), {2, 4, 6});
  EXPECT_EQ(run1("Max", {ints(DType::i64, {1}, {std::numeric_limits<int64_t>::max()}),
                         ints(DType::i64, {1}, {std::numeric_limits<int64_t>::max() - 1})})
                .to_ints(),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(build_error("Sum", {ints(DType::i32, {1}, {1})}),
            "Sum: input 0 has type i32; the op takes f32, f64, f16, bf16");
}

TEST(Elementwise, SignedIntegerUnaryOps) {
  Tensor x = ints(DType::i64, {4}, {-3, 0, 5, std::numeric_limits<int64_t>::min() + 1});
  EXPECT_EQ(run1("Relu", {x}).to_ints(), (std::vector<int64_t>{0, 0, 5, 0}));
  EXPECT_EQ(run1("Neg", {x}).to_ints(),
            (std::vector<int64_t>{3, 0, -5, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(run1("Abs", {x}).to_ints(),
            (std::vector<int64_t>{3, 0, 5, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(run1("Sign", {x}).to_ints(), (std::vector<int64_t>{-1, 0, 1, -1}));
  EXPECT_EQ(run1("Sign", {ints(DType::u8, {2}, {0, 200})}).to_ints(), (std::vector<int64_t>{0, 1}));
}

TEST(Elementwise, FloatOnlyOpsRejectIntegers) {
  EXPECT_EQ(build_error("Sqrt", {ints(DType::i32, {1}, {4})}),
            "Sqrt: input 0 has type i32; the op takes f32, f64, f16, bf16");
  EXPECT_EQ(build_error("Neg", {ints(DType::u8, {1}, {4})}),
            "Neg: input 0 has type u8; the op takes f32, f64, f16, bf16, i8, i16, i32, i64");
  EXPECT_EQ(build_error("Add", {ints(DType::i32, {1}, {4}), ints(DType::i64, {1}, {4})}),
            "Add: input 0 is i32, input 1 is i64");
}

TEST(Elementwise, Activations) {
  Tensor x = floats(DType::f64, {3}, {-1, 0.5, 2});
  // Python's math module, from the ONNX formulas.
  expect_near(run1("Gelu", {x}), {-0.15865525393145707, 0.34573123063700656, 1.9544997361036416});
  expect_near(run1("Gelu", {x}, {{"approximate", std::string("tanh")}}),
              {-0.15880800939172324, 0.34571400982514394, 1.954597694087775});
  expect_near(run1("Mish", {x}), {-0.30340146137410895, 0.3752452113048951, 1.9439589595339946});
  expect_near(run1("Celu", {floats(DType::f32, {2}, {-1, 0.5})}, {{"alpha", 2.0f}}),
              {-0.7869386805747332, 0.5});
  expect_near(run1("Selu", {x}), {-1.1113307412864784, 0.5253505110740662, 2.1014020442962646});
  expect_near(run1("LeakyRelu", {x}), {-0.01, 0.5, 2});
  expect_near(run1("HardSigmoid", {x}), {0.3, 0.6, 0.9});
  expect_near(run1("HardSwish", {floats(DType::f32, {3}, {-4, 1, 4})}), {0, 2.0 / 3, 4});
  expect_near(run1("ThresholdedRelu", {x}, {{"alpha", 0.5f}}), {0, 0, 2});
  expect_near(run1("Shrink", {x}, {{"lambd", 0.75f}, {"bias", 0.25f}}), {-0.75, 0, 1.75});
  expect_near(run1("Softplus", {floats(DType::f32, {3}, {-1, 0, 1000})}),
              {0.31326168751822286, 0.6931471805599453, 1000});
  expect_near(run1("Sigmoid", {floats(DType::f32, {3}, {-1000, 0, 1000})}), {0, 0.5, 1});
  EXPECT_EQ(build_error("Gelu", {x}, {{"approximate", std::string("fast")}}),
            "Gelu: approximate must be \"none\" or \"tanh\", got \"fast\"");
}

TEST(Elementwise, PReluSlopeBroadcastsToX) {
  Tensor x = floats(DType::f32, {2, 2}, {-1, 2, -3, 4});
  Tensor slope = floats(DType::f32, {2}, {0.5, 0.25});
  expect_near(run1("PRelu", {x, slope}), {-0.5, 2, -1.5, 4});
  EXPECT_EQ(build_error("PRelu", {slope, x}),
            "PRelu: slope shape [2,2] does not broadcast to X shape [2]");
}

TEST(Elementwise, BitShift) {
  Tensor x = ints(DType::u8, {3}, {16, 4, 1});
  Tensor y = ints(DType::u8, {3}, {1, 2, 3});
  EXPECT_EQ(run1("BitShift", {x, y}, {{"direction", std::string("RIGHT")}}).to_ints(),
            (std::vector<int64_t>{8, 1, 0}));
  // 16 << 4 = 256 does not fit u8: the store keeps the low 8 bits.
  EXPECT_EQ(run1("BitShift", {x, ints(DType::u8, {1}, {4})}, {{"direction", std::string("LEFT")}})
                .to_ints(),
            (std::vector<int64_t>{0, 64, 16}));
  EXPECT_EQ(build_error("BitShift", {x, y}, {{"direction", std::string("UP")}}),
            "BitShift: direction must be \"LEFT\" or \"RIGHT\", got \"UP\"");
}

TEST(Elementwise, IsNaNAndIsInf) {
  Tensor x = floats(DType::f32, {4}, {kNaN, kInf, -kInf, 1});
  EXPECT_EQ(run1("IsNaN", {x}).to_ints(), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(run1("IsInf", {x}).to_ints(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(run1("IsInf", {x}, {{"detect_negative", int64_t{0}}}).to_ints(),
            (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(run1("IsInf", {x}, {{"detect_positive", int64_t{0}}}).to_ints(),
            (std::vector<int64_t>{0, 0, 1, 0}));
}

TEST(Elementwise, DropoutInInferenceMode) {
  Tensor x = floats(DType::f32, {3}, {1, 2, 3});
  Tensor ratio = floats(DType::f32, {}, {0.5});
  Tensor off = ints(DType::boolean, {}, {0});
  std::vector<Tensor> out = run("Dropout", {x, ratio, off}, {}, 2);
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(out[1].dtype(), DType::boolean);
  EXPECT_EQ(out[1].to_ints(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(build_error("Dropout", {x, ratio, ints(DType::boolean, {}, {1})}),
            "Dropout: training_mode = true is not supported: orch runs Dropout in inference mode "
            "only");
}

TEST(Elementwise, IdentityCopiesBytes) {
  Tensor x = ints(DType::u64, {2}, {-1, 7});
  EXPECT_TRUE(run1("Identity", {x}).identical(x));
}

}  // namespace
}  // namespace orch
