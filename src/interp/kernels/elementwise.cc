// Reference kernels of the elementwise ops. This file registers the family and holds the ops
// that convert, select or copy elements (Cast, Where, Identity, Dropout, IsNaN, IsInf); the
// arithmetic and the math functions live in elementwise_arith.cc and elementwise_math.cc.
#include <cmath>
#include <cstring>

#include "interp/kernels/elementwise_parts.h"
#include "interp/kernels/families.h"
#include "interp/kernels/util.h"
#include "ir/error.h"

namespace orch::interp {
namespace {

// A float source or target converts through double: float to integer truncates toward zero
// (saturating, NaN gives 0) and anything to bool is "!= 0". Integer to integer goes through
// int64 and wraps like a C cast, which is exact for i64 and u64.
void cast(KernelArgs& args) {
  const Tensor& in = args.inputs[0];
  Tensor& out = args.outputs[0];
  bool through_double = is_float(in.dtype()) || is_float(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (through_double)
      out.set(i, in.get(i));
    else
      out.set_int(i, in.get_int(i));
  }
}

void copy_input(KernelArgs& args) {
  if (args.outputs[0].nbytes() > 0)
    std::memcpy(args.outputs[0].mutable_bytes(), args.inputs[0].bytes(), args.outputs[0].nbytes());
}

// Inference mode only: the output is the input and the optional mask is all true.
void dropout(KernelArgs& args) {
  if (args.inputs.size() > 2 && args.inputs[2].defined())
    check(args.inputs[2].get_int(0) == 0,
          "training_mode = true is not supported: orch runs Dropout in inference mode only");
  copy_input(args);
  if (args.outputs.size() > 1)
    for (int64_t i = 0; i < args.outputs[1].numel(); ++i) args.outputs[1].set_int(i, 1);
}

// Copies element bytes, so every dtype is exact.
void where(KernelArgs& args) {
  const Tensor& cond = args.inputs[0];
  const Tensor& x = args.inputs[1];
  const Tensor& y = args.inputs[2];
  Tensor& out = args.outputs[0];
  BroadcastIndex ic(cond.shape(), out.shape());
  BroadcastIndex ix(x.shape(), out.shape());
  BroadcastIndex iy(y.shape(), out.shape());
  size_t size = dtype_size(out.dtype());
  for (int64_t i = 0; i < out.numel(); ++i) {
    const std::byte* src =
        cond.get_int(ic(i)) != 0 ? x.bytes() + ix(i) * size : y.bytes() + iy(i) * size;
    std::memcpy(out.mutable_bytes() + i * size, src, size);
  }
}

void is_nan(KernelArgs& args) {
  for (int64_t i = 0; i < args.outputs[0].numel(); ++i)
    args.outputs[0].set_int(i, std::isnan(args.inputs[0].get(i)));
}

void is_inf(KernelArgs& args) {
  bool negative = attr_int(args.attrs, "detect_negative", 1) != 0;
  bool positive = attr_int(args.attrs, "detect_positive", 1) != 0;
  for (int64_t i = 0; i < args.outputs[0].numel(); ++i) {
    double x = args.inputs[0].get(i);
    args.outputs[0].set_int(i, std::isinf(x) && (x < 0 ? negative : positive));
  }
}

}  // namespace

void add_elementwise_kernels(KernelTable& table) {
  add_elementwise_arith_kernels(table);
  add_elementwise_math_kernels(table);
  table.insert(table.end(), {{"Cast", cast},
                             {"CastLike", cast},
                             {"Identity", copy_input},
                             {"Dropout", dropout},
                             {"Where", where},
                             {"IsNaN", is_nan},
                             {"IsInf", is_inf}});
}

}  // namespace orch::interp
