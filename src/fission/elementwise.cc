// Fission rules of the elementwise ops. Ops with a function in prim.Elementwise's table map to
// it after explicit broadcasts; activations become chains of elementwise primitives, computed in
// f32 for f16/bf16 inputs (the operators' kernels compute in double and round once).
#include <cmath>
#include <numbers>

#include "fission/rule.h"
#include "fission/samples.h"
#include "ir/error.h"

namespace orch::fission {
namespace {

using sample::Arg;
using sample::Rng;

struct Direct {
  std::string_view op;
  std::string_view fn;
};

constexpr Direct kDirect[] = {
    {"Add", "add"},
    {"Sub", "sub"},
    {"Mul", "mul"},
    {"Div", "div"},
    {"Pow", "pow"},
    {"Neg", "neg"},
    {"Abs", "abs"},
    {"Sign", "sign"},
    {"Sqrt", "sqrt"},
    {"Exp", "exp"},
    {"Log", "log"},
    {"Erf", "erf"},
    {"Tanh", "tanh"},
    {"Sigmoid", "sigmoid"},
    {"Relu", "relu"},
    {"Reciprocal", "reciprocal"},
    {"Floor", "floor"},
    {"Ceil", "ceil"},
    {"Round", "round"},
    {"Sin", "sin"},
    {"Cos", "cos"},
    {"Tan", "tan"},
    {"Asin", "asin"},
    {"Acos", "acos"},
    {"Atan", "atan"},
    {"Sinh", "sinh"},
    {"Cosh", "cosh"},
    {"Asinh", "asinh"},
    {"Acosh", "acosh"},
    {"Atanh", "atanh"},
    {"Equal", "equal"},
    {"Less", "less"},
    {"Greater", "greater"},
    {"LessOrEqual", "less_equal"},
    {"GreaterOrEqual", "greater_equal"},
    {"And", "and"},
    {"Or", "or"},
    {"Xor", "xor"},
    {"Not", "not"},
    {"Where", "where"},
    {"IsNaN", "isnan"},
    {"Min", "min"},
    {"Max", "max"},
};

std::string direct_fn(std::string_view op) {
  for (const Direct& d : kDirect)
    if (d.op == op) return std::string(d.fn);
  fail("no elementwise function for '{}'", op);
}

std::vector<ValueId> inputs_of(const RuleContext& ctx) {
  std::vector<ValueId> v;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) v.push_back(ctx.in(i));
  return v;
}

std::vector<ValueId> direct(RuleContext& ctx) {
  return single(ctx.ew(direct_fn(ctx.node().op), inputs_of(ctx)));
}

std::vector<ValueId> mod(RuleContext& ctx) {
  bool f = attr_int(ctx.attrs(), "fmod", 0) != 0;
  return single(ctx.ew(f ? "fmod" : "mod", inputs_of(ctx)));
}

std::vector<ValueId> bitshift(RuleContext& ctx) {
  bool left = attr_string(ctx.attrs(), "direction", "") == "LEFT";
  return single(ctx.ew(left ? "shl" : "shr", inputs_of(ctx)));
}

std::vector<ValueId> isinf(RuleContext& ctx) {
  bool neg = attr_int(ctx.attrs(), "detect_negative", 1) != 0;
  bool pos = attr_int(ctx.attrs(), "detect_positive", 1) != 0;
  if (!neg && !pos) {
    ValueId f = ctx.scalar(0, DType::boolean);
    return single(ctx.broadcast_to(ctx.reshape(f, Shape(ctx.out_type().shape.size(), 1)),
                                   ctx.out_type().shape));
  }
  return single(ctx.ew(neg && pos ? "isinf" : pos ? "isposinf" : "isneginf", {ctx.in(0)}));
}

std::vector<ValueId> cast(RuleContext& ctx) {
  return single(ctx.cast(ctx.in(0), ctx.out_type().dtype));
}

std::vector<ValueId> identity(RuleContext& ctx) {
  return single(ctx.in(0));
}

// Inference-mode Dropout: the data unchanged, the optional mask all true.
std::vector<ValueId> dropout(RuleContext& ctx) {
  std::vector<ValueId> out = {ctx.in(0)};
  if (ctx.num_outputs() > 1) {
    const Shape& s = ctx.out_type(1).shape;
    out.push_back(
        ctx.broadcast_to(ctx.reshape(ctx.scalar(1, DType::boolean), Shape(s.size(), 1)), s));
  }
  return out;
}

// Variadic Sum / Mean: a chain of adds over the broadcast inputs.
std::vector<ValueId> sum(RuleContext& ctx) {
  ValueId acc = ctx.has(0) ? ctx.in(0) : kNoValue;
  for (size_t i = 1; i < ctx.num_inputs(); ++i) acc = ctx.ew("add", {acc, ctx.in(i)});
  acc = ctx.broadcast_to(acc, ctx.out_type().shape);
  if (ctx.node().op == "Mean")
    acc = ctx.ew("mul",
                 {acc, ctx.scalar(1.0 / static_cast<double>(ctx.num_inputs()), ctx.dtype(acc))});
  if (ctx.num_inputs() == 1) acc = ctx.ew("identity", {acc});
  return single(acc);
}

std::vector<ValueId> min_max(RuleContext& ctx) {
  std::vector<ValueId> in = inputs_of(ctx);
  ValueId v = ctx.ew(direct_fn(ctx.node().op), in);
  return single(ctx.broadcast_to(v, ctx.out_type().shape));
}

std::vector<ValueId> clip(RuleContext& ctx) {
  ValueId v = ctx.in(0);
  if (ctx.has(1)) v = ctx.ew("max", {v, ctx.in(1)});
  if (ctx.has(2)) v = ctx.ew("min", {v, ctx.in(2)});
  if (v == ctx.in(0)) v = ctx.ew("identity", {v});
  return single(v);
}

std::vector<ValueId> prelu(RuleContext& ctx) {
  ValueId x = ctx.in(0);
  ValueId zero = ctx.scalar(0, ctx.dtype(x));
  ValueId neg = ctx.ew("less", {x, zero});
  return single(ctx.ew("where", {neg, ctx.ew("mul", {x, ctx.in(1)}), x}));
}

// Activations computed in the float compute type.
struct Act {
  RuleContext& ctx;
  DType t;
  ValueId c(double v) { return ctx.scalar(v, t); }
  ValueId f(const char* fn, std::vector<ValueId> in) { return ctx.ew(fn, std::move(in)); }
  float attr(const char* name, float fallback) { return attr_float(ctx.attrs(), name, fallback); }
};

template <ValueId (*Body)(Act&, ValueId)>
std::vector<ValueId> activation(RuleContext& ctx) {
  DType out = ctx.out_type().dtype;
  DType t = out == DType::f16 || out == DType::bf16 ? DType::f32 : out;
  Act a{ctx, t};
  return single(ctx.cast(Body(a, ctx.cast(ctx.in(0), t)), out));
}

ValueId leaky_relu(Act& a, ValueId x) {
  return a.f("where", {a.f("less", {x, a.c(0)}), a.f("mul", {x, a.c(a.attr("alpha", 0.01f))}), x});
}

ValueId elu(Act& a, ValueId x) {
  ValueId em1 = a.f("sub", {a.f("exp", {x}), a.c(1)});
  return a.f("where", {a.f("less", {x, a.c(0)}), a.f("mul", {em1, a.c(a.attr("alpha", 1.0f))}), x});
}

ValueId selu(Act& a, ValueId x) {
  double alpha = a.attr("alpha", 1.67326319217681884765625f);
  double gamma = a.attr("gamma", 1.05070102214813232421875f);
  ValueId neg = a.f("sub", {a.f("mul", {a.f("exp", {x}), a.c(alpha)}), a.c(alpha)});
  ValueId v = a.f("where", {a.f("greater", {x, a.c(0)}), x, neg});
  return a.f("mul", {v, a.c(gamma)});
}

ValueId celu(Act& a, ValueId x) {
  double alpha = a.attr("alpha", 1.0f);
  ValueId e = a.f("sub", {a.f("exp", {a.f("mul", {x, a.c(1 / alpha)})}), a.c(1)});
  ValueId neg = a.f("min", {a.c(0), a.f("mul", {e, a.c(alpha)})});
  return a.f("add", {a.f("max", {a.c(0), x}), neg});
}

ValueId hard_sigmoid_of(Act& a, ValueId x, double alpha, double beta) {
  ValueId v = a.f("add", {a.f("mul", {x, a.c(alpha)}), a.c(beta)});
  return a.f("max", {a.c(0), a.f("min", {a.c(1), v})});
}

ValueId hard_sigmoid(Act& a, ValueId x) {
  return hard_sigmoid_of(a, x, a.attr("alpha", 0.2f), a.attr("beta", 0.5f));
}

ValueId hard_swish(Act& a, ValueId x) {
  return a.f("mul", {x, hard_sigmoid_of(a, x, 1.0 / 6.0, 0.5)});
}

ValueId softplus_of(Act& a, ValueId x) {
  return a.f("log", {a.f("add", {a.f("exp", {x}), a.c(1)})});
}

ValueId softplus(Act& a, ValueId x) {
  return softplus_of(a, x);
}

ValueId softsign(Act& a, ValueId x) {
  return a.f("div", {x, a.f("add", {a.c(1), a.f("abs", {x})})});
}

ValueId mish(Act& a, ValueId x) {
  return a.f("mul", {x, a.f("tanh", {softplus_of(a, x)})});
}

ValueId gelu(Act& a, ValueId x) {
  ValueId inner;
  if (attr_string(a.ctx.attrs(), "approximate", "none") == "tanh") {
    ValueId cube = a.f("mul", {a.f("mul", {x, x}), x});
    ValueId poly = a.f("add", {x, a.f("mul", {cube, a.c(0.044715)})});
    inner = a.f("tanh", {a.f("mul", {poly, a.c(std::sqrt(2 / std::numbers::pi))})});
  } else {
    inner = a.f("erf", {a.f("mul", {x, a.c(1 / std::numbers::sqrt2)})});
  }
  return a.f("mul", {a.f("mul", {x, a.c(0.5)}), a.f("add", {a.c(1), inner})});
}

ValueId thresholded_relu(Act& a, ValueId x) {
  return a.f("where", {a.f("greater", {x, a.c(a.attr("alpha", 1.0f))}), x, a.c(0)});
}

ValueId shrink(Act& a, ValueId x) {
  double lambd = a.attr("lambd", 0.5f), bias = a.attr("bias", 0.0f);
  ValueId low = a.f("add", {x, a.c(bias)});
  ValueId high = a.f("sub", {x, a.c(bias)});
  ValueId mid = a.f("where", {a.f("greater", {x, a.c(lambd)}), high, a.c(0)});
  return a.f("where", {a.f("less", {x, a.c(-lambd)}), low, mid});
}

// Shrink on integers rounds bias arithmetic differently from the kernel (through double).
bool float_input(const RuleContext& ctx) {
  return is_float(ctx.out_type().dtype);
}

// ---- samples ----

Graph unary_float(std::string_view op, Rng& rng) {
  return sample::make(std::string(op),
                      {Arg::input(sample::float_type(rng), sample::shape(rng, 0, 4))});
}

Graph unary_attrs(std::string_view op, Rng& rng) {
  Attributes attrs;
  if (op == "Gelu" && sample::coin(rng)) attrs["approximate"] = std::string("tanh");
  if (op == "LeakyRelu" || op == "Elu" || op == "Celu" || op == "ThresholdedRelu")
    attrs["alpha"] = static_cast<float>(sample::integer(rng, 1, 20) / 10.0);
  if (op == "HardSigmoid") attrs["beta"] = 0.4f;
  if (op == "Shrink") attrs["bias"] = 0.25f;
  if (op == "Shrink") attrs["lambd"] = 0.3f;
  DType t = op == "Celu" ? DType::f32 : sample::float_type(rng);
  return sample::make(std::string(op), {Arg::input(t, sample::shape(rng, 0, 4))}, attrs);
}

Graph binary(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 0, 4);
  Shape t = sample::broadcastable(rng, s);
  if (sample::coin(rng)) std::swap(s, t);
  DType dt = sample::float_type(rng);
  if (op == "And" || op == "Or" || op == "Xor") dt = DType::boolean;
  if (op == "BitShift") dt = DType::u8;
  Attributes attrs;
  if (op == "BitShift") attrs["direction"] = std::string(sample::coin(rng) ? "LEFT" : "RIGHT");
  if (op == "Mod") attrs["fmod"] = int64_t{1};
  return sample::make(std::string(op), {Arg::input(dt, s), Arg::input(dt, t)}, attrs);
}

Graph unary_bool(std::string_view op, Rng& rng) {
  return sample::make(std::string(op), {Arg::input(DType::boolean, sample::shape(rng, 0, 3))});
}

Graph where_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  return sample::make(
      "Where", {Arg::input(DType::boolean, sample::broadcastable(rng, s)),
                Arg::input(DType::f32, s), Arg::input(DType::f32, sample::broadcastable(rng, s))});
}

Graph variadic(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 0, 4);
  std::vector<Arg> args;
  for (int64_t i = 0, n = sample::integer(rng, 1, 3); i < n; ++i)
    args.push_back(Arg::input(DType::f32, i == 0 ? s : sample::broadcastable(rng, s)));
  return sample::make(std::string(op), args);
}

Graph clip_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 0, 3);
  std::vector<Arg> args = {Arg::input(DType::f32, s)};
  args.push_back(sample::coin(rng) ? Arg::none()
                                   : Arg::constant_of(Tensor::scalar(DType::f32, -0.5)));
  if (sample::coin(rng)) args.push_back(Arg::constant_of(Tensor::scalar(DType::f32, 0.4)));
  return sample::make("Clip", args);
}

Graph prelu_sample(std::string_view, Rng& rng) {
  Shape s = sample::shape(rng, 1, 4);
  return sample::make(
      "PRelu", {Arg::input(DType::f32, s), Arg::input(DType::f32, sample::broadcastable(rng, s))});
}

Graph cast_sample(std::string_view op, Rng& rng) {
  Shape s = sample::shape(rng, 0, 3);
  if (op == "CastLike")
    return sample::make("CastLike", {Arg::input(DType::f32, s), Arg::input(DType::i32, {1})});
  return sample::make("Cast", {Arg::input(DType::f32, s)}, {{"to", int64_t{7}}});
}

Graph isinf_sample(std::string_view, Rng& rng) {
  Attributes attrs = {{"detect_negative", sample::integer(rng, 0, 1)},
                      {"detect_positive", sample::integer(rng, 0, 1)}};
  return sample::make("IsInf", {Arg::input(DType::f32, sample::shape(rng, 0, 3))}, attrs);
}

Graph dropout_sample(std::string_view, Rng& rng) {
  return sample::make("Dropout", {Arg::input(DType::f32, sample::shape(rng, 1, 3))}, {},
                      static_cast<int>(sample::integer(rng, 1, 2)));
}

}  // namespace

void add_elementwise_rules(RuleTable& rules) {
  for (const Direct& d : kDirect) {
    std::string_view op = d.op;
    bool binary_op = op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
                     op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
                     op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor";
    if (op == "Min" || op == "Max")
      rules.push_back({op, nullptr, min_max, variadic});
    else if (op == "Where")
      rules.push_back({op, nullptr, direct, where_sample});
    else if (op == "Not")
      rules.push_back({op, nullptr, direct, unary_bool});
    else
      rules.push_back({op, nullptr, direct, binary_op ? binary : unary_float});
  }
  rules.push_back({"Mod", nullptr, mod, binary});
  rules.push_back({"BitShift", nullptr, bitshift, binary});
  rules.push_back({"IsInf", nullptr, isinf, isinf_sample});
  rules.push_back({"Cast", nullptr, cast, cast_sample});
  rules.push_back({"CastLike", nullptr, cast, cast_sample});
  rules.push_back({"Identity", nullptr, identity, unary_float});
  rules.push_back({"Dropout", nullptr, dropout, dropout_sample});
  rules.push_back({"Sum", nullptr, sum, variadic});
  rules.push_back({"Mean", nullptr, sum, variadic});
  rules.push_back({"Clip", nullptr, clip, clip_sample});
  rules.push_back({"PRelu", nullptr, prelu, prelu_sample});
  rules.push_back({"LeakyRelu", nullptr, activation<leaky_relu>, unary_attrs});
  rules.push_back({"Elu", nullptr, activation<elu>, unary_attrs});
  rules.push_back({"Selu", nullptr, activation<selu>, unary_attrs});
  rules.push_back({"Celu", nullptr, activation<celu>, unary_attrs});
  rules.push_back({"HardSigmoid", nullptr, activation<hard_sigmoid>, unary_attrs});
  rules.push_back({"HardSwish", nullptr, activation<hard_swish>, unary_attrs});
  rules.push_back({"Softplus", nullptr, activation<softplus>, unary_attrs});
  rules.push_back({"Softsign", nullptr, activation<softsign>, unary_attrs});
  rules.push_back({"Mish", nullptr, activation<mish>, unary_attrs});
  rules.push_back({"Gelu", nullptr, activation<gelu>, unary_attrs});
  rules.push_back({"ThresholdedRelu", nullptr, activation<thresholded_relu>, unary_attrs});
  rules.push_back({"Shrink", float_input, activation<shrink>, unary_attrs, "integer input"});
}

}  // namespace orch::fission
