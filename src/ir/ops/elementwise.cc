// Shape rules of the elementwise ops: outputs take the (numpy) broadcast shape of the inputs.
// Each rule also enforces the op's ONNX type constraint, passed in as a set of dtypes, so one
// small rule serves every op with the same signature.
#include <string>

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/shape_util.h"

namespace orch::ops {
namespace {

/// A set of dtypes, one bit per DType.
using DTypeSet = uint32_t;

constexpr DTypeSet set_of(std::initializer_list<DType> types) {
  DTypeSet s = 0;
  for (DType t : types) s |= DTypeSet{1} << static_cast<int>(t);
  return s;
}

constexpr DTypeSet kFloat3 = set_of({DType::f32, DType::f64, DType::f16});
constexpr DTypeSet kFloat = kFloat3 | set_of({DType::bf16});
constexpr DTypeSet kSigned = set_of({DType::i8, DType::i16, DType::i32, DType::i64});
constexpr DTypeSet kUnsigned = set_of({DType::u8, DType::u16, DType::u32, DType::u64});
constexpr DTypeSet kNumeric = kFloat | kSigned | kUnsigned;
constexpr DTypeSet kBool = set_of({DType::boolean});
constexpr DTypeSet kAny = kNumeric | kBool;

bool contains(DTypeSet s, DType t) {
  return (s >> static_cast<int>(t)) & 1;
}

std::string dtype_list(DTypeSet s) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i)
    if (contains(s, static_cast<DType>(i)))
      out += (out.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(i)));
  return out;
}

void check_dtype(const InferInput& in, size_t i, DTypeSet allowed) {
  DType t = in.type(i).dtype;
  check(contains(allowed, t), "input {} has type {}; the op takes {}", i, dtype_name(t),
        dtype_list(allowed));
}

// Every present input has the dtype of input 0, which is in `Allowed`; same dtype out.
template <DTypeSet Allowed>
std::vector<TensorType> same_type(const InferInput& in) {
  check_dtype(in, 0, Allowed);
  require_same_dtype(in);
  return one(in.type(0).dtype, broadcast_all(in));
}

// Unary activations whose attributes (alpha, beta, gamma, lambd, bias) are all floats.
template <DTypeSet Allowed>
std::vector<TensorType> activation(const InferInput& in) {
  for (const auto& [name, value] : in.attrs) attr_float(in.attrs, name, 0);
  return same_type<Allowed>(in);
}

// Comparisons and logic: inputs of one dtype, bool out.
template <DTypeSet Allowed>
std::vector<TensorType> predicate(const InferInput& in) {
  return one(DType::boolean, same_type<Allowed>(in)[0].shape);
}

std::vector<TensorType> pow_rule(const InferInput& in) {
  check_dtype(in, 0, kFloat | set_of({DType::i32, DType::i64}));
  check_dtype(in, 1, kNumeric);
  return one(in.type(0).dtype, broadcast_all(in));
}

std::vector<TensorType> mod_rule(const InferInput& in) {
  int64_t fmod = attr_int(in.attrs, "fmod", 0);
  check(fmod == 0 || fmod == 1, "fmod must be 0 or 1, got {}", fmod);
  check(fmod == 1 || !is_float(in.type(0).dtype),
        "fmod must be 1 for floating-point inputs (ONNX Mod), got 0 with {}",
        dtype_name(in.type(0).dtype));
  return same_type<kNumeric>(in);
}

std::vector<TensorType> bitshift_rule(const InferInput& in) {
  check(has_attr(in.attrs, "direction"), "attribute 'direction' is required");
  std::string direction = attr_string(in.attrs, "direction", "");
  check(direction == "LEFT" || direction == "RIGHT",
        "direction must be \"LEFT\" or \"RIGHT\", got \"{}\"", direction);
  return same_type<kUnsigned>(in);
}

std::vector<TensorType> isinf_rule(const InferInput& in) {
  for (std::string_view name : {"detect_negative", "detect_positive"}) {
    int64_t v = attr_int(in.attrs, name, 1);
    check(v == 0 || v == 1, "{} must be 0 or 1, got {}", name, v);
  }
  return predicate<set_of({DType::f32, DType::f64})>(in);
}

std::vector<TensorType> gelu_rule(const InferInput& in) {
  std::string approximate = attr_string(in.attrs, "approximate", "none");
  check(approximate == "none" || approximate == "tanh",
        "approximate must be \"none\" or \"tanh\", got \"{}\"", approximate);
  return same_type<kFloat>(in);
}

// Clip's optional min (input 1) and max (input 2) are single values of the input's dtype.
std::vector<TensorType> clip_rule(const InferInput& in) {
  check_dtype(in, 0, kNumeric);
  require_same_dtype(in);
  for (size_t i = 1; i < in.types.size(); ++i)
    if (in.has(i))
      check(num_elements(in.type(i).shape) == 1, "input {} ({}) must be a scalar, got shape {}", i,
            i == 1 ? "min" : "max", format_shape(in.type(i).shape));
  return {in.type(0)};
}

std::vector<TensorType> where_rule(const InferInput& in) {
  check_dtype(in, 0, kBool);
  check_dtype(in, 1, kAny);
  require_same_dtype(in, 1);
  return one(in.type(1).dtype, broadcast_all(in));
}

// The slope broadcasts to X (unidirectionally): the output has X's shape.
std::vector<TensorType> prelu_rule(const InferInput& in) {
  check_dtype(in, 0, kFloat | set_of({DType::i32, DType::i64, DType::u32, DType::u64}));
  require_same_dtype(in);
  const Shape& x = in.type(0).shape;
  const Shape& slope = in.type(1).shape;
  check(slope.size() <= x.size() && broadcast_shapes(x, slope) == x,
        "slope shape {} does not broadcast to X shape {}", format_shape(slope), format_shape(x));
  return {in.type(0)};
}

std::vector<TensorType> cast_rule(const InferInput& in) {
  check(has_attr(in.attrs, "to"), "attribute 'to' is required");
  return one(dtype_from_onnx(attr_int(in.attrs, "to", 0), "Cast to"), in.type(0).shape);
}

std::vector<TensorType> castlike_rule(const InferInput& in) {
  return one(in.type(1).dtype, in.type(0).shape);
}

std::vector<TensorType> identity_rule(const InferInput& in) {
  return {in.type(0)};
}

// Inference-mode Dropout: output = data, optional mask all true. Training mode would need
// random numbers, so training_mode must be absent or a constant false.
std::vector<TensorType> dropout_rule(const InferInput& in) {
  check_dtype(in, 0, kFloat);
  if (in.has(1)) {
    check_dtype(in, 1, kFloat3);
    check(num_elements(in.type(1).shape) == 1, "ratio must be a scalar, got shape {}",
          format_shape(in.type(1).shape));
  }
  if (in.has(2)) {
    check_dtype(in, 2, kBool);
    check(in.values[2]->numel() == 1, "training_mode must be a scalar, got shape {}",
          format_shape(in.type(2).shape));
    if (in.values[2]->get_int(0) != 0)
      unsupported(
          "training_mode = true is not supported: orch runs Dropout in inference mode only");
  }
  std::vector<TensorType> out = {in.type(0)};
  if (in.num_outputs == 2) out.push_back({DType::boolean, in.type(0).shape});
  return out;
}

}  // namespace

void add_elementwise_ops(std::vector<OpSchema>& table) {
  for (std::string_view op : {"Add", "Sub", "Mul", "Div"})
    table.push_back({.name = op, .min_inputs = 2, .max_inputs = 2, .infer = same_type<kNumeric>});
  table.push_back({.name = "Pow", .min_inputs = 2, .max_inputs = 2, .infer = pow_rule});
  table.push_back({.name = "Mod", .min_inputs = 2, .max_inputs = 2, .infer = mod_rule});
  table.push_back({.name = "BitShift", .min_inputs = 2, .max_inputs = 2, .infer = bitshift_rule});
  table.push_back({.name = "PRelu", .min_inputs = 2, .max_inputs = 2, .infer = prelu_rule});

  for (std::string_view op :
       {"Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Reciprocal", "Floor", "Ceil"})
    table.push_back({.name = op, .infer = same_type<kFloat>});
  for (std::string_view op :
       {"Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
        "Atanh", "HardSwish", "Softplus", "Softsign", "Mish"})
    table.push_back({.name = op, .infer = same_type<kFloat3>});
  for (std::string_view op : {"Erf", "Abs", "Sign"})
    table.push_back({.name = op, .infer = same_type<kNumeric>});
  table.push_back({.name = "Relu", .infer = same_type<kFloat | kSigned>});
  table.push_back({.name = "Neg", .infer = same_type<kFloat | kSigned>});
  table.push_back({.name = "Not", .infer = same_type<kBool>});
  table.push_back({.name = "Gelu", .infer = gelu_rule});

  table.push_back({.name = "LeakyRelu", .infer = activation<kFloat>});
  for (std::string_view op : {"Elu", "Selu", "HardSigmoid", "ThresholdedRelu"})
    table.push_back({.name = op, .infer = activation<kFloat3>});
  table.push_back({.name = "Celu", .infer = activation<set_of({DType::f32})>});
  table.push_back({.name = "Shrink", .infer = activation<kFloat3 | kSigned | kUnsigned>});

  for (std::string_view op : {"Min", "Max"})
    table.push_back({.name = op, .max_inputs = kVariadic, .infer = same_type<kNumeric>});
  for (std::string_view op : {"Sum", "Mean"})
    table.push_back({.name = op, .max_inputs = kVariadic, .infer = same_type<kFloat>});
  table.push_back({.name = "Clip", .max_inputs = 3, .infer = clip_rule});
  table.push_back({.name = "Where", .min_inputs = 3, .max_inputs = 3, .infer = where_rule});

  table.push_back(
      {.name = "Equal", .min_inputs = 2, .max_inputs = 2, .infer = predicate<kNumeric | kBool>});
  for (std::string_view op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    table.push_back({.name = op, .min_inputs = 2, .max_inputs = 2, .infer = predicate<kNumeric>});
  for (std::string_view op : {"And", "Or", "Xor"})
    table.push_back({.name = op, .min_inputs = 2, .max_inputs = 2, .infer = predicate<kBool>});
  table.push_back({.name = "IsNaN", .infer = predicate<kFloat>});
  table.push_back({.name = "IsInf", .infer = isinf_rule});

  table.push_back({.name = "Cast", .infer = cast_rule});
  table.push_back({.name = "CastLike", .min_inputs = 2, .max_inputs = 2, .infer = castlike_rule});
  table.push_back({.name = "Identity", .infer = identity_rule});
  // training_mode decides the semantics, so it must be known at compile time.
  table.push_back({.name = "Dropout",
                   .max_inputs = 3,
                   .max_outputs = 2,
                   .infer = dropout_rule,
                   .constant_inputs = {2}});
}

}  // namespace orch::ops
