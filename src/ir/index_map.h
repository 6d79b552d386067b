// Index maps (Welder §1): for each input of a primitive, which input coordinates one output
// coordinate needs, as integer expressions over the loop axes. The loop axes are the output axes
// (0 .. out_rank-1) followed by the primitive's reduce axes (MatMul's k, Conv's c/kh/kw, ...).
// Expressions are affine with floordiv/mod by positive constants and absolute values (reflect
// and edge padding fold coordinates back); a data-dependent coordinate is `whole` (the entire
// input dimension). One interval evaluator over these maps gives the input
// box an output box needs, for every primitive, with no per-op code.
//
// Example, Conv 3x3 stride 1 pad 1 on X[N,C,H,W] -> Y[N,M,OH,OW], reduce axes (c, kh, kw):
//   X[n, c, oh + kh - 1, ow + kw - 1]   W[m, c, kh, kw]
// An output box oh in [0,3] needs X rows [-1, 5], clamped to the input: [0, 5].
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/attribute.h"

namespace orch {

struct TensorType;

/// A closed integer interval [lo, hi]; empty when lo > hi.
struct Interval {
  int64_t lo = 0;
  int64_t hi = -1;
  bool empty() const { return lo > hi; }
  int64_t size() const { return empty() ? 0 : hi - lo + 1; }
  bool operator==(const Interval&) const = default;
};

/// An integer expression over loop axes.
class IndexExpr {
 public:
  enum class Kind : uint8_t { var, constant, add, mul, floordiv, mod, abs, whole };

  static IndexExpr var(int axis);
  static IndexExpr constant(int64_t value);
  /// The whole input dimension (a data-dependent coordinate).
  static IndexExpr whole();

  friend IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
  friend IndexExpr operator+(const IndexExpr& a, int64_t c);
  friend IndexExpr operator-(const IndexExpr& a, int64_t c) { return a + (-c); }
  /// Scaling by an integer constant (any sign).
  friend IndexExpr operator*(const IndexExpr& a, int64_t c);
  /// Floor division by a positive constant.
  static IndexExpr floordiv(const IndexExpr& a, int64_t d);
  /// Euclidean remainder by a positive constant (always in [0, d)).
  static IndexExpr mod(const IndexExpr& a, int64_t d);
  static IndexExpr abs(const IndexExpr& a);

  Kind kind() const { return kind_; }
  bool is_whole() const;

  /// The value at a point (loop axis values); `whole` has no value and throws.
  int64_t eval(std::span<const int64_t> point) const;
  /// A superset of the values over a box of loop axes; `whole` gives `dim` = [0, dim_size-1].
  Interval eval(std::span<const Interval> box, Interval dim) const;
  /// "d0*2 + r0 - 1", "(d1 floordiv 4) mod 3", "*" for whole; axes from `out_rank` on print as
  /// reduce axes r0, r1, ...
  std::string str(int out_rank) const;

 private:
  struct Node;
  IndexExpr(Kind kind, int64_t value, std::shared_ptr<const Node> a, std::shared_ptr<const Node> b);
  Kind kind_ = Kind::constant;
  int64_t value_ = 0;  // axis, constant, multiplier or divisor
  std::shared_ptr<const Node> a_, b_;
};

/// The map of one primitive instance.
struct IndexMap {
  /// Extents of the reduce axes; loop axis out_rank + i is reduce axis i.
  std::vector<int64_t> reduce_extents;
  /// One expression per dim of each input, in input order.
  std::vector<std::vector<IndexExpr>> inputs;
};

/// A box: one interval per dim.
using Box = std::vector<Interval>;

/// The input box of input `input` needed for the output box `out` (reduce axes span their whole
/// extent), clamped to the input's shape. Some dim may come out empty (e.g. a Pad output box that
/// lies wholly in the padding reads nothing of the input).
Box input_box(const IndexMap& map, size_t input, const Shape& input_shape, const Box& out);

/// Computes the index map of a node from its attributes and the types of its inputs and output.
using IndexMapFn = IndexMap (*)(const Attributes& attrs, std::span<const TensorType> inputs,
                                const TensorType& output);

/// "X[d0, d1 + r0]" lines, one per input, for dumps and tests.
std::string format_index_map(const IndexMap& map, size_t out_rank);

}  // namespace orch
