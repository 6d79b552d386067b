// Element types of generated CUDA C: storage and value types, literals, kernel parameters.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "codegen/cuda/cuda_impl.h"
#include "ir/error.h"

namespace orch::codegen::cuda_impl {
// Infinities and NaN as divisions by zero: constant expressions for NVRTC and the host
// compiler alike (NVRTC has no __builtin_huge_valf, and __int_as_float would make a baked
// array's initialization dynamic, which __device__ variables do not allow).
std::string float_literal(double v, bool single) {
  std::string suffix = single ? "f" : "";
  if (std::isnan(v)) return fmt::format("(0.0{0} / 0.0{0})", suffix);
  if (std::isinf(v)) return fmt::format("({0}1.0{1} / 0.0{1})", v < 0 ? "-" : "", suffix);
  std::string s = single ? fmt::format("{:.9g}", v) : fmt::format("{:.17g}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + suffix;
}

std::string storage_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
    case DType::i8:
      return "signed char";
    case DType::u8:
    case DType::boolean:
      return "unsigned char";
    case DType::i16:
      return "short";
    case DType::u16:
    case DType::f16:
    case DType::bf16:
      return "unsigned short";
    case DType::i32:
      return "int";
    case DType::u32:
      return "unsigned int";
    case DType::i64:
      return "long long";
    case DType::u64:
      return "unsigned long long";
    default:
      unsupported("dtype {} is not generated", dtype_name(dtype));
  }
}

std::string value_type(DType dtype) {
  if (half_float(dtype)) return "float";
  return dtype == DType::boolean ? "bool" : storage_type(dtype);
}

bool half_float(DType dtype) {
  return dtype == DType::f16 || dtype == DType::bf16;
}

std::string from_storage(DType dtype, const std::string& stored) {
  if (dtype == DType::f16) return fmt::format("orch_h2f({})", stored);
  if (dtype == DType::bf16) return fmt::format("orch_b2f({})", stored);
  if (dtype == DType::boolean) return fmt::format("({} != 0)", stored);
  return stored;
}

std::string to_storage(DType dtype, const std::string& value) {
  if (dtype == DType::f16) return fmt::format("orch_f2h({})", value);
  if (dtype == DType::bf16) return fmt::format("orch_f2b({})", value);
  if (dtype == DType::boolean) return fmt::format("(unsigned char)(({}) ? 1 : 0)", value);
  return fmt::format("({})({})", storage_type(dtype), value);
}

std::string rounded(DType dtype, const std::string& value) {
  if (dtype == DType::f16) return fmt::format("orch_rh({})", value);
  if (dtype == DType::bf16) return fmt::format("orch_rb({})", value);
  return value;
}

std::string storage_literal(DType dtype, const Tensor& t, int64_t i) {
  if (!half_float(dtype)) return literal(dtype, t, i);
  return fmt::format("{}", t.data<uint16_t>()[i]);
}

std::string literal(DType dtype, const Tensor& t, int64_t i) {
  if (dtype == DType::boolean) return t.get_int(i) != 0 ? "true" : "false";
  // f16 and bf16 values are floats (value_type).
  if (is_float(dtype)) return float_literal(t.get(i), dtype != DType::f64);
  if (dtype == DType::u64) return fmt::format("{}ULL", static_cast<uint64_t>(t.get_int(i)));
  int64_t v = t.get_int(i);
  // -2^63 has no literal of its own.
  std::string text = v == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807LL - 1)"
                                                              : fmt::format("{}LL", v);
  return dtype == DType::i64 ? text : fmt::format("(({}){})", storage_type(dtype), text);
}

std::vector<std::string> parameter_types(const Graph& kernel) {
  std::vector<std::string> types;
  for (ValueId v : kernel.inputs())
    types.push_back(fmt::format("const {}*", storage_type(kernel.value(v).type.dtype)));
  for (ValueId v : kernel.outputs())
    types.push_back(fmt::format("ORCH_GLOBAL({})", storage_type(kernel.value(v).type.dtype)));
  types.push_back("unsigned char*");
  return types;
}

}  // namespace orch::codegen::cuda_impl
