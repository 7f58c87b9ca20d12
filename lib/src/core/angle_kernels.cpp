// lib/src/core/angle_kernels.cpp — the angle core's vector kernels (angle_kernels.hpp), compiled for every target by
// Highway (hwy/foreach_target.h re-includes this file once per target) with the baseline flags of posenc_kernels
// (lib/CMakeLists.txt), and dispatched to posenc's target (simd.hpp).
//
// Tails: a call's last partial vector runs the same vector code on copies padded with zeros (angle 0, whose lanes
// settle and are then dropped), never masked loads or stores (on some targets those touch the whole vector's memory).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/angle_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstring>

#include "angle_kernels.hpp"
#include "simd.hpp"
#include "simd_math-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace posenc::core::HWY_NAMESPACE {

constexpr std::size_t kMaxLanes = HWY_MAX_BYTES / sizeof(double);

// A tail's inputs and outputs, zero-padded to a whole vector.
template <class T>
struct Padded {
  HWY_ALIGN T v[kMaxLanes] = {};
};

#ifdef POSENC_SIMD_VECTOR

bool Direct(double p, const double* hi, const double* lo, std::size_t n, double* s, double* c) {
  const DF64 d;
  const std::size_t N = hn::Lanes(d);
  const VF64 pv = hn::Set(d, p);
  auto one = [&](const double* h, const double* l, double* so, double* co) {
    VF64 t_hi, t_lo, sv, cv;
    ScaledAngle(pv, hn::LoadU(d, h), hn::LoadU(d, l), t_hi, t_lo);
    SinCosDD(t_hi, t_lo, sv, cv);
    hn::StoreU(sv, d, so);
    hn::StoreU(cv, d, co);
  };
  std::size_t k = 0;
  for (; k + N <= n; k += N) one(hi + k, lo + k, s + k, c + k);
  if (k < n) {
    const std::size_t r = n - k;
    Padded<double> h, l, so, co;
    std::copy_n(hi + k, r, h.v), std::copy_n(lo + k, r, l.v);
    one(h.v, l.v, so.v, co.v);
    std::copy_n(so.v, r, s + k), std::copy_n(co.v, r, c + k);
  }
  return true;
}

bool Rotate(const double* sa, const double* ca, const double* sj, const double* cj, std::size_t n, double* s,
            double* c) {
  const DF64 d;
  const std::size_t N = hn::Lanes(d);
  const VF64 one = hn::Set(d, 1.0), minus_one = hn::Set(d, -1.0);
  auto step = [&](const double* as, const double* ac, const double* js, const double* jc, double* so, double* co) {
    const VF64 a_s = hn::LoadU(d, as), a_c = hn::LoadU(d, ac), j_s = hn::LoadU(d, js), j_c = hn::LoadU(d, jc);
    // std::clamp(v, -1, 1) for every non-NaN v (the values are never NaN)
    hn::StoreU(hn::Max(hn::Min(hn::MulAdd(a_s, j_c, hn::Mul(a_c, j_s)), one), minus_one), d, so);
    hn::StoreU(hn::Max(hn::Min(hn::MulSub(a_c, j_c, hn::Mul(a_s, j_s)), one), minus_one), d, co);
  };
  std::size_t k = 0;
  for (; k + N <= n; k += N) step(sa + k, ca + k, sj + k, cj + k, s + k, c + k);
  if (k < n) {
    const std::size_t r = n - k;
    Padded<double> as, ac, js, jc, so, co;
    std::copy_n(sa + k, r, as.v), std::copy_n(ca + k, r, ac.v), std::copy_n(sj + k, r, js.v);
    std::copy_n(cj + k, r, jc.v);
    step(as.v, ac.v, js.v, jc.v, so.v, co.v);
    std::copy_n(so.v, r, s + k), std::copy_n(co.v, r, c + k);
  }
  return true;
}

bool SinCosSettled(const float* angle, std::size_t n, double* s, double* c) {
  const DF64 d;
  const hn::Rebind<float, DF64> df;
  const std::size_t N = hn::Lanes(d);
  auto ok = hn::FirstN(d, N);
  auto one = [&](const float* a32, double* so, double* co) {
    const VF64 a = hn::PromoteTo(d, hn::LoadU(df, a32));
    VF64 sv, cv;
    SinCosDD(a, hn::Zero(d), sv, cv);
    ok = hn::And(ok, Settle(sv, a, a, 0x1p-52));  // 2^-52 > 2^-53 + 2^-58, sincos_dd's bound (trig.hpp)
    ok = hn::And(ok, Settle(cv, a, hn::Set(d, 1.0), 0x1p-52));
    hn::StoreU(sv, d, so);
    hn::StoreU(cv, d, co);
  };
  std::size_t k = 0;
  for (; k + N <= n; k += N) one(angle + k, s + k, c + k);
  if (k < n) {
    const std::size_t r = n - k;
    Padded<float> a;
    Padded<double> so, co;
    std::copy_n(angle + k, r, a.v);
    one(a.v, so.v, co.v);
    std::copy_n(so.v, r, s + k), std::copy_n(co.v, r, c + k);
  }
  return hn::AllTrue(d, ok);
}

template <bool Short>
bool ProductSettledT(float pf, const float* w, const double* sa, const double* ca, const double* sj, const double* cj,
                     std::size_t n, double* s, double* c) {
  const DF64 d;
  const hn::Rebind<float, DF64> df;
  const std::size_t N = hn::Lanes(d);
  const VF64 pd = hn::Set(d, static_cast<double>(pf)), half = hn::Set(d, -0.5);
  const auto pf32 = hn::Set(df, pf);
  auto ok = hn::FirstN(d, N);
  auto one = [&](const float* wk, const double* as, const double* ac, const double* js, const double* jc, double* so,
                 double* co) {
    const VF64 a_s = hn::LoadU(d, as), a_c = hn::LoadU(d, ac), j_s = hn::LoadU(d, js), j_c = hn::LoadU(d, jc);
    const VF64 S = hn::MulAdd(a_s, j_c, hn::Mul(a_c, j_s));
    const VF64 C = hn::MulSub(a_c, j_c, hn::Mul(a_s, j_s));
    const auto w32 = hn::LoadU(df, wk);
    const VF64 a = hn::PromoteTo(d, hn::Mul(pf32, w32));
    const VF64 dd = hn::Sub(a, hn::Mul(pd, hn::PromoteTo(d, w32)));
    const VF64 d2 = hn::Mul(dd, dd);
    VF64 ps, pc;
    if constexpr (Short) {
      ps = hn::MulAdd(hn::Set(d, kS[1]), d2, hn::Set(d, kS[0]));
      pc = hn::MulAdd(hn::Set(d, kC[1]), d2, hn::Set(d, kC[0]));
    } else {
      ps = hn::Set(d, kS[4]);
      for (int i = 3; i >= 0; --i) ps = hn::MulAdd(ps, d2, hn::Set(d, kS[i]));
      pc = hn::Set(d, kC[3]);
      for (int i = 2; i >= 0; --i) pc = hn::MulAdd(pc, d2, hn::Set(d, kC[i]));
    }
    const VF64 sd = hn::MulAdd(hn::Mul(dd, d2), ps, dd);
    const VF64 cm1 = hn::MulAdd(hn::Mul(d2, d2), pc, hn::Mul(half, d2));
    VF64 sv = hn::Add(S, hn::MulAdd(S, cm1, hn::Mul(C, sd)));
    VF64 cv = hn::Add(C, hn::MulSub(C, cm1, hn::Mul(S, sd)));
    ok = hn::And(ok, Settle(sv, a, a, 0x1p-50));  // 2^-50 > 5.8 * 2^-53, the product path's bound (sincos32.hpp)
    ok = hn::And(ok, Settle(cv, a, hn::Set(d, 1.0), 0x1p-50));
    hn::StoreU(sv, d, so);
    hn::StoreU(cv, d, co);
  };
  std::size_t k = 0;
  for (; k + N <= n; k += N) one(w + k, sa + k, ca + k, sj + k, cj + k, s + k, c + k);
  if (k < n) {
    const std::size_t r = n - k;
    Padded<float> wk;
    Padded<double> as, ac, js, jc, so, co;
    std::copy_n(w + k, r, wk.v), std::copy_n(sa + k, r, as.v), std::copy_n(ca + k, r, ac.v);
    std::copy_n(sj + k, r, js.v), std::copy_n(cj + k, r, jc.v);
    one(wk.v, as.v, ac.v, js.v, jc.v, so.v, co.v);
    std::copy_n(so.v, r, s + k), std::copy_n(co.v, r, c + k);
  }
  return hn::AllTrue(d, ok);
}

bool ProductSettled(bool short_d, float pf, const float* w, const double* sa, const double* ca, const double* sj,
                    const double* cj, std::size_t n, double* s, double* c) {
  return short_d ? ProductSettledT<true>(pf, w, sa, ca, sj, cj, n, s, c)
                 : ProductSettledT<false>(pf, w, sa, ca, sj, cj, n, s, c);
}

#else  // a target without vector kernels: the callers' portable loops run instead

bool Direct(double, const double*, const double*, std::size_t, double*, double*) { return false; }
bool Rotate(const double*, const double*, const double*, const double*, std::size_t, double*, double*) {
  return false;
}
bool SinCosSettled(const float*, std::size_t, double*, double*) { return false; }
bool ProductSettled(bool, float, const float*, const double*, const double*, const double*, const double*, std::size_t,
                    double*, double*) {
  return false;
}

#endif  // POSENC_SIMD_VECTOR

}  // namespace posenc::core::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc::core {
HWY_EXPORT(Direct);
HWY_EXPORT(Rotate);
HWY_EXPORT(SinCosSettled);
HWY_EXPORT(ProductSettled);

namespace kernels {

bool direct(double p, const double* hi, const double* lo, std::size_t n, double* s, double* c) noexcept {
  return POSENC_DISPATCH(Direct)(p, hi, lo, n, s, c);
}
bool rotate(const double* sa, const double* ca, const double* sj, const double* cj, std::size_t n, double* s,
            double* c) noexcept {
  return POSENC_DISPATCH(Rotate)(sa, ca, sj, cj, n, s, c);
}
bool sincos_settled(const float* angle, std::size_t n, double* s, double* c) noexcept {
  return POSENC_DISPATCH(SinCosSettled)(angle, n, s, c);
}
bool product_settled(bool short_d, float pf, const float* w, const double* sa, const double* ca, const double* sj,
                     const double* cj, std::size_t n, double* s, double* c) noexcept {
  return POSENC_DISPATCH(ProductSettled)(short_d, pf, w, sa, ca, sj, cj, n, s, c);
}

}  // namespace kernels
}  // namespace posenc::core
#endif  // HWY_ONCE
