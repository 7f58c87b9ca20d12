#include "pair_rotation.hpp"

#include "cpu.hpp"
#ifdef POSENC_HAVE_AVX512_VARIANT
#include <immintrin.h>
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12's cvtpd_ps merge source (table_writer.cpp)
#endif

namespace posenc::core {
namespace {

template <class T>
inline double wide(T x) noexcept {
  if constexpr (std::is_same_v<T, bf16> || std::is_same_v<T, f16>) return to_double(x);
  else return static_cast<double>(x);
}
template <class T>
inline T narrow(double y) noexcept {
  if constexpr (std::is_same_v<T, bf16>) return to_bf16(y);
  else if constexpr (std::is_same_v<T, f16>) return to_f16(y);
  else return static_cast<T>(y);
}

// The portable kernel: the formulas of pair_rotation.hpp, one pair at a time (vectorised by the compiler where
// it can). lib/ is built with -ffp-contract=off, so the products formula's three roundings stay three.
template <PairFormula F, class T, class A>
void rotate_head_portable(T* x, const PairRotor<A>& r) noexcept {
  const std::size_t h = r.h;
  const A *c = r.c, *s = r.s;
  auto pair = [](T& xi, T& xj, A ck, A sk) {
    if constexpr (F == PairFormula::fused) {
      const double a = wide(xi), b = wide(xj);
      xi = narrow<T>(std::fma(a, static_cast<double>(ck), -(b * static_cast<double>(sk))));
      xj = narrow<T>(std::fma(b, static_cast<double>(ck), a * static_cast<double>(sk)));
    } else {
      // yi as RN(a c) + RN(b (-s)), the same IEEE value as RN(a c) - RN(b s): written as a - b next to the sum
      // yj, GCC 12's SLP vectoriser fuses the pair into vfmaddsub even under -ffp-contract=off (one rounding
      // instead of three; the same defect ggml's rotation shows, properties/heldout/generate_ggml.py), and ctest
      // properties.PortableKernels (ROPE-APPLY-2) caught it on f64 interleaved tails.
      const auto a = static_cast<A>(wide(xi)), b = static_cast<A>(wide(xj));
      const A yi = a * ck + b * -sk;
      const A yj = b * ck + a * sk;
      xi = narrow<T>(static_cast<double>(yi));
      xj = narrow<T>(static_cast<double>(yj));
    }
  };
  if (!r.interleaved) {
    T* a = x;
    T* b = x + h;
#pragma omp simd
    for (std::size_t k = 0; k < h; ++k) pair(a[k], b[k], c[k], s[k]);
  } else {
#pragma omp simd
    for (std::size_t k = 0; k < h; ++k) pair(x[2 * k], x[2 * k + 1], c[k], s[k]);
  }
}

template <class T, class A>
void rotate_portable(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r) noexcept {
  for (std::size_t hd = 0; hd < heads; ++hd) {
    T* v = x + static_cast<std::ptrdiff_t>(hd) * head_stride;
    if (r.formula == PairFormula::fused) rotate_head_portable<PairFormula::fused>(v, r);
    else rotate_head_portable<PairFormula::products>(v, r);
  }
}

#ifdef POSENC_HAVE_AVX512_VARIANT
POSENC_AVX512_BEGIN
// The arithmetic of one vector of A (8 doubles or 16 floats), and per (T, A) the loads and stores of T data:
// (float, double) widens 8 floats to 8 doubles exactly and rounds back once; the others move data as it is.
struct ArithF64 {
  using V = __m512d;
  using M = __mmask8;
  static constexpr std::size_t n = 8;
  static V coef(const double* p) { return _mm512_loadu_pd(p); }
  static V coef(const double* p, M m) { return _mm512_maskz_loadu_pd(m, p); }
  static V swap(V v) { return _mm512_permute_pd(v, 0x55); }  // (x_j, x_i) of every interleaved pair
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_pd(a, b, c); }
  static M mask(std::size_t r) { return static_cast<M>((1u << r) - 1); }
};
struct ArithF32 {
  using V = __m512;
  using M = __mmask16;
  static constexpr std::size_t n = 16;
  static V coef(const float* p) { return _mm512_loadu_ps(p); }
  static V coef(const float* p, M m) { return _mm512_maskz_loadu_ps(m, p); }
  static V swap(V v) { return _mm512_permute_ps(v, 0xB1); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }
  static M mask(std::size_t r) { return static_cast<M>((1u << r) - 1); }
};
template <class T, class A>
struct Lanes;
template <>
struct Lanes<float, double> : ArithF64 {
  static V load(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  static V load(const float* p, M m) { return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, p)); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, _mm512_cvtpd_ps(v)); }
  static void store(float* p, V v, M m) { _mm256_mask_storeu_ps(p, m, _mm512_cvtpd_ps(v)); }
};
template <>
struct Lanes<double, double> : ArithF64 {
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V load(const double* p, M m) { return _mm512_maskz_loadu_pd(m, p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static void store(double* p, V v, M m) { _mm512_mask_storeu_pd(p, m, v); }
};
template <>
struct Lanes<float, float> : ArithF32 {
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load(const float* p, M m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void store(float* p, V v, M m) { _mm512_mask_storeu_ps(p, m, v); }
};

// Loads (Full: a whole vector; else the first r lanes, the rest zero) and stores (Full, or the first r lanes).
template <class L, bool Full, class T>
inline typename L::V ld(const T* p, typename L::M m) {
  if constexpr (Full) return L::load(p);
  else return L::load(p, m);
}
template <class L, bool Full, class A>
inline typename L::V co(const A* p, typename L::M m) {
  if constexpr (Full) return L::coef(p);
  else return L::coef(p, m);
}
template <class L, bool Full, class T>
inline void st(T* p, typename L::V v, typename L::M m) {
  if constexpr (Full) L::store(p, v);
  else L::store(p, v, m);
}

// Warms the cache lines of `bytes` bytes at p + off elements (the same head of the next token), for writing.
template <class T>
inline void warm(const T* p, std::ptrdiff_t off, std::size_t bytes) noexcept {
  if (off == 0) return;
  const char* q = reinterpret_cast<const char*>(p + off);
  for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(q + b, 1, 3);
}

// Halves: pairs (k, k + h), n lanes of pairs per step. (Rotating 2 or 4 heads per load of the coefficients
// measured no faster: the loads hit L1.)
template <class T, class A, PairFormula F>
void halves(T* x, const PairRotor<A>& r) noexcept {
  using L = Lanes<T, A>;
  const std::size_t h = r.h;
  const A *c = r.c, *s = r.s;
  auto step = [&]<bool Full>(std::size_t k, typename L::M m) {
    const typename L::V C = co<L, Full>(c + k, m), S = co<L, Full>(s + k, m);
    const typename L::V a = ld<L, Full>(x + k, m), b = ld<L, Full>(x + h + k, m);
    if constexpr (F == PairFormula::fused) {
      st<L, Full>(x + k, L::fmsub(a, C, L::mul(b, S)), m);
      st<L, Full>(x + h + k, L::fmadd(b, C, L::mul(a, S)), m);
    } else {
      st<L, Full>(x + k, L::sub(L::mul(a, C), L::mul(b, S)), m);
      st<L, Full>(x + h + k, L::add(L::mul(b, C), L::mul(a, S)), m);
    }
  };
  std::size_t k = 0;
  for (; k + L::n <= h; k += L::n) step.template operator()<true>(k, typename L::M{});
  if (k < h) step.template operator()<false>(k, L::mask(h - k));
}

// Interleaved: the 2h values in order, y = x cd + swap(x) sd (pair_rotation.hpp).
template <class T, class A, PairFormula F>
void interleaved(T* x, const PairRotor<A>& r) noexcept {
  using L = Lanes<T, A>;
  const std::size_t n = 2 * r.h;
  const A *cd = r.cd, *sd = r.sd;
  auto step = [&]<bool Full>(std::size_t i, typename L::M m) {
    const typename L::V C = co<L, Full>(cd + i, m), S = co<L, Full>(sd + i, m);
    const typename L::V a = ld<L, Full>(x + i, m);
    if constexpr (F == PairFormula::fused) st<L, Full>(x + i, L::fmadd(a, C, L::mul(L::swap(a), S)), m);
    else st<L, Full>(x + i, L::add(L::mul(a, C), L::mul(L::swap(a), S)), m);
  };
  std::size_t i = 0;
  for (; i + L::n <= n; i += L::n) step.template operator()<true>(i, typename L::M{});
  if (i < n) step.template operator()<false>(i, L::mask(n - i));
}

template <class T, class A, PairFormula F>
void rotate_avx512(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r,
                   std::ptrdiff_t prefetch) noexcept {
  for (std::size_t hd = 0; hd < heads; ++hd) {
    T* v = x + static_cast<std::ptrdiff_t>(hd) * head_stride;
    warm(v, prefetch, 2 * r.h * sizeof(T));
    if (r.interleaved) interleaved<T, A, F>(v, r);
    else halves<T, A, F>(v, r);
  }
}
POSENC_AVX512_END
#endif

}  // namespace

// The AVX-512 kernel where the CPU has it and it serves (T, A, formula); else the portable loop.
template <class T, class A>
void rotate_heads(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r,
                  std::ptrdiff_t prefetch) noexcept {
#ifdef POSENC_HAVE_AVX512_VARIANT
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (use_avx512()) {
      constexpr bool widening = std::is_same_v<A, double>;  // (float, double) or (double, double)
      if constexpr (widening) {
        if (r.formula == PairFormula::fused) return rotate_avx512<T, A, PairFormula::fused>(x, heads, head_stride, r, prefetch);
        if constexpr (std::is_same_v<T, double>)
          return rotate_avx512<T, A, PairFormula::products>(x, heads, head_stride, r, prefetch);
      } else if constexpr (std::is_same_v<T, float>) {
        if (r.formula == PairFormula::products)
          return rotate_avx512<T, A, PairFormula::products>(x, heads, head_stride, r, prefetch);
      }
    }
  }
#endif
  (void)prefetch;
  rotate_portable(x, heads, head_stride, r);
}

template void rotate_heads(float*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) noexcept;
template void rotate_heads(double*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) noexcept;
template void rotate_heads(float*, std::size_t, std::ptrdiff_t, const PairRotor<float>&, std::ptrdiff_t) noexcept;
template void rotate_heads(bf16*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) noexcept;
template void rotate_heads(bf16*, std::size_t, std::ptrdiff_t, const PairRotor<float>&, std::ptrdiff_t) noexcept;
template void rotate_heads(f16*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) noexcept;
template void rotate_heads(f16*, std::size_t, std::ptrdiff_t, const PairRotor<float>&, std::ptrdiff_t) noexcept;

}  // namespace posenc::core
