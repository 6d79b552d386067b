// Helpers shared by the shape rules.
#pragma once

#include <vector>

#include "ir/op_registry.h"

namespace orch::ops {

/// Numpy/ONNX multidirectional broadcast of two shapes; throws naming both on mismatch.
Shape broadcast_shapes(const Shape& a, const Shape& b);
/// Broadcast of every present input.
Shape broadcast_all(const InferInput& in);
/// Maps a possibly negative axis into [0, rank); throws when out of range.
int64_t normalize_axis(int64_t axis, int64_t rank);
/// Normalizes and checks for duplicates.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank);
/// Throws unless every present input has the dtype of input `first`.
void require_same_dtype(const InferInput& in, size_t first = 0);
/// Throws unless `t` is one of `allowed`.
void require_dtype(DType t, std::initializer_list<DType> allowed, std::string_view what);
void require_float(DType t, std::string_view what);
/// Throws unless input `i` has the given rank.
void require_rank(const InferInput& in, size_t i, int64_t rank);

/// A dim computed from dims and attributes, which a malformed model may set to anything: throws
/// naming `what` unless it lies in [0, 2^62], the most elements a tensor holds (num_elements).
/// Callers compute in __int128, where no product or sum of two int64 values overflows.
int64_t size_in_range(__int128 size, std::string_view what);

/// The dtype of ONNX TensorProto.DataType `code` (Cast's `to`, EyeLike's `dtype`, the windows'
/// `output_datatype`); `what` begins the error ("Cast to"): Unsupported for the string, complex
/// and float8 types orch lacks, Error for a code ONNX does not define.
DType dtype_from_onnx(int64_t code, std::string_view what);

/// Output type list with one entry.
inline std::vector<TensorType> one(DType dtype, Shape shape) {
  return {TensorType{dtype, std::move(shape)}};
}

}  // namespace orch::ops
