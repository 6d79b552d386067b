// prim.Resize as one weighted gather stage per resampled axis. An axis whose taps repeat with
// the ratio of its sizes (integer up- and downsampling) indexes with affine arithmetic and picks
// its weights by the coordinate's phase; any other reads the tap tables. Through the tables,
// every tap is a vector gather: Segformer-B0's decode head spends about a tenth of its time in
// its bilinear upsamplings so.
#include "codegen/halide/halide_lower.h"
#include "codegen/resize_taps.h"

namespace orch::codegen::halide_impl {
namespace {

using Halide::Expr;

int i32(int64_t v) {
  return static_cast<int>(v);
}

// Tap k's input coordinate for output coordinate x: the table's entry, clamped into the band
// around x * in / out that the table's entries lie in. The band changes no value; it lets
// bounds inference map a tile of the output to the rows it reads (a table lookup alone
// bounds it by the whole dim).
Expr table_index(const Halide::Buffer<int32_t>& table, Expr x, const ResizeTaps& t, int k,
                 int64_t in, int64_t out) {
  int64_t below = 0, above = 0;
  for (int64_t o = 0; o < out; ++o) {
    int64_t base = o * in / out;
    int64_t i = std::clamp<int64_t>(t.index[o * t.taps + k], 0, in - 1);
    below = std::max(below, base - i);
    above = std::max(above, i - base);
  }
  Expr base = x * i32(in) / i32(out);
  return Halide::clamp(table(k, x), Halide::max(base - i32(below), 0),
                       Halide::min(base + i32(above), i32(in) - 1));
}

// Tap k's input coordinate for output coordinate x, affine between the clamps.
Expr periodic_index(const PeriodicTaps& p, int k, Expr x, int64_t in) {
  Expr i = i32(p.step) * ((x + i32(p.shift[k])) / i32(p.period)) + i32(p.base[k]);
  return Halide::clamp(i, 0, i32(in) - 1);
}

// Tap k's weight at x, one of `period` values by x's phase.
Expr phase_weight(const PeriodicTaps& p, int k, Expr x) {
  const float* w = &p.weight[static_cast<size_t>(k * p.period)];
  Expr phase = x % i32(p.period);
  Expr result = w[p.period - 1];
  for (int64_t r = p.period - 1; r-- > 0;)
    if (w[r] != w[p.period - 1]) result = Halide::select(phase == i32(r), w[r], result);
  return result;
}

}  // namespace

Halide::Func resize_axis(const Halide::Func& cur, const std::vector<Halide::Var>& vars, size_t d,
                         const ResizeTaps& t, int64_t in, int64_t out, bool interpolate,
                         const std::string& name) {
  size_t rank = vars.size();
  Halide::Var x = vars[rank - 1 - d];
  std::optional<PeriodicTaps> periodic = periodic_taps(t, in, out, kMaxResizePeriod);
  // The tables, for an axis without the periodic form only.
  Halide::Buffer<int32_t> ib;
  Halide::Buffer<float> wb;
  if (!periodic) {
    ib = Halide::Buffer<int32_t>(i32(t.taps), i32(out));
    wb = Halide::Buffer<float>(i32(t.taps), i32(out));
    std::copy(t.index.begin(), t.index.end(), ib.data());
    std::copy(t.weight.begin(), t.weight.end(), wb.data());
  }
  Expr sum;
  for (int k = 0; k < i32(t.taps); ++k) {
    std::vector<Expr> at(vars.begin(), vars.end());
    at[rank - 1 - d] =
        periodic ? periodic_index(*periodic, k, x, in) : table_index(ib, x, t, k, in, out);
    Expr v = cur(at);
    if (!interpolate) {
      sum = v;
      break;
    }
    Expr w = periodic ? phase_weight(*periodic, k, x) : wb(k, x);
    Expr term = v * Halide::cast(v.type(), w);
    sum = sum.defined() ? sum + term : term;
  }
  Halide::Func stage(name);
  stage(vars) = sum;
  return stage;
}

}  // namespace orch::codegen::halide_impl
