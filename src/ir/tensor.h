// Tensors: a dtype, a static shape and a buffer that copies of the tensor share.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace orch {

/// Static shape; a rank-0 shape is a scalar.
using Shape = std::vector<int64_t>;

/// Product of the dims; throws on a negative dim or on overflow past 2^62 elements.
int64_t num_elements(const Shape& shape);
/// "[1,3,224,224]", "[]" for a scalar.
std::string format_shape(const Shape& shape);
/// Row-major strides in elements.
std::vector<int64_t> row_major_strides(const Shape& shape);

/// A dense row-major tensor. Copies share the buffer (constants are never copied); use clone()
/// for a private copy. Element access by double/int64 works for every dtype so that reference
/// code can stay generic.
class Tensor {
 public:
  Tensor() = default;
  /// A zero-filled tensor owning a fresh buffer.
  Tensor(DType dtype, Shape shape);
  /// A tensor over memory owned by `owner` (a file mapping, a protobuf string, ...).
  static Tensor wrap(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data);
  /// A tensor holding `values` converted to `dtype`.
  static Tensor from_doubles(DType dtype, Shape shape, std::span<const double> values);
  static Tensor from_ints(DType dtype, Shape shape, std::span<const int64_t> values);
  /// A rank-0 tensor.
  static Tensor scalar(DType dtype, double value);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  const std::byte* bytes() const { return data_; }
  std::byte* mutable_bytes() { return data_; }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data() {
    return reinterpret_cast<T*>(data_);
  }

  /// Element `i` (flat index) converted to double / int64.
  double get(int64_t i) const;
  int64_t get_int(int64_t i) const;
  /// Stores `v` converted to the tensor's dtype (float to int truncates, like a C cast).
  void set(int64_t i, double v);
  void set_int(int64_t i, int64_t v);

  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> to_ints() const;
  std::vector<double> to_doubles() const;

  /// A deep copy with its own buffer.
  Tensor clone() const;
  /// Same buffer, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  /// Bitwise equality of dtype, shape and contents.
  bool identical(const Tensor& other) const;
  /// 64-bit hash of dtype, shape and contents; stable across runs and machines.
  uint64_t content_hash() const;

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<const void> storage_;
  std::byte* data_ = nullptr;
};

}  // namespace orch
