// Deterministic 64-bit hashing used by the structural hash and the tuning database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace orch {

/// FNV-1a over bytes.
inline uint64_t hash_bytes(const void* data, size_t size, uint64_t seed = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

inline uint64_t hash_string(std::string_view s) {
  return hash_bytes(s.data(), s.size());
}

/// Order-dependent combination (splitmix64 finalizer over the pair).
inline uint64_t hash_combine(uint64_t seed, uint64_t value) {
  uint64_t x = seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace orch
