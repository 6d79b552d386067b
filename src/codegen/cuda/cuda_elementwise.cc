// prim.Elementwise as C expressions, computed in the storage type as the interpreter's kernels
// compute them (integer arithmetic wraps; float to integer casts saturate, NaN gives 0).
#include <fmt/format.h>

#include <set>

#include "codegen/cuda/cuda_impl.h"
#include "ir/error.h"

namespace orch::codegen::cuda_impl {
namespace {

// Float math: orch_<fn> helpers over float and double.
const std::set<std::string, std::less<>> kMath = {
    "sqrt", "exp",  "log",  "erf",  "tanh", "floor", "ceil",  "round", "sin",   "cos",
    "tan",  "asin", "acos", "atan", "sinh", "cosh",  "asinh", "acosh", "atanh", "sigmoid"};

const std::set<std::string, std::less<>> kComparisons = {"equal", "less", "greater", "less_equal",
                                                         "greater_equal"};

// Two's complement arithmetic on any integer type: computed in unsigned 64 bits (no signed
// overflow) and narrowed.
std::string wrapped(const std::string& t, const std::string& a, const char* op,
                    const std::string& b) {
  return fmt::format("(({})((unsigned long long)({}) {} (unsigned long long)({})))", t, a, op, b);
}

// "LO, HI": integer type `t`'s limits as literals, for orch_f2i's saturating store.
std::string saturation_limits(DType t) {
  Tensor limits(t, {2});
  limits.set(0, -1e300);
  limits.set(1, 1e300);
  return fmt::format("{}, {}", literal(t, limits, 0), literal(t, limits, 1));
}

}  // namespace

std::string pow_expr(const std::string& base, const std::string& exponent, DType base_type,
                     DType exponent_type) {
  std::string t = value_type(base_type);
  if (is_integer(base_type)) {
    // An integer power, exact and wrapping, for integer exponents that are not negative; else
    // the real power, saturated to the base's type.
    if (is_integer(exponent_type))
      return fmt::format("orch_ipow<{}>({}, {}, {})", t, base, exponent,
                         saturation_limits(base_type));
    return fmt::format("orch_f2i<{}>(orch_pow((double){}, (double){}), {})", t, base, exponent,
                       saturation_limits(base_type));
  }
  if (exponent_type == base_type) return fmt::format("orch_pow({}, {})", base, exponent);
  return fmt::format("(({})orch_pow((double){}, (double){}))", t, base, exponent);
}

std::string elementwise_reason(const std::string& fn, DType dtype) {
  if (!is_float(dtype) && kMath.count(fn) != 0)
    return fmt::format("prim.Elementwise fn '{}' on {} is not generated", fn, dtype_name(dtype));
  return "";
}

std::string elementwise_expr(const std::string& fn, const std::vector<std::string>& a, DType in,
                             DType out) {
  std::string t = value_type(in);
  bool integer = is_integer(in);
  if (fn == "add" || fn == "sub" || fn == "mul") {
    const char* op = fn == "add" ? "+" : fn == "sub" ? "-" : "*";
    return integer ? wrapped(t, a[0], op, a[1]) : fmt::format("({} {} {})", a[0], op, a[1]);
  }
  // Integer division, remainders and shifts as the interpreter computes them (orch_idiv and
  // the others in the prelude): a zero divisor gives 0, MIN / -1 wraps, shifts of 64 or more
  // bits give 0.
  if (fn == "pow") return pow_expr(a[0], a[1], in, in);
  if (fn == "div")
    return integer ? fmt::format("orch_idiv({}, {})", a[0], a[1])
                   : fmt::format("({} / {})", a[0], a[1]);
  // Mod is on integers only (ONNX: fmod = 1 for floats).
  if (fn == "mod" || fn == "fmod") {
    const char* helper = fn == "mod" ? "orch_imod" : integer ? "orch_irem" : "orch_fmod";
    return fmt::format("{}(({}){}, ({}){})", helper, t, a[0], t, a[1]);
  }
  if (fn == "shl" || fn == "shr")
    return fmt::format("(({})orch_{}((unsigned long long)({}), (unsigned long long)({})))", t, fn,
                       a[0], a[1]);
  if (fn == "min" || fn == "max") {
    std::string r = a[0];
    for (size_t i = 1; i < a.size(); ++i) r = fmt::format("orch_{}({}, {})", fn, r, a[i]);
    return r;
  }
  if (fn == "neg") return integer ? wrapped(t, "0", "-", a[0]) : fmt::format("(-{})", a[0]);
  if (fn == "abs") return integer ? fmt::format("orch_iabs({})", a[0]) : "orch_abs(" + a[0] + ")";
  if (fn == "sign" || fn == "relu") return fmt::format("orch_{}({})", fn, a[0]);
  if (fn == "reciprocal") return fmt::format("(({})1 / {})", t, a[0]);
  if (kMath.count(fn) != 0) return fmt::format("orch_{}({})", fn, a[0]);
  if (kComparisons.count(fn) != 0) {
    const char* op = fn == "equal"        ? "=="
                     : fn == "less"       ? "<"
                     : fn == "greater"    ? ">"
                     : fn == "less_equal" ? "<="
                                          : ">=";
    return fmt::format("({} {} {})", a[0], op, a[1]);
  }
  // Logic on bool operands; other types compare with zero as the interpreter does.
  auto truth = [&](const std::string& x) {
    return in == DType::boolean ? x : fmt::format("({} != 0)", x);
  };
  if (fn == "and") return fmt::format("({} && {})", truth(a[0]), truth(a[1]));
  if (fn == "or") return fmt::format("({} || {})", truth(a[0]), truth(a[1]));
  if (fn == "xor") return fmt::format("({} != {})", truth(a[0]), truth(a[1]));
  if (fn == "not") return fmt::format("(!{})", truth(a[0]));
  if (fn == "where") return fmt::format("({} ? {} : {})", a[0], a[1], a[2]);
  if (fn == "isnan") return fmt::format("({0} != {0})", a[0]);
  if (fn == "isinf") return fmt::format("orch_isinf({})", a[0]);
  if (fn == "isposinf") return fmt::format("(orch_isinf({0}) && {0} > 0)", a[0]);
  if (fn == "isneginf") return fmt::format("(orch_isinf({0}) && {0} < 0)", a[0]);
  if (fn == "identity") return a[0];
  if (fn == "cast") {
    std::string to = value_type(out);
    if (out == DType::boolean) return in == DType::boolean ? a[0] : fmt::format("({} != 0)", a[0]);
    if (in == DType::boolean) return fmt::format("(({}){} ? 1 : 0)", to, a[0]);
    if (is_float(in) && is_integer(out))
      return fmt::format("orch_f2i<{}>((double){}, {})", to, a[0], saturation_limits(out));
    return fmt::format("(({}){})", to, a[0]);
  }
  unsupported("prim.Elementwise fn '{}' is not generated", fn);
}

}  // namespace orch::codegen::cuda_impl
