// prim.Reshape as index arithmetic. The dims of a reshape fall into groups whose sizes multiply
// to the same on both sides; an index is flattened and split again only within its group, so a
// reshape that adds or drops unit dims indexes directly. Flattening every index kept the stacked
// axis of pooling's Concat out of the simplifier's reach: YOLOX's 5x5 MaxPool on 128x13x13, one
// kernel of 30 primitives under the default schedule, took 58.1 ms so and takes 0.30 ms.
#include "codegen/halide/halide_lower.h"

namespace orch::codegen::halide_impl {
namespace {

int i32(int64_t v) {
  return static_cast<int>(v);
}

}  // namespace

std::vector<Halide::Expr> reshape_index(const Shape& in, const Shape& out,
                                        const std::vector<Halide::Expr>& idx) {
  std::vector<Halide::Expr> at(in.size(), Halide::Expr(0));
  if (num_elements(in) == 0) return at;
  size_t i = 0, o = 0;
  while (true) {
    while (i < in.size() && in[i] == 1) ++i;
    while (o < out.size() && out[o] == 1) ++o;
    if (i == in.size() || o == out.size()) return at;
    size_t i0 = i, o0 = o;
    int64_t in_size = in[i++], out_size = out[o++];
    while (in_size != out_size)
      if (in_size < out_size)
        in_size *= in[i++];
      else
        out_size *= out[o++];
    if (i - i0 == 1 && o - o0 == 1) {
      at[i0] = idx[o0];
      continue;
    }
    Halide::Expr flat = 0;
    int64_t stride = 1;
    for (size_t d = o; d-- > o0;) {
      flat = flat + idx[d] * i32(stride);
      stride *= out[d];
    }
    stride = 1;
    for (size_t d = i; d-- > i0;) {
      at[d] = d == i0 ? flat / i32(stride) : (flat / i32(stride)) % i32(in[d]);
      stride *= in[d];
    }
  }
}

}  // namespace orch::codegen::halide_impl
