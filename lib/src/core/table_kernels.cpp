// lib/src/core/table_kernels.cpp — the table writer's fused pass (table_kernels.hpp) as Highway vector code, compiled
// for every target (hwy/foreach_target.h re-includes this file) with posenc_kernels' baseline flags.
//
// Per step (a whole vector of output values: 2N pairs for float from two vectors of N doubles, N pairs for double)
// each lane performs fused_scalar's operations: s = fma(s_a, c_j, c_a s_j), c = fma(c_a, c_j, -(s_a s_j)) (MulAdd,
// MulSub), clamped to [-1, 1] (double, or any scaled form) and times the scale, the sine's sign flipped
// (RowForm::negate_sin, an exclusive or with -0.0), rounded once to T. The destinations' parts are template arguments
// for the forms posenc uses (a runtime switch per store halved the DRAM throughput of the hand-written AVX-512
// kernel this replaces), with a runtime-dispatched body for any other form. A row's last partial step runs on copies padded with
// zeros and is copied out value by value.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/table_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "simd.hpp"
#include "simd_math-inl.hpp"
#include "table_kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace posenc::core::HWY_NAMESPACE {

#ifdef POSENC_SIMD_VECTOR

// The output type's vectors: DT holds one step (float: twice the pairs of a double vector).
template <class T>
using DT = hn::Repartition<T, DF64>;

// A clamp to [-1, 1] as std::clamp does it for every non-NaN value (the values are never NaN).
HWY_INLINE VF64 Clamp1(VF64 v) {
  const DF64 d;
  return hn::Max(hn::Min(v, hn::Set(d, 1.0)), hn::Set(d, -1.0));
}

// The values (s, c) of N pairs at k: anchor (x) J, clamped and scaled as fused_scalar does for T.
template <class T, bool Scaled>
HWY_INLINE void Rot(const double* sa, const double* ca, const double* sj, const double* cj, VF64 m, VF64 neg, VF64& s,
                    VF64& c) {
  const DF64 d;
  const VF64 a_s = hn::LoadU(d, sa), a_c = hn::LoadU(d, ca), j_s = hn::LoadU(d, sj), j_c = hn::LoadU(d, cj);
  s = hn::MulAdd(a_s, j_c, hn::Mul(a_c, j_s));
  c = hn::MulSub(a_c, j_c, hn::Mul(a_s, j_s));
  if constexpr (Scaled) {
    s = hn::Mul(Clamp1(s), m), c = hn::Mul(Clamp1(c), m);
  } else if constexpr (sizeof(T) == 8) {
    s = Clamp1(s), c = Clamp1(c);
  }
  s = hn::Xor(s, neg);
}

// One step's values, handed to f (SVE's sizeless vectors cannot be struct members): float, four vectors of N floats
// (pairs k .. k + N - 1 and k + N .. k + 2N - 1: f(s0, c0, s1, c1)); double, f(s, c) of N pairs.
using VH = hn::Vec<hn::Rebind<float, DF64>>;
template <class T, bool Scaled, class F>
HWY_INLINE void WithStep(const double* sa, const double* ca, const double* sj, const double* cj, VF64 m, VF64 neg,
                         F&& f) {
  if constexpr (sizeof(T) == 4) {
    const hn::Rebind<float, DF64> dh;
    const std::size_t N = hn::Lanes(DF64());
    VF64 s0, c0, s1, c1;
    Rot<float, Scaled>(sa, ca, sj, cj, m, neg, s0, c0);
    Rot<float, Scaled>(sa + N, ca + N, sj + N, cj + N, m, neg, s1, c1);
    f(hn::DemoteTo(dh, s0), hn::DemoteTo(dh, c0), hn::DemoteTo(dh, s1), hn::DemoteTo(dh, c1));
  } else {
    VF64 s, c;
    Rot<double, Scaled>(sa, ca, sj, cj, m, neg, s, c);
    f(s, c);
  }
}

// The lines of a step: float sines [s0 | s1], cosines [c0 | c1], and the pairs (a_k, b_k) of N floats as one
// vector [a_0, b_0, a_1, b_1, ...]: each pair is one 64-bit lane, a in its low half (memory order on these
// little-endian targets), so no shuffle across blocks is needed.
HWY_INLINE hn::Vec<DT<float>> Line(VH lo, VH hi) { return hn::Combine(DT<float>(), hi, lo); }
HWY_INLINE hn::Vec<DT<float>> PairLine(VH a, VH b) {
  const hn::RebindToUnsigned<DF64> du64;
  const hn::Rebind<std::uint32_t, DF64> du32;
  const auto lo = hn::PromoteTo(du64, hn::BitCast(du32, a));
  const auto hi = hn::ShiftLeft<32>(hn::PromoteTo(du64, hn::BitCast(du32, b)));
  return hn::BitCast(DT<float>(), hn::Or(lo, hi));
}

// Stores one whole step of part `part` at p (the chunk row's pair 0), first pair k; Stream: non-temporal stores of
// aligned vectors.
template <bool Stream, class T, class V>
HWY_INLINE void Put(V v, T* at) {
  if constexpr (Stream) hn::Stream(v, DT<T>(), at);
  else hn::StoreU(v, DT<T>(), at);
}
template <bool Stream>
HWY_INLINE void StoreStep(Part part, float* p, std::size_t k, VH s0, VH c0, VH s1, VH c1) {
  const std::size_t L = hn::Lanes(DT<float>());
  switch (part) {
    case Part::sin: Put<Stream>(Line(s0, s1), p + k); break;
    case Part::cos: Put<Stream>(Line(c0, c1), p + k); break;
    case Part::sin_cos:
      Put<Stream>(PairLine(s0, c0), p + 2 * k);
      Put<Stream>(PairLine(s1, c1), p + 2 * k + L);
      break;
    case Part::cos_sin:
      Put<Stream>(PairLine(c0, s0), p + 2 * k);
      Put<Stream>(PairLine(c1, s1), p + 2 * k + L);
      break;
  }
}
template <bool Stream>
HWY_INLINE void StoreStep(Part part, double* p, std::size_t k, VF64 s, VF64 c) {
  const DF64 d;
  const std::size_t L = hn::Lanes(d);
  switch (part) {
    case Part::sin: Put<Stream>(s, p + k); break;
    case Part::cos: Put<Stream>(c, p + k); break;
    case Part::sin_cos:
    case Part::cos_sin: {
      const VF64 a = part == Part::sin_cos ? s : c, b = part == Part::sin_cos ? c : s;
      if constexpr (Stream) {  // put together in L1, then streamed
        HWY_ALIGN double buf[2 * HWY_MAX_BYTES / sizeof(double)];
        hn::StoreInterleaved2(a, b, d, buf);
        Put<Stream>(hn::Load(d, buf), p + 2 * k);
        Put<Stream>(hn::Load(d, buf + L), p + 2 * k + L);
      } else {
        hn::StoreInterleaved2(a, b, d, p + 2 * k);
      }
      break;
    }
  }
}
// A step's sine and cosine lines, stored whole at s and c (aligned).
template <class T>
struct SinCosLines {
  T *s, *c;
  HWY_INLINE void operator()(VH s0, VH c0, VH s1, VH c1) const {
    hn::Store(Line(s0, s1), DT<float>(), s), hn::Store(Line(c0, c1), DT<float>(), c);
  }
  HWY_INLINE void operator()(VF64 sv, VF64 cv) const { hn::Store(sv, DF64(), s), hn::Store(cv, DF64(), c); }
};

// The last r pairs of a chunk row (r < a step): the step on zero-padded copies, copied out value by value.
template <bool Scaled, class T>
void TailStep(const double* sa, const double* ca, const double* sj, const double* cj, std::size_t k, std::size_t r,
              VF64 m, VF64 neg, const std::array<T*, 4>& p, const std::array<Dest<T>, 4>& dest, std::size_t nd) {
  constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);
  HWY_ALIGN double a_s[kMax] = {}, a_c[kMax] = {}, j_s[kMax] = {}, j_c[kMax] = {};
  std::copy_n(sa + k, r, a_s), std::copy_n(ca + k, r, a_c), std::copy_n(sj + k, r, j_s), std::copy_n(cj + k, r, j_c);
  HWY_ALIGN T s[kMax], c[kMax];
  WithStep<T, Scaled>(a_s, a_c, j_s, j_c, m, neg, SinCosLines<T>{s, c});
  for (std::size_t i = 0; i < nd; ++i) {
    T* q = p[i];
    switch (dest[i].part) {
      case Part::sin: std::copy_n(s, r, q + k); break;
      case Part::cos: std::copy_n(c, r, q + k); break;
      case Part::sin_cos: for (std::size_t x = 0; x < r; ++x) q[2 * (k + x)] = s[x], q[2 * (k + x) + 1] = c[x]; break;
      case Part::cos_sin: for (std::size_t x = 0; x < r; ++x) q[2 * (k + x)] = c[x], q[2 * (k + x) + 1] = s[x]; break;
    }
  }
}

// The parts of the destinations: fixed at compile time (Fixed...) or read at run time (none given).
template <bool Stream, bool Scaled, Part... Fixed, class T>
void FusedParts(const Tile<T>& t) {
  const DT<T> d;
  const DF64 d64;
  const std::size_t S = hn::Lanes(d);  // pairs per step
  // Locals, not t's fields: the stores through T* could alias t as far as the compiler knows.
  const std::size_t n = t.n, nd = t.nd, groups = t.groups, astride = t.anchor_stride;
  const std::ptrdiff_t group_rows = t.group_rows;
  const std::array<Dest<T>, 4> dest = t.dest;
  const VF64 m = hn::Set(d64, t.scale), neg = hn::Set(d64, t.negate_sin ? -0.0 : 0.0);
  for (std::size_t row = 0; row < t.rows; ++row)
    for (std::size_t g = 0; g < groups; ++g) {
      const double* sj = t.j + row * 2 * AngleTable::kChunk;
      const double* cj = sj + AngleTable::kChunk;
      const double *const sa = t.sa + g * astride, *const ca = t.ca + g * astride;
      const std::ptrdiff_t out_row = static_cast<std::ptrdiff_t>(row) + static_cast<std::ptrdiff_t>(g) * group_rows;
      std::array<T*, 4> p;
      for (std::size_t i = 0; i < nd; ++i) p[i] = dest[i].p + out_row * dest[i].stride;
      std::size_t k = 0;
      for (; k + S <= n; k += S) {
        WithStep<T, Scaled>(sa + k, ca + k, sj + k, cj + k, m, neg, [&](auto... v) {
          if constexpr (sizeof...(Fixed) > 0) {
            std::size_t i = 0;
            ((StoreStep<Stream>(Fixed, p[i], k, v...), ++i), ...);
          } else {
            for (std::size_t i = 0; i < nd; ++i) StoreStep<Stream>(dest[i].part, p[i], k, v...);
          }
        });
      }
      if (k < n) TailStep<Scaled>(sa, ca, sj, cj, k, n - k, m, neg, p, dest, nd);
    }
}

template <bool Stream, bool Scaled, class T>
void FusedForms(const Tile<T>& t) {
  auto is = [&](std::initializer_list<Part> parts) {
    if (parts.size() != t.nd) return false;
    std::size_t i = 0;
    for (Part p : parts)
      if (t.dest[i++].part != p) return false;
    return true;
  };
  using P = Part;
  if (is({P::sin_cos})) return FusedParts<Stream, Scaled, P::sin_cos>(t);          // sinusoidal interleaved
  if (is({P::cos_sin})) return FusedParts<Stream, Scaled, P::cos_sin>(t);          // ggml
  if (is({P::sin, P::cos})) return FusedParts<Stream, Scaled, P::sin, P::cos>(t);  // sinusoidal halves, gptj
  if (is({P::cos, P::sin})) return FusedParts<Stream, Scaled, P::cos, P::sin>(t);  // rope pairs
  if (is({P::cos, P::cos, P::sin, P::sin})) return FusedParts<Stream, Scaled, P::cos, P::cos, P::sin, P::sin>(t);  // hf
  FusedParts<Stream, Scaled>(t);
}

template <class T>
bool FusedT(const Tile<T>& t, bool stream) {
  if (stream && hn::Lanes(DT<T>()) * sizeof(T) > 64) return false;  // a vector wider than the lines guaranteed
  const bool scaled = t.scale != 1.0;  // unscaled tables keep the loop without the clamp and product
  if (stream) scaled ? FusedForms<true, true>(t) : FusedForms<true, false>(t);
  else scaled ? FusedForms<false, true>(t) : FusedForms<false, false>(t);
  return true;
}
bool FusedF32(const Tile<float>& t, bool stream) { return FusedT(t, stream); }
bool FusedF64(const Tile<double>& t, bool stream) { return FusedT(t, stream); }

#else  // a target without vector kernels: table_writer.cpp's fused_scalar runs instead

bool FusedF32(const Tile<float>&, bool) { return false; }
bool FusedF64(const Tile<double>&, bool) { return false; }

#endif  // POSENC_SIMD_VECTOR

}  // namespace posenc::core::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc::core {
HWY_EXPORT(FusedF32);
HWY_EXPORT(FusedF64);

namespace kernels {
bool fused(const Tile<float>& t, bool stream) noexcept { return POSENC_DISPATCH(FusedF32)(t, stream); }
bool fused(const Tile<double>& t, bool stream) noexcept { return POSENC_DISPATCH(FusedF64)(t, stream); }
}  // namespace kernels
}  // namespace posenc::core
#endif  // HWY_ONCE
