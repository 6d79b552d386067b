// prim.Conv and prim.ConvTranspose as Halide reductions: one RDom over the kernel window
// (innermost) and the input channels of the output channel's group (outermost); padding reads
// a clamped coordinate and selects zero outside the input (along the dims where a tap can fall
// outside it).
#include "codegen/halide/halide_lower.h"
#include "ir/error.h"

namespace orch::codegen::halide_impl {
namespace {

using Halide::Expr;

struct ConvAttrs {
  std::vector<int64_t> strides, dilations, pads;
  int64_t group = 1;
};

ConvAttrs conv_attrs(const Attributes& attrs) {
  return {attr_ints(attrs, "strides"), attr_ints(attrs, "dilations"), attr_ints(attrs, "pads"),
          attr_int(attrs, "group", 1)};
}

int i32(int64_t v) {
  return static_cast<int>(v);
}

}  // namespace

ConvLowering lower_conv(const Node& n, const Halide::Func& x, const Shape& xs,
                        const Halide::Func& w, const Shape& ws, const Shape& ys,
                        const std::vector<Halide::Var>& vars, const std::string& name) {
  bool transposed = n.op == "prim.ConvTranspose";
  ConvAttrs a = conv_attrs(n.attrs);
  size_t rank = ys.size(), spatial = rank - 2;
  int64_t c_per_group = transposed ? ws[0] / a.group : ws[1];
  int64_t m_per_group = transposed ? ws[1] : ys[1] / a.group;
  // RDom dim 0 is the innermost loop: the last kernel dim, ..., the first, then the channel.
  std::vector<Halide::Range> ranges;
  for (size_t s = spatial; s-- > 0;) ranges.emplace_back(0, i32(ws[2 + s]));
  ranges.emplace_back(0, i32(c_per_group));
  Halide::RDom r(ranges, name + "_r");
  auto k = [&](size_t s) { return r[static_cast<int>(spatial - 1 - s)]; };
  Expr rc = r[static_cast<int>(spatial)];
  // Tensor-order coordinates of the output element: dim d is Halide var rank-1-d.
  auto out = [&](size_t d) -> Expr { return vars[rank - 1 - d]; };
  Expr channel = out(1) / i32(m_per_group) * i32(c_per_group) + rc;
  std::vector<Expr> xi(rank), wi(rank);
  xi[0] = out(0);
  xi[1] = channel;
  wi[0] = transposed ? channel : out(1);
  wi[1] = transposed ? out(1) % i32(m_per_group) : rc;
  Expr inside = Halide::cast<bool>(true);
  bool checked = false;  // whether `inside` tests anything
  for (size_t s = 0; s < spatial; ++s) {
    int size = i32(xs[2 + s]);
    Expr i;
    if (transposed) {
      // o = i*stride + k*dilation - pad: the input position when the division is exact.
      Expr num = out(2 + s) + i32(a.pads[s]) - k(s) * i32(a.dilations[s]);
      int stride = i32(a.strides[s]);
      i = num / stride;  // Halide's division by a positive constant floors
      if (stride > 1) {
        inside = inside && num % stride == 0;
        checked = true;
      }
    } else {
      i = out(2 + s) * i32(a.strides[s]) + k(s) * i32(a.dilations[s]) - i32(a.pads[s]);
    }
    wi[2 + s] = k(s);
    // A convolution reads inside its input along this dim when its first and last taps do: then
    // the loads need no clamp and no select (a vector of them stays one dense load).
    int64_t first = -a.pads[s];
    int64_t last = (ys[2 + s] - 1) * a.strides[s] + (ws[2 + s] - 1) * a.dilations[s] - a.pads[s];
    if (!transposed && first >= 0 && last < size) {
      xi[2 + s] = i;
      continue;
    }
    inside = inside && i >= 0 && i < size;
    checked = true;
    xi[2 + s] = Halide::clamp(i, 0, size - 1);
  }
  Expr xv = x(std::vector<Expr>(xi.rbegin(), xi.rend()));
  Expr wv = w(std::vector<Expr>(wi.rbegin(), wi.rend()));
  Expr zero = Halide::cast(xv.type(), 0);
  Halide::Func f(name);
  std::vector<Halide::Var> pure(vars.begin(), vars.begin() + static_cast<std::ptrdiff_t>(rank));
  f(pure) = zero;
  std::vector<Expr> lhs(pure.begin(), pure.end());
  Expr term = checked ? Halide::select(inside, xv, zero) : xv;
  f(lhs) = f(lhs) + term * wv;
  return {f, r};
}

}  // namespace orch::codegen::halide_impl
