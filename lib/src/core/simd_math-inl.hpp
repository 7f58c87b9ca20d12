// lib/src/core/simd_math-inl.hpp — the angle core's double-double sin/cos (trig.hpp) and the float32 settle test
// (sincos32.hpp) as Highway vector code, for the kernel files' per-target code (hwy/foreach_target.h includes this
// once per target; hence the toggled guard instead of #pragma once).
//
// Each lane performs exactly the IEEE operations of the scalar code in trig.hpp and sincos32.cpp, in the same
// order, with the same fused multiply-adds, so every target gives the scalar code's bits. That holds only where the
// target has a fused multiply-add (HWY_NATIVE_FMA): Highway emulates MulAdd by a product and a sum elsewhere, so
// the kernel files take their scalar loops on such targets.
#if defined(POSENC_CORE_SIMD_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POSENC_CORE_SIMD_MATH_INL_H_
#undef POSENC_CORE_SIMD_MATH_INL_H_
#else
#define POSENC_CORE_SIMD_MATH_INL_H_
#endif

#include <hwy/highway.h>

#include "trig.hpp"

HWY_BEFORE_NAMESPACE();
namespace posenc::core::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef POSENC_SIMD_VECTOR  // decided anew for each target
#if HWY_NATIVE_FMA && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
#define POSENC_SIMD_VECTOR 1  // this target's kernels are vector code; else their callers run the portable loops
#endif

#ifdef POSENC_SIMD_VECTOR
using DF64 = hn::ScalableTag<double>;
using VF64 = hn::Vec<DF64>;

// two_prod, two_sum and fast_two_sum of trig.hpp: (hi, lo) through references (SVE's sizeless vectors cannot be
// struct members); the inputs are values, so an output may be an input's variable.
HWY_INLINE void TwoProd(VF64 a, VF64 b, VF64& hi, VF64& lo) {
  hi = hn::Mul(a, b);
  lo = hn::MulSub(a, b, hi);  // fma(a, b, -p)
}
HWY_INLINE void TwoSum(VF64 a, VF64 b, VF64& hi, VF64& lo) {
  const VF64 s = hn::Add(a, b);
  const VF64 bb = hn::Sub(s, a);
  hi = s;
  lo = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
}
HWY_INLINE void FastTwoSum(VF64 a, VF64 b, VF64& hi, VF64& lo) {
  const VF64 s = hn::Add(a, b);
  hi = s;
  lo = hn::Sub(b, hn::Sub(s, a));
}

// scaled_angle(p, hi, lo) of trig.hpp.
HWY_INLINE void ScaledAngle(VF64 p, VF64 hi, VF64 lo, VF64& out_hi, VF64& out_lo) {
  VF64 t_hi, t_lo;
  TwoProd(p, hi, t_hi, t_lo);
  FastTwoSum(t_hi, hn::Add(t_lo, hn::Mul(p, lo)), out_hi, out_lo);  // t.lo + RN(p lo): two roundings, as lib/ does
}

// sincos_dd(theta_hi, theta_lo) of trig.hpp, lane by lane. The quadrant n mod 4 is read from the low bits of
// `shifted` (= 1.5 * 2^52 + n, whose last mantissa bits are n's two's complement): the same value as the scalar
// code's static_cast<int64_t>(n) & 3, without a conversion that AVX2 does not have.
HWY_INLINE void SinCosDD(VF64 th, VF64 tl, VF64& s_out, VF64& c_out) {
  const DF64 d;
  const hn::RebindToUnsigned<DF64> du;
  const VF64 shifted = hn::MulAdd(th, hn::Set(d, kTwoOverPi), hn::Set(d, kRoundMagic));
  const VF64 n = hn::Sub(shifted, hn::Set(d, kRoundMagic));
  const auto q = hn::And(hn::BitCast(du, shifted), hn::Set(du, 3));

  VF64 np1_hi, np1_lo, np2_hi, np2_lo, s0_hi, s0_lo, x, r_lo;
  TwoProd(n, hn::Set(d, kPio2_1), np1_hi, np1_lo);
  TwoProd(n, hn::Set(d, kPio2_2), np2_hi, np2_lo);
  const VF64 r0 = hn::Sub(th, np1_hi);
  TwoSum(r0, hn::Neg(np2_hi), s0_hi, s0_lo);
  const VF64 small = hn::Sub(hn::Sub(hn::Sub(tl, np1_lo), np2_lo), hn::Mul(n, hn::Set(d, kPio2_3)));
  FastTwoSum(s0_hi, hn::Add(s0_lo, small), x, r_lo);

  const VF64 x2 = hn::Mul(x, x);
  VF64 ps = hn::Set(d, kS[7]);
  for (int i = 6; i >= 0; --i) ps = hn::MulAdd(ps, x2, hn::Set(d, kS[i]));
  VF64 pc = hn::Set(d, kC[7]);
  for (int i = 6; i >= 0; --i) pc = hn::MulAdd(pc, x2, hn::Set(d, kC[i]));

  const VF64 hz = hn::Mul(hn::Set(d, 0.5), x2);
  const VF64 w = hn::Sub(hn::Set(d, 1.0), hz);
  const VF64 s = hn::Add(x, hn::MulAdd(hn::Mul(x, x2), ps, hn::Mul(r_lo, w)));
  const VF64 c = hn::Add(w, hn::MulAdd(hn::Mul(x2, x2), pc,
                                       hn::Sub(hn::Sub(hn::Sub(hn::Set(d, 1.0), w), hz), hn::Mul(r_lo, x))));

  const auto one = hn::Set(du, 1), two = hn::Set(du, 2);
  const auto swap = hn::RebindMask(d, hn::Eq(hn::And(q, one), one));
  const auto neg_s = hn::RebindMask(d, hn::Eq(hn::And(q, two), two));
  const auto neg_c = hn::RebindMask(d, hn::Eq(hn::And(hn::Add(q, one), two), two));
  const VF64 sin_mag = hn::IfThenElse(swap, c, s), cos_mag = hn::IfThenElse(swap, s, c);
  s_out = hn::IfThenElse(neg_s, hn::Neg(sin_mag), sin_mag);
  c_out = hn::IfThenElse(neg_c, hn::Neg(cos_mag), cos_mag);
}

// The settle test of sincos32.cpp for one vector: v (the double value, within `win` of exact) becomes the float it
// settles to (as a double), or `tiny_value` where the angle's magnitude is below 2^-12; returns the lanes that
// settled or are tiny. a: the float32 angles as doubles.
HWY_INLINE hn::Mask<DF64> Settle(VF64& v, VF64 a, VF64 tiny_value, double win) {
  const DF64 d;
  const hn::Rebind<float, DF64> df;
  const VF64 wv = hn::Set(d, win);
  // Equal floats iff equal once widened back (exactly): the test in the double lanes.
  const auto ok = hn::Eq(hn::PromoteTo(d, hn::DemoteTo(df, hn::Sub(v, wv))), hn::PromoteTo(d, hn::DemoteTo(df, hn::Add(v, wv))));
  const auto tiny = hn::Lt(hn::Abs(a), hn::Set(d, 0x1p-12));
  v = hn::IfThenElse(tiny, tiny_value, hn::PromoteTo(d, hn::DemoteTo(df, v)));
  return hn::Or(ok, tiny);
}
#endif  // POSENC_SIMD_VECTOR

}  // namespace posenc::core::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
