// Transcendental functions that Halide 14 lowers to one libm call per element on x86 (tanhf,
// sinhf, coshf: scalar, 20-30 ns per element here, against 0.9 ns for Halide's own vectorized exp),
// written with Halide's exp and polynomials so that they vectorize. They dominated every Mish
// (x * tanh(softplus(x))) in YOLOv4: a tanh over 1x64x208x208 took 73 ms on one thread.
// The sigmoid is here for speed alone: every SiLU (YOLOX, EfficientViT) runs one.
#include "codegen/halide/halide_lower.h"

namespace orch::codegen::halide_impl {

using Halide::Expr;

namespace {

// Halide's exp is not NaN for NaN: the callers select NaN themselves.
// e^x / 2 as e^(x - ln 2): finite up to the x where sinh and cosh themselves overflow (e^x alone
// overflows from 88.7, sinh and cosh from 89.4).
Expr half_exp(const Expr& x) {
  return Halide::exp(x - 0.693147180559945f);
}

// e^x for x within [-87, 87] (no overflow, no denormal): Cody-Waite reduction x = n ln2 + r,
// Cephes expf's polynomial on r (relative error about 2e-7), 2^n written into the exponent bits.
// Halide's exp also handles the overflow and NaN that its callers here exclude; this is 15-20%
// cheaper per element. n is rounded by adding 1.5 * 2^23 (the float's low bits are then n):
// Halide 14 floors a 16-lane vector as two 8-lane halves and converts it back separately, and
// the sum gives n and 2^n's exponent bits with one add; a SiLU over 1x64x104x104 took 250 us on
// one thread with the floor, 230 with the sum (AMD EPYC, AVX-512).
Expr bounded_exp(const Expr& x) {
  // 1.5 * 2^23 and its bits: below 2^22 in magnitude, n + 1.5 * 2^23 is exact and its low
  // mantissa bits are n.
  constexpr float kRounder = 12582912.0f;
  constexpr int kRounderBits = 0x4B400000;
  Expr bits = Halide::reinterpret(Halide::UInt(32), x * 1.44269504088896341f + kRounder);
  Expr n = Halide::cast<float>(
      Halide::reinterpret(Halide::Int(32), bits - Halide::cast<uint32_t>(kRounderBits)));
  Expr r = x - n * 0.693359375f + n * 2.12194440e-4f;
  Expr p =
      ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) *
           r +
       1.6666665459e-1f) *
          r +
      5.0000001201e-1f;
  Expr two_n = Halide::reinterpret(Halide::Float(32),
                                   (bits - Halide::cast<uint32_t>(kRounderBits - 127)) << 23);
  return (p * r * r + r + 1.0f) * two_n;
}

}  // namespace

Expr vector_sigmoid(const Expr& x) {
  // Beyond |x| = 87 the sigmoid is 0 or 1 to well within f32's tolerance of the interpreter
  // (e^-87 is 1.6e-38); the clamp keeps bounded_exp in range. NaN stays NaN.
  Expr e = bounded_exp(Halide::clamp(-x, -87.0f, 87.0f));
  return Halide::select(Halide::is_nan(x), x, 1.0f / (1.0f + e));
}

Expr vector_tanh(const Expr& x) {
  Expr ax = Halide::abs(x);
  // |x| < 0.625: tanh(x) = x + x^3 P(x^2), the minimax polynomial of Cephes' tanhf (relative
  // error below 2e-7 there), where 1 - 2 / (e^2x + 1) would cancel.
  Expr s = x * x;
  Expr p = ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s +
             1.33314422036e-1f) *
                s -
            3.33332819422e-1f);
  Expr small = x + x * s * p;
  // Beyond: e^2|x| clamped below f32 overflow (tanh is 1 to f32 precision from |x| > 9).
  Expr large = 1.0f - 2.0f / (Halide::exp(Halide::min(2.0f * ax, 88.0f)) + 1.0f);
  large = Halide::select(x < 0.0f, -large, large);
  return Halide::select(ax < 0.625f, small, Halide::is_nan(x), x, large);
}

Expr vector_sinh(const Expr& x) {
  // |x| < 0.5: the Taylor series to x^7 (the next term is below 1e-8 relative), where
  // (e^x - e^-x) / 2 would cancel.
  Expr s = x * x;
  Expr small = x * (1.0f + s * (1.0f / 6 + s * (1.0f / 120 + s * (1.0f / 5040))));
  Expr e = half_exp(Halide::abs(x));
  Expr large = e - 0.25f / e;
  large = Halide::select(x < 0.0f, -large, large);
  return Halide::select(Halide::abs(x) < 0.5f, small, Halide::is_nan(x), x, large);
}

Expr vector_cosh(const Expr& x) {
  Expr e = half_exp(Halide::abs(x));
  return Halide::select(Halide::is_nan(x), x, e + 0.25f / e);
}

}  // namespace orch::codegen::halide_impl
