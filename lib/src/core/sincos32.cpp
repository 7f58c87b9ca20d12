#include "sincos32.hpp"

#include <quadmath.h>

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
// The settle test of 8 entries: the settled floats (as doubles) where every entry settles or is tiny; false if
// one does not.
inline bool settle8(__m512d& sv, __m512d& cv, __m256 a32, __mmask8 lanes) noexcept {
  const __m512d d = _mm512_set1_pd(kSettle);
  const __m256 s32 = _mm512_cvtpd_ps(sv), c32 = _mm512_cvtpd_ps(cv);
  const __mmask8 s_ok = _mm256_cmp_ps_mask(_mm512_cvtpd_ps(_mm512_sub_pd(sv, d)), _mm512_cvtpd_ps(_mm512_add_pd(sv, d)), _CMP_EQ_OQ);
  const __mmask8 c_ok = _mm256_cmp_ps_mask(_mm512_cvtpd_ps(_mm512_sub_pd(cv, d)), _mm512_cvtpd_ps(_mm512_add_pd(cv, d)), _CMP_EQ_OQ);
  const __m512d a = _mm512_cvtps_pd(a32);
  const __mmask8 tiny = _mm512_cmp_pd_mask(_mm512_abs_pd(a), _mm512_set1_pd(static_cast<double>(kTiny)), _CMP_LT_OQ);
  sv = _mm512_mask_blend_pd(tiny, _mm512_cvtps_pd(s32), a);
  cv = _mm512_mask_blend_pd(tiny, _mm512_cvtps_pd(c32), _mm512_set1_pd(1.0));
  return ((s_ok & c_ok) | tiny | static_cast<__mmask8>(~lanes)) == 0xFF;
}

// The double values by sincos_dd (compiled here for AVX-512, vectorised by the compiler), then the vector
// settle test; the scalar pass only when an entry did not settle.
void avx512(const float* angle, std::size_t n, double* s, double* c) noexcept {
#pragma omp simd
  for (std::size_t k = 0; k < n; ++k) sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
  bool all = true;
  for (std::size_t k = 0; k < n; k += 8) {
    const std::size_t r = n - k < 8 ? n - k : 8;
    const __mmask8 m = static_cast<__mmask8>((1u << r) - 1);
    __m512d sv = _mm512_maskz_loadu_pd(m, s + k), cv = _mm512_maskz_loadu_pd(m, c + k);
    all &= settle8(sv, cv, _mm256_maskz_loadu_ps(m, angle + k), m);
    _mm512_mask_storeu_pd(s + k, m, sv);
    _mm512_mask_storeu_pd(c + k, m, cv);
  }
  if (all) return;
  // Rare: recompute the double values and finish every entry on the scalar path (the same values).
  for (std::size_t k = 0; k < n; ++k) {
    sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
    finish(angle[k], s[k], c[k]);
  }
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

}  // namespace posenc::core
