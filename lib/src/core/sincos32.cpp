#include "sincos32.hpp"

#include <quadmath.h>

#include <algorithm>
#include <cmath>

#include "cpu.hpp"
#include "trig.hpp"
#ifdef POSENC_HAVE_AVX512_VARIANT
#include <immintrin.h>
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's cvtpd_ps merge source (table_writer.cpp)
#endif

namespace posenc::core {
namespace {

constexpr double kSettle = 0x1p-52;  // > 2^-53 + 2^-58, the double values' error bound (trig.hpp)
constexpr float kTiny = 0x1p-12f;

inline bool settles(double v) { return static_cast<float>(v - kSettle) == static_cast<float>(v + kSettle); }

// Entry k, scalar, from the double values: the settled float, or binary128's.
inline void finish(float a, double& s, double& c) noexcept {
  if (std::fabs(a) < kTiny) {
    s = a, c = 1.0;
    return;
  }
  s = settles(s) ? static_cast<float>(s) : static_cast<float>(sinq(static_cast<__float128>(a)));
  c = settles(c) ? static_cast<float>(c) : static_cast<float>(cosq(static_cast<__float128>(a)));
}

void portable(const float* angle, std::size_t n, double* s, double* c) noexcept {
#pragma omp simd
  for (std::size_t k = 0; k < n; ++k) sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
  for (std::size_t k = 0; k < n; ++k) finish(angle[k], s[k], c[k]);
}

#ifdef POSENC_HAVE_AVX512_VARIANT
POSENC_AVX512_BEGIN
// The settle test of 8 entries with the half-width `win` of their error interval: sv, cv become the settled floats
// (as doubles), or a and 1 where the angle is tiny; returns all-ones lanes where the entry settled or is tiny (a
// vector, not a mask register: a chain of mask operations across iterations measured slower than the arithmetic).
// Lanes past the data hold angle 0: tiny, so they pass.
inline __m256 settle8(__m512d& sv, __m512d& cv, __m256 a32, double win) noexcept {
  const __m512d d = _mm512_set1_pd(win);
  const __m256 s_ok = _mm256_cmp_ps(_mm512_cvtpd_ps(_mm512_sub_pd(sv, d)), _mm512_cvtpd_ps(_mm512_add_pd(sv, d)), _CMP_EQ_OQ);
  const __m256 c_ok = _mm256_cmp_ps(_mm512_cvtpd_ps(_mm512_sub_pd(cv, d)), _mm512_cvtpd_ps(_mm512_add_pd(cv, d)), _CMP_EQ_OQ);
  const __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(a32, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF))),
                                    _mm256_set1_ps(kTiny), _CMP_LT_OQ);
  sv = _mm512_cvtps_pd(_mm256_blendv_ps(_mm512_cvtpd_ps(sv), a32, tiny));
  cv = _mm512_cvtps_pd(_mm256_blendv_ps(_mm512_cvtpd_ps(cv), _mm256_set1_ps(1.0f), tiny));
  return _mm256_or_ps(tiny, _mm256_and_ps(s_ok, c_ok));
}

// The double values by sincos_dd (compiled here for AVX-512, vectorised by the compiler), then the vector
// settle test; the scalar pass only when an entry did not settle.
void avx512(const float* angle, std::size_t n, double* s, double* c) noexcept {
#pragma omp simd
  for (std::size_t k = 0; k < n; ++k) sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
  __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  for (std::size_t k = 0; k < n; k += 8) {
    const std::size_t r = n - k < 8 ? n - k : 8;
    const __mmask8 m = static_cast<__mmask8>((1u << r) - 1);
    __m512d sv = _mm512_maskz_loadu_pd(m, s + k), cv = _mm512_maskz_loadu_pd(m, c + k);
    ok = _mm256_and_ps(ok, settle8(sv, cv, _mm256_maskz_loadu_ps(m, angle + k), kSettle));
    _mm512_mask_storeu_pd(s + k, m, sv);
    _mm512_mask_storeu_pd(c + k, m, cv);
  }
  if (_mm256_movemask_ps(ok) == 0xFF) return;
  // Rare: recompute the double values and finish every entry on the scalar path (the same values).
  for (std::size_t k = 0; k < n; ++k) {
    sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
    finish(angle[k], s[k], c[k]);
  }
}
POSENC_AVX512_END
#endif


// ---- ProductSinCos32 (sincos32.hpp gives the method and the error bound) ----------------------------------

constexpr double kNearSettle = 0x1p-50;  // > 5.8 * 2^-53, the fast path's error bound
constexpr double kReach = 0x1p22;        // |a| < 2^22: |d| <= ulp32(a) / 2 <= 2^-3
constexpr double kShortReach = 0x1p18;   // |a| < 2^18: |d| <= 2^-7, shorter polynomials

#ifdef POSENC_HAVE_AVX512_VARIANT
POSENC_AVX512_BEGIN
// Pairs k < n of one column chunk, eight per vector: (S, C) = anchor (x) J_j as AngleTable::rotate computes them
// (unclamped: the bound E holds for the product itself), corrected by d_k, settled; false if an entry did not
// settle. AVX-512 only: a portable loop of the same operations (vectorised by GCC for AVX-512 or AVX2) measured
// twice as slow as sincos_rn32, so without AVX-512 the rows take that path.
template <bool Short>
bool product_chunk_avx512(float pf, const float* w, const double* sa, const double* ca, const double* sj,
                          const double* cj, std::size_t n, double* s, double* c) noexcept {
  const __m512d pd = _mm512_set1_pd(pf), half = _mm512_set1_pd(-0.5);
  const __m256 pf8 = _mm256_set1_ps(pf);
  __m256 ok = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
  for (std::size_t k = 0; k < n; k += 8) {
    const __mmask8 m = static_cast<__mmask8>(n - k >= 8 ? 0xFF : (1u << (n - k)) - 1);
    __m512d a_s = _mm512_maskz_loadu_pd(m, sa + k), a_c = _mm512_maskz_loadu_pd(m, ca + k);
    __m512d j_s = _mm512_maskz_loadu_pd(m, sj + k), j_c = _mm512_maskz_loadu_pd(m, cj + k);
    asm("" : "+v"(a_s), "+v"(a_c), "+v"(j_s), "+v"(j_c));  // one load each (table_writer.cpp rot8)
    const __m512d S = _mm512_fmadd_pd(a_s, j_c, _mm512_mul_pd(a_c, j_s));
    const __m512d C = _mm512_fmsub_pd(a_c, j_c, _mm512_mul_pd(a_s, j_s));
    const __m256 w8 = _mm256_maskz_loadu_ps(m, w + k);
    const __m256 a32 = _mm256_mul_ps(pf8, w8);
    const __m512d a = _mm512_cvtps_pd(a32);
    const __m512d d = _mm512_sub_pd(a, _mm512_mul_pd(pd, _mm512_cvtps_pd(w8)));
    const __m512d d2 = _mm512_mul_pd(d, d);
    __m512d ps, pc;
    if constexpr (Short) {  // |d| <= 2^-7: sin to d^5, cos to d^6 (first omitted terms < 2^-61, < 2^-71)
      ps = _mm512_fmadd_pd(_mm512_set1_pd(kS[1]), d2, _mm512_set1_pd(kS[0]));
      pc = _mm512_fmadd_pd(_mm512_set1_pd(kC[1]), d2, _mm512_set1_pd(kC[0]));
    } else {
      ps = _mm512_set1_pd(kS[4]);
      ps = _mm512_fmadd_pd(ps, d2, _mm512_set1_pd(kS[3]));
      ps = _mm512_fmadd_pd(ps, d2, _mm512_set1_pd(kS[2]));
      ps = _mm512_fmadd_pd(ps, d2, _mm512_set1_pd(kS[1]));
      ps = _mm512_fmadd_pd(ps, d2, _mm512_set1_pd(kS[0]));
      pc = _mm512_set1_pd(kC[3]);
      pc = _mm512_fmadd_pd(pc, d2, _mm512_set1_pd(kC[2]));
      pc = _mm512_fmadd_pd(pc, d2, _mm512_set1_pd(kC[1]));
      pc = _mm512_fmadd_pd(pc, d2, _mm512_set1_pd(kC[0]));
    }
    const __m512d sd = _mm512_fmadd_pd(_mm512_mul_pd(d, d2), ps, d);
    const __m512d cm1 = _mm512_fmadd_pd(_mm512_mul_pd(d2, d2), pc, _mm512_mul_pd(half, d2));
    __m512d sv = _mm512_add_pd(S, _mm512_fmadd_pd(S, cm1, _mm512_mul_pd(C, sd)));
    __m512d cv = _mm512_add_pd(C, _mm512_fmsub_pd(C, cm1, _mm512_mul_pd(S, sd)));
    ok = _mm256_and_ps(ok, settle8(sv, cv, a32, kNearSettle));
    _mm512_mask_storeu_pd(s + k, m, sv);
    _mm512_mask_storeu_pd(c + k, m, cv);
  }
  return _mm256_movemask_ps(ok) == 0xFF;  // lanes past n hold w = 0: angle 0, tiny, so they pass
}
POSENC_AVX512_END
#endif

}  // namespace

void sincos_rn32(const float* angle, std::size_t n, double* s, double* c) noexcept {
#ifdef POSENC_HAVE_AVX512_VARIANT
  if (use_avx512()) return avx512(angle, n, s, c);
#endif
  portable(angle, n, s, c);
}

ProductSinCos32::ProductSinCos32(std::vector<float> w) : w_(std::move(w)) {
  for (float v : w_) w_max_ = std::isfinite(v) ? std::max(w_max_, static_cast<double>(std::fabs(v))) : HUGE_VAL;
  // J's angles j w_k (j < B <= 64) must stay in the core's range; beyond 2^16 no position has |a| < 2^22 anyway.
#ifdef POSENC_HAVE_AVX512_VARIANT
  if (use_avx512() && w_max_ < 0x1p16)
    table_.emplace(DDFrequencies{std::vector<double>(w_.begin(), w_.end()), std::vector<double>(w_.size(), 0.0)});
#endif
}

// (|p| + B) max w_k: a bound on every angle of p's row and of its anchor's.
double ProductSinCos32::reach(std::int64_t p) const noexcept {
  return static_cast<double>((p < 0 ? -p : p) + static_cast<std::int64_t>(table_->block())) * w_max_;
}

bool ProductSinCos32::fast(std::int64_t p) const noexcept {
  if (!table_ || p <= -(std::int64_t{1} << 24) || p >= (std::int64_t{1} << 24)) return false;
  return reach(p) < kReach;  // every angle of the row, and its anchor's, below 2^22
}

void ProductSinCos32::row(std::int64_t p, double* sa, double* ca, std::int64_t& anchor, float* angle, double* s,
                          double* c) const noexcept {
  const std::size_t h = w_.size();
  const float pf = static_cast<float>(p);  // RN32(p): exact on the fast path
  if (fast(p)) {
    const std::int64_t pa = table_->anchor_of(p);
    if (pa != anchor) {
      table_->direct(pa, sa, ca);
      anchor = pa;
    }
    const auto j = static_cast<std::size_t>(p - pa);
    bool ok = true;
#ifdef POSENC_HAVE_AVX512_VARIANT  // table_ exists only where use_avx512()
    const bool short_d = reach(p) < kShortReach;
    for (std::size_t k0 = 0; k0 < h; k0 += AngleTable::kChunk)
      ok &= (short_d ? product_chunk_avx512<true> : product_chunk_avx512<false>)(
          pf, w_.data() + k0, sa + k0, ca + k0, table_->j_sin(j, k0), table_->j_cos(j, k0),
          std::min(AngleTable::kChunk, h - k0), s + k0, c + k0);
#endif
    if (ok) return;
  }
  for (std::size_t k = 0; k < h; ++k) angle[k] = pf * w_[k];
  sincos_rn32(angle, h, s, c);
}

}  // namespace posenc::core
