// A set of up to 128 vertices of one subgraph, as a fixed-size bitset: execution states and
// candidate kernels are compared, hashed and subtracted a word at a time.
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace orch {

struct VertexSet {
  static constexpr int kCapacity = 128;
  std::array<uint64_t, 2> words{};

  void insert(int v) { words[v >> 6] |= uint64_t{1} << (v & 63); }
  bool contains(int v) const { return (words[v >> 6] >> (v & 63)) & 1; }
  int size() const { return std::popcount(words[0]) + std::popcount(words[1]); }
  bool empty() const { return (words[0] | words[1]) == 0; }
  bool subset_of(const VertexSet& o) const {
    return (words[0] & ~o.words[0]) == 0 && (words[1] & ~o.words[1]) == 0;
  }
  bool intersects(const VertexSet& o) const {
    return ((words[0] & o.words[0]) | (words[1] & o.words[1])) != 0;
  }
  /// Calls f(v) for each member in increasing order.
  template <typename F>
  void for_each(F&& f) const {
    for (int w = 0; w < 2; ++w)
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1)
        f(w * 64 + std::countr_zero(bits));
  }
  std::vector<int> to_vector() const {
    std::vector<int> out;
    for_each([&](int v) { out.push_back(v); });
    return out;
  }

  friend VertexSet operator|(const VertexSet& a, const VertexSet& b) {
    return {{a.words[0] | b.words[0], a.words[1] | b.words[1]}};
  }
  friend VertexSet operator&(const VertexSet& a, const VertexSet& b) {
    return {{a.words[0] & b.words[0], a.words[1] & b.words[1]}};
  }
  /// Set difference a \ b.
  friend VertexSet operator-(const VertexSet& a, const VertexSet& b) {
    return {{a.words[0] & ~b.words[0], a.words[1] & ~b.words[1]}};
  }
  bool operator==(const VertexSet&) const = default;
  auto operator<=>(const VertexSet&) const = default;
};

struct VertexSetHash {
  size_t operator()(const VertexSet& s) const {
    uint64_t h = s.words[0] * 0x9E3779B97F4A7C15ull ^ (s.words[1] + 0x632BE59BD9B4E019ull);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace orch
