// Reference kernels of the opaque ops: TopK here, RNN, GRU and LSTM in opaque_rnn.cc.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "interp/kernels/families.h"
#include "interp/kernels/opaque_rnn.h"
#include "ir/dtype.h"

namespace orch::interp {
namespace {

// Sorts each slice along `axis` stably (ties keep the lower index first) and keeps the first K;
// values are copied bytewise so every dtype is exact.
template <typename T>
void top_k_as(KernelArgs& args, const std::vector<T>& keys) {
  const Tensor& x = args.inputs[0];
  Tensor& values = args.outputs[0];
  Tensor& indices = args.outputs[1];
  int64_t rank = x.rank();
  int64_t axis = attr_int(args.attrs, "axis", -1);
  if (axis < 0) axis += rank;
  bool largest = attr_int(args.attrs, "largest", 1) != 0;
  int64_t dim = x.shape()[axis], k = values.shape()[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
  int64_t outer = dim == 0 ? 0 : x.numel() / (dim * inner);
  size_t width = dtype_size(x.dtype());
  std::vector<int64_t> order(dim);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * dim * inner + i;
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        T va = keys[base + a * inner], vb = keys[base + b * inner];
        return largest ? va > vb : va < vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = (o * k + j) * inner + i;
        std::memcpy(values.mutable_bytes() + dst * width,
                    x.bytes() + (base + order[j] * inner) * width, width);
        indices.set_int(dst, order[j]);
      }
    }
}

void top_k(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (x.dtype() == DType::u64) {
    std::vector<int64_t> v = x.to_ints();
    top_k_as(args, std::vector<uint64_t>(v.begin(), v.end()));
  } else if (is_integer(x.dtype())) {
    top_k_as(args, x.to_ints());
  } else {
    top_k_as(args, x.to_doubles());
  }
}

}  // namespace

void add_opaque_kernels(KernelTable& table) {
  table.insert(table.end(), {{"TopK", top_k}});
  add_opaque_rnn_kernels(table);
}

}  // namespace orch::interp
