#include "ir/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ir/hash_util.h"

namespace orch {

int64_t num_elements(const Shape& shape) {
  // The bound holds for the product of the nonzero dims, not only for the count: an empty
  // tensor's strides and the kernels' outer and inner products still multiply its other dims,
  // and [0, 2^40, 2^40] would overflow them. Every partial product then fits in int64.
  int64_t n = 1;
  bool empty = false;
  // Hot (every value a graph adds): the messages are formatted only on failure.
  for (int64_t d : shape) {
    if (d < 0) fail("negative dimension {} in shape {}", d, format_shape(shape));
    if (d == 0) {
      empty = true;
      continue;
    }
    if (n > (int64_t{1} << 62) / d) fail("shape {} has too many elements", format_shape(shape));
    n *= d;
  }
  return empty ? 0 : n;
}

std::string format_shape(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(num_elements(shape_)) {
  // num_elements allows 2^62 elements; their bytes must not wrap size_t either.
  check(numel_ <= (int64_t{1} << 62) / static_cast<int64_t>(dtype_size(dtype_)),
        "a {} tensor of shape {} is too large", dtype_name(dtype_), format_shape(shape_));
  auto buffer = std::shared_ptr<std::byte[]>(new std::byte[nbytes() + 1]());
  data_ = buffer.get();
  storage_ = std::move(buffer);
}

Tensor Tensor::wrap(DType dtype, Shape shape, std::shared_ptr<const void> owner, const void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = num_elements(t.shape_);
  t.storage_ = std::move(owner);
  t.data_ = static_cast<std::byte*>(const_cast<void*>(data));
  return t;
}

Tensor Tensor::from_doubles(DType dtype, Shape shape, std::span<const double> values) {
  Tensor t(dtype, std::move(shape));
  check(static_cast<int64_t>(values.size()) == t.numel(), "{} values for shape {}", values.size(),
        format_shape(t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, values[i]);
  return t;
}

Tensor Tensor::from_ints(DType dtype, Shape shape, std::span<const int64_t> values) {
  Tensor t(dtype, std::move(shape));
  check(static_cast<int64_t>(values.size()) == t.numel(), "{} values for shape {}", values.size(),
        format_shape(t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) t.set_int(i, values[i]);
  return t;
}

Tensor Tensor::scalar(DType dtype, double value) {
  Tensor t(dtype, {});
  t.set(0, value);
  return t;
}

namespace {

template <typename T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Float to integer conversion that stays defined for NaN and out-of-range values.
template <typename T>
T saturating_cast(double v) {
  if (std::isnan(v)) return T{0};
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

}  // namespace

double Tensor::get(int64_t i) const {
  const std::byte* p = data_ + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f32:
      return load<float>(p);
    case DType::f64:
      return load<double>(p);
    case DType::f16:
      return half_to_float(load<uint16_t>(p));
    case DType::bf16:
      return bf16_to_float(load<uint16_t>(p));
    case DType::i8:
      return load<int8_t>(p);
    case DType::u8:
      return load<uint8_t>(p);
    case DType::i16:
      return load<int16_t>(p);
    case DType::u16:
      return load<uint16_t>(p);
    case DType::i32:
      return load<int32_t>(p);
    case DType::u32:
      return load<uint32_t>(p);
    case DType::i64:
      return static_cast<double>(load<int64_t>(p));
    case DType::u64:
      return static_cast<double>(load<uint64_t>(p));
    case DType::boolean:
      return load<uint8_t>(p) != 0;
  }
  return 0;
}

int64_t Tensor::get_int(int64_t i) const {
  const std::byte* p = data_ + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::i64:
      return load<int64_t>(p);
    case DType::u64:
      return static_cast<int64_t>(load<uint64_t>(p));
    case DType::f32:
    case DType::f64:
    case DType::f16:
    case DType::bf16:
      return saturating_cast<int64_t>(get(i));
    default:
      return static_cast<int64_t>(get(i));
  }
}

void Tensor::set(int64_t i, double v) {
  std::byte* p = data_ + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f32:
      return store<float>(p, static_cast<float>(v));
    case DType::f64:
      return store<double>(p, v);
    case DType::f16:
      return store<uint16_t>(p, float_to_half(static_cast<float>(v)));
    case DType::bf16:
      return store<uint16_t>(p, float_to_bf16(static_cast<float>(v)));
    case DType::i8:
      return store<int8_t>(p, saturating_cast<int8_t>(v));
    case DType::u8:
      return store<uint8_t>(p, saturating_cast<uint8_t>(v));
    case DType::i16:
      return store<int16_t>(p, saturating_cast<int16_t>(v));
    case DType::u16:
      return store<uint16_t>(p, saturating_cast<uint16_t>(v));
    case DType::i32:
      return store<int32_t>(p, saturating_cast<int32_t>(v));
    case DType::u32:
      return store<uint32_t>(p, saturating_cast<uint32_t>(v));
    case DType::i64:
      return store<int64_t>(p, saturating_cast<int64_t>(v));
    case DType::u64:
      return store<uint64_t>(p, saturating_cast<uint64_t>(v));
    case DType::boolean:
      return store<uint8_t>(p, v != 0 ? 1 : 0);
  }
}

void Tensor::set_int(int64_t i, int64_t v) {
  std::byte* p = data_ + i * dtype_size(dtype_);
  switch (dtype_) {
    case DType::i8:
      return store<int8_t>(p, static_cast<int8_t>(v));
    case DType::u8:
      return store<uint8_t>(p, static_cast<uint8_t>(v));
    case DType::i16:
      return store<int16_t>(p, static_cast<int16_t>(v));
    case DType::u16:
      return store<uint16_t>(p, static_cast<uint16_t>(v));
    case DType::i32:
      return store<int32_t>(p, static_cast<int32_t>(v));
    case DType::u32:
      return store<uint32_t>(p, static_cast<uint32_t>(v));
    case DType::i64:
      return store<int64_t>(p, v);
    case DType::u64:
      return store<uint64_t>(p, static_cast<uint64_t>(v));
    case DType::boolean:
      return store<uint8_t>(p, v != 0 ? 1 : 0);
    default:
      return set(i, static_cast<double>(v));
  }
}

std::vector<int64_t> Tensor::to_ints() const {
  std::vector<int64_t> out(numel_);
  for (int64_t i = 0; i < numel_; ++i) out[i] = get_int(i);
  return out;
}

std::vector<double> Tensor::to_doubles() const {
  std::vector<double> out(numel_);
  for (int64_t i = 0; i < numel_; ++i) out[i] = get(i);
  return out;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes() > 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  check(num_elements(shape) == numel_, "cannot reshape {} to {}", format_shape(shape_),
        format_shape(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

bool Tensor::identical(const Tensor& other) const {
  return dtype_ == other.dtype_ && shape_ == other.shape_ &&
         (nbytes() == 0 || std::memcmp(data_, other.data_, nbytes()) == 0);
}

uint64_t Tensor::content_hash() const {
  uint64_t h = hash_combine(0, static_cast<uint64_t>(dtype_));
  for (int64_t d : shape_) h = hash_combine(h, static_cast<uint64_t>(d));
  return hash_combine(h, hash_bytes(data_, nbytes()));
}

}  // namespace orch
