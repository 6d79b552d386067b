// Element types of tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace orch {

/// Element type of a tensor. The order is part of the structural hash: append, never reorder.
enum class DType : uint8_t { f32, f64, f16, bf16, i8, u8, i16, u16, i32, u32, i64, u64, boolean };

inline constexpr int kNumDTypes = 13;

/// Bytes per element.
size_t dtype_size(DType t);
/// Short name used by the text format and messages: "f32", "i64", "bool", ...
std::string_view dtype_name(DType t);
/// Inverse of dtype_name.
std::optional<DType> parse_dtype(std::string_view name);

bool is_float(DType t);
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_integer(DType t) {
  return is_signed_int(t) || is_unsigned_int(t);
}

/// IEEE half and bfloat16 conversions (round to nearest even).
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);

}  // namespace orch
