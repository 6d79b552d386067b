#include "ir/ops/shape_util.h"

#include <algorithm>
#include <map>

#include "ir/error.h"

namespace orch::ops {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)  // not check(): it would format both shapes per dim
      fail("shapes {} and {} do not broadcast", format_shape(a), format_shape(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_all(const InferInput& in) {
  Shape out;
  for (size_t i = 0; i < in.types.size(); ++i)
    if (in.has(i)) out = broadcast_shapes(out, in.type(i).shape);
  return out;
}

int64_t size_in_range(__int128 size, std::string_view what) {
  check(size >= 0 && size <= (__int128{1} << 62), "{} is {:.4g} (out of range 0..2^62)", what,
        static_cast<double>(size));
  return static_cast<int64_t>(size);
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
  // A rank-0 tensor has no axis: callers index the shape with the result.
  check(axis >= -rank && axis < rank, "axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank);
    check(std::find(out.begin(), out.end(), n) == out.end(), "axis {} is repeated", a);
    out.push_back(n);
  }
  return out;
}

void require_same_dtype(const InferInput& in, size_t first) {
  DType t = in.type(first).dtype;
  for (size_t i = first; i < in.types.size(); ++i)
    if (in.has(i))
      check(in.type(i).dtype == t, "input {} is {}, input {} is {}", first, dtype_name(t), i,
            dtype_name(in.type(i).dtype));
}

void require_dtype(DType t, std::initializer_list<DType> allowed, std::string_view what) {
  if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
    unsupported("{} has unsupported type {}", what, dtype_name(t));
}

void require_float(DType t, std::string_view what) {
  check(is_float(t), "{} must be a floating-point tensor, got {}", what, dtype_name(t));
}

void require_rank(const InferInput& in, size_t i, int64_t rank) {
  check(static_cast<int64_t>(in.type(i).shape.size()) == rank, "input {} must have rank {}, got {}",
        i, rank, format_shape(in.type(i).shape));
}

DType dtype_from_onnx(int64_t code, std::string_view what) {
  static const std::map<int64_t, DType> kCodes = {
      {1, DType::f32},  {2, DType::u8},   {3, DType::i8},      {4, DType::u16},  {5, DType::i16},
      {6, DType::i32},  {7, DType::i64},  {9, DType::boolean}, {10, DType::f16}, {11, DType::f64},
      {12, DType::u32}, {13, DType::u64}, {16, DType::bf16}};
  if (auto it = kCodes.find(code); it != kCodes.end()) return it->second;
  if (code == 8) unsupported("{} STRING is not supported", what);
  if (code == 14 || code == 15) unsupported("{} a complex type ({}) is not supported", what, code);
  if (code >= 17 && code <= 23)
    unsupported("{} a float8 or 4-bit type ({}) is not supported", what, code);
  fail("{} {}, which is not a known ONNX tensor type", what, code);
}

}  // namespace orch::ops
