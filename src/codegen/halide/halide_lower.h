// Private to src/codegen/halide: the lowered form of a kernel graph. The only header that
// includes Halide.h.
#pragma once

#include <Halide.h>

#include <string>
#include <vector>

#include "codegen/halide/halide_backend.h"
#include "codegen/resize_taps.h"

namespace orch::codegen::halide_impl {

/// One kernel value as Halide sees it. Halide dim k is the tensor's dim rank-1-k (innermost
/// first), so row-major buffers map onto Halide buffers without copying.
struct LoweredValue {
  Halide::Func func;    // undefined for scalar constants
  Halide::Expr scalar;  // rank-0 constants become immediates (lets Halide fold pow(x, 2))
  Halide::RDom rdom;    // the reduction domain of Reduce and MatMul values
  int rank = 0;
};

/// A kernel graph as a Halide pipeline.
struct Lowered {
  std::vector<Halide::ImageParam> params;  // one per kernel input, in order
  std::vector<LoweredValue> values;        // one per graph value
  std::vector<Halide::Func> outputs;       // one per kernel output, in storage types
  std::vector<Halide::Var> vars;           // vars[k]: Halide dim k
  Halide::Pipeline pipeline;
};

/// The Halide type a tensor of `dtype` is stored as (bool as u8); throws Unsupported.
Halide::Type storage_type(DType dtype);

/// Builds the unscheduled pipeline; throws Unsupported for what halide_reject names.
Lowered lower_kernel(const Graph& kernel);

/// A convolution's Func (pure zero, one update over `rdom`) and its reduction domain.
struct ConvLowering {
  Halide::Func func;
  Halide::RDom rdom;  // the kernel window (last kernel dim first), then the input channel
};

/// prim.Conv or prim.ConvTranspose of `x` (shape `xs`) by weights `w` (shape `ws`) into an output
/// of shape `ys`, over `vars` (Halide dim k is tensor dim rank-1-k).
ConvLowering lower_conv(const Node& n, const Halide::Func& x, const Shape& xs,
                        const Halide::Func& w, const Shape& ws, const Shape& ys,
                        const std::vector<Halide::Var>& vars, const std::string& name);

/// One resampled axis of prim.Resize: `cur` (Halide dims `vars`) with tensor dim `d` resampled
/// from `in` to `out` coordinates by `taps` (halide_resize.cc).
Halide::Func resize_axis(const Halide::Func& cur, const std::vector<Halide::Var>& vars, size_t d,
                         const ResizeTaps& taps, int64_t in, int64_t out, bool interpolate,
                         const std::string& name);

/// The coordinates in a tensor of shape `in` of the element at `idx` (tensor order) of its
/// reshape to `out`; dims that map one to one index directly (halide_reshape.cc).
std::vector<Halide::Expr> reshape_index(const Shape& in, const Shape& out,
                                        const std::vector<Halide::Expr>& idx);

/// tanh, sinh and cosh of an f32 Expr as vectorizable code (Halide's own call libm per
/// element), and a cheaper sigmoid; within the backend tests' tolerance of the interpreter's
/// double results.
Halide::Expr vector_sigmoid(const Halide::Expr& x);
Halide::Expr vector_tanh(const Halide::Expr& x);
Halide::Expr vector_sinh(const Halide::Expr& x);
Halide::Expr vector_cosh(const Halide::Expr& x);

/// Applies `schedule` (defaults where it is silent) to a lowered kernel.
void apply_schedule(Lowered& lowered, const Graph& kernel, const HalideSchedule& schedule);

}  // namespace orch::codegen::halide_impl
