#include "ir/dtype.h"

#include <array>
#include <bit>
#include <cmath>

namespace orch {
namespace {

struct DTypeInfo {
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"f32", 4},
    {"f64", 8},
    {"f16", 2},
    {"bf16", 2},
    {"i8", 1},
    {"u8", 1},
    {"i16", 2},
    {"u16", 2},
    {"i32", 4},
    {"u32", 4},
    {"i64", 8},
    {"u64", 8},
    {"bool", 1},
}};

}  // namespace

size_t dtype_size(DType t) {
  return kInfo[static_cast<int>(t)].size;
}

std::string_view dtype_name(DType t) {
  return kInfo[static_cast<int>(t)].name;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (kInfo[i].name == name) return static_cast<DType>(i);
  return std::nullopt;
}

bool is_float(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16 || t == DType::bf16;
}

bool is_signed_int(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}

bool is_unsigned_int(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal half: value is mantissa * 2^-24.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (abs_bits >= 0x477ff000u) return sign | 0x7c00u;  // overflow rounds to infinity
  if (abs_bits < 0x38800000u) {
    // Result is subnormal or zero: round |f| * 2^24 to nearest even integer.
    float scaled = std::ldexp(std::bit_cast<float>(abs_bits), 24);
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  uint32_t mantissa_rounding = 0xfffu + ((abs_bits >> 13) & 1u);
  abs_bits += mantissa_rounding;
  return sign | static_cast<uint16_t>((abs_bits - (112u << 23)) >> 13);
}

float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t float_to_bf16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace orch
