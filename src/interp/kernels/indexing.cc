// Reference kernels of the indexing ops. Elements move as raw bytes (memcpy of dtype_size), so
// every dtype is copied exactly; only the scatter reductions compute, in int64 for integer types
// and in double for floating-point ones.
#include <cstring>
#include <string>

#include "interp/kernels/families.h"
#include "interp/kernels/indexing_grid_sample.h"
#include "interp/kernels/indexing_resize.h"
#include "interp/kernels/util.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

int64_t axis_attr(const KernelArgs& args, int64_t rank) {
  int64_t axis = attr_int(args.attrs, "axis", 0);
  return axis < 0 ? axis + rank : axis;
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// Reads indices[flat], an index into `axis` of data (size `dim`), and maps it into [0, dim); a
// value outside [-dim, dim) is an error that names the value and where it sits.
int64_t read_index(const Tensor& indices, int64_t flat, int64_t axis, int64_t dim) {
  int64_t v = indices.get_int(flat);
  if (v < -dim || v >= dim)
    fail("index {} at indices{} is out of range for axis {} of data, of size {}", v,
         format_shape(unravel(flat, indices.shape())), axis, dim);
  return v < 0 ? v + dim : v;
}

void copy_elements(Tensor& dst, int64_t dst_at, const Tensor& src, int64_t src_at, int64_t n) {
  if (n == 0) return;  // empty tensors may have no buffer
  size_t es = dtype_size(src.dtype());
  std::memcpy(dst.mutable_bytes() + dst_at * es, src.bytes() + src_at * es, n * es);
}

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reduction_attr(const KernelArgs& args) {
  std::string r = attr_string(args.attrs, "reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  fail("unknown reduction '{}'", r);
}

template <typename T>
T reduce(Reduction r, T a, T b) {
  switch (r) {
    case Reduction::Add:
      return a + b;
    case Reduction::Mul:
      return a * b;
    case Reduction::Max:
      return a > b ? a : b;
    case Reduction::Min:
      return a < b ? a : b;
    case Reduction::None:
      break;
  }
  return b;
}

// out[o] = reduce(out[o], updates[u]): exact for integers (unsigned arithmetic wraps, as the
// integer types of ONNX do), double for floats.
void combine(Tensor& out, int64_t o, const Tensor& updates, int64_t u, Reduction r) {
  DType t = out.dtype();
  if (r == Reduction::None) {
    copy_elements(out, o, updates, u, 1);
  } else if (is_float(t)) {
    out.set(o, reduce(r, out.get(o), updates.get(u)));
  } else if (is_unsigned_int(t) || r == Reduction::Add || r == Reduction::Mul) {
    uint64_t a = static_cast<uint64_t>(out.get_int(o));
    uint64_t b = static_cast<uint64_t>(updates.get_int(u));
    out.set_int(o, static_cast<int64_t>(reduce(r, a, b)));
  } else {
    out.set_int(o, reduce(r, out.get_int(o), updates.get_int(u)));
  }
}

void gather(KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& out = args.outputs[0];
  int64_t axis = axis_attr(args, data.rank());
  int64_t outer = product(data.shape(), 0, axis);
  int64_t dim = data.shape()[axis];
  int64_t inner = product(data.shape(), axis + 1, data.rank());
  int64_t n = indices.numel();
  for (int64_t j = 0; j < n; ++j) {
    int64_t idx = read_index(indices, j, axis, dim);
    for (int64_t o = 0; o < outer; ++o)
      copy_elements(out, (o * n + j) * inner, data, (o * dim + idx) * inner, inner);
  }
}

void gather_elements(KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& out = args.outputs[0];
  int64_t axis = axis_attr(args, data.rank());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    std::vector<int64_t> at = unravel(i, indices.shape());
    at[axis] = read_index(indices, i, axis, data.shape()[axis]);
    copy_elements(out, i, data, ravel(at, data.shape()), 1);
  }
}

void scatter_elements(KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  const Tensor& updates = args.inputs[2];
  Tensor& out = args.outputs[0];
  int64_t axis = axis_attr(args, data.rank());
  Reduction r = reduction_attr(args);
  copy_elements(out, 0, data, 0, data.numel());
  for (int64_t i = 0; i < indices.numel(); ++i) {
    std::vector<int64_t> at = unravel(i, indices.shape());
    at[axis] = read_index(indices, i, axis, data.shape()[axis]);
    combine(out, ravel(at, data.shape()), updates, i, r);
  }
}

// Flat offset in `data` (row-major `strides`) of the index tuple at position `p` of
// indices.shape[:-1], which indexes data's dims [first, first + k).
int64_t tuple_offset(const Tensor& data, const std::vector<int64_t>& strides, const Tensor& indices,
                     int64_t p, int64_t first) {
  int64_t k = indices.shape().back();
  int64_t offset = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t axis = first + j;
    offset += read_index(indices, p * k + j, axis, data.shape()[axis]) * strides[axis];
  }
  return offset;
}

void gather_nd(KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  Tensor& out = args.outputs[0];
  if (indices.numel() == 0) return;
  int64_t b = attr_int(args.attrs, "batch_dims", 0);
  int64_t k = indices.shape().back();
  int64_t tuples = indices.numel() / k;
  // Index tuples per batch entry; the batch dims of indices and data are equal.
  int64_t per_batch = product(indices.shape(), b, indices.rank() - 1);
  int64_t batch_stride = product(data.shape(), b, data.rank());
  int64_t slice = product(data.shape(), b + k, data.rank());
  std::vector<int64_t> strides = row_major_strides(data.shape());
  for (int64_t p = 0; p < tuples; ++p) {
    int64_t from = p / per_batch * batch_stride + tuple_offset(data, strides, indices, p, b);
    copy_elements(out, p * slice, data, from, slice);
  }
}

void scatter_nd(KernelArgs& args) {
  const Tensor& data = args.inputs[0];
  const Tensor& indices = args.inputs[1];
  const Tensor& updates = args.inputs[2];
  Tensor& out = args.outputs[0];
  Reduction r = reduction_attr(args);
  int64_t k = indices.shape().back();
  int64_t slice = product(data.shape(), k, data.rank());
  copy_elements(out, 0, data, 0, data.numel());
  if (indices.numel() == 0) return;
  int64_t tuples = indices.numel() / k;
  std::vector<int64_t> strides = row_major_strides(data.shape());
  for (int64_t p = 0; p < tuples; ++p) {
    int64_t to = tuple_offset(data, strides, indices, p, 0);
    for (int64_t e = 0; e < slice; ++e) combine(out, to + e, updates, p * slice + e, r);
  }
}

}  // namespace

void add_indexing_kernels(KernelTable& table) {
  table.insert(table.end(), {{"Gather", gather},
                             {"GatherElements", gather_elements},
                             {"GatherND", gather_nd},
                             {"ScatterElements", scatter_elements},
                             {"ScatterND", scatter_nd}});
  add_indexing_resize_kernels(table);
  add_indexing_grid_sample_kernels(table);
}

}  // namespace orch::interp
