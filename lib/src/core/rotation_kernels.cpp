// lib/src/core/rotation_kernels.cpp — RoPE's pair rotation (pair_rotation.hpp) as Highway vector code, compiled for
// every target (hwy/foreach_target.h re-includes this file) with posenc_kernels' baseline flags, for the (data,
// arithmetic, formula) combinations of the regimes: (float, double, fused), (double, double, fused and products),
// (float, float, products). bf16, f16 and the other combinations take pair_rotation.cpp's portable loop, which
// performs the same operations. Each head's last partial vector runs on a zero-padded copy.
//
// The kernels prefetch each head of the next token while they rotate this token's (a token's data is 16 KiB at
// 32 x 128 f32; without the prefetch the loads waited on L3 or DRAM and the arithmetic did not overlap them:
// interleaved in DRAM at 1 thread took twice as long).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/rotation_kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <type_traits>

#include "pair_rotation.hpp"
#include "rotation_kernels.hpp"
#include "simd.hpp"
#include "simd_math-inl.hpp"

HWY_BEFORE_NAMESPACE();
namespace posenc::core::HWY_NAMESPACE {

#ifdef POSENC_SIMD_VECTOR

// The arithmetic vectors (of A) and how data of T moves in and out of them: (float, double) widens N floats to N
// doubles exactly and rounds back once; the others move data as it is.
template <class T, class A>
struct Data {
  using D = hn::ScalableTag<A>;
  using DT = hn::Rebind<T, D>;
  using V = hn::Vec<D>;
  static V load(const T* p) {
    if constexpr (std::is_same_v<T, A>) return hn::LoadU(D(), p);
    else return hn::PromoteTo(D(), hn::LoadU(DT(), p));
  }
  static void store(V v, T* p) {
    if constexpr (std::is_same_v<T, A>) hn::StoreU(v, D(), p);
    else hn::StoreU(hn::DemoteTo(DT(), v), DT(), p);
  }
};

// Warms the cache lines of `bytes` bytes at p + off elements (the same head of the next token), for writing.
template <class T>
HWY_INLINE void Warm(const T* p, std::ptrdiff_t off, std::size_t bytes) {
  if (off == 0) return;
  const char* q = reinterpret_cast<const char*>(p + off);
  for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(q + b, 1, 3);
}

constexpr std::size_t kMax = HWY_MAX_BYTES / sizeof(float);

// Halves: pairs (k, k + h), N pairs per step.
template <class T, class A, PairFormula F>
void Halves(T* x, const PairRotor<A>& r) {
  using L = Data<T, A>;
  const std::size_t h = r.h, N = hn::Lanes(typename L::D());
  auto step = [](T* xa, T* xb, const A* c, const A* s) {
    const typename L::V C = hn::LoadU(typename L::D(), c), S = hn::LoadU(typename L::D(), s);
    const typename L::V a = L::load(xa), b = L::load(xb);
    if constexpr (F == PairFormula::fused) {
      L::store(hn::MulSub(a, C, hn::Mul(b, S)), xa);
      L::store(hn::MulAdd(b, C, hn::Mul(a, S)), xb);
    } else {
      L::store(hn::Sub(hn::Mul(a, C), hn::Mul(b, S)), xa);
      L::store(hn::Add(hn::Mul(b, C), hn::Mul(a, S)), xb);
    }
  };
  std::size_t k = 0;
  for (; k + N <= h; k += N) step(x + k, x + h + k, r.c + k, r.s + k);
  if (k < h) {
    const std::size_t n = h - k;
    HWY_ALIGN T a[kMax] = {}, b[kMax] = {};
    HWY_ALIGN A c[kMax] = {}, s[kMax] = {};
    std::copy_n(x + k, n, a), std::copy_n(x + h + k, n, b), std::copy_n(r.c + k, n, c), std::copy_n(r.s + k, n, s);
    step(a, b, c, s);
    std::copy_n(a, n, x + k), std::copy_n(b, n, x + h + k);
  }
}

// Interleaved: the 2h values in order, y = x cd + swap(x) sd (pair_rotation.hpp).
template <class T, class A, PairFormula F>
void Interleaved(T* x, const PairRotor<A>& r) {
  using L = Data<T, A>;
  const typename L::D d;
  const std::size_t n = 2 * r.h, N = hn::Lanes(d);
  auto step = [&](T* xi, const A* cd, const A* sd) {
    const typename L::V C = hn::LoadU(d, cd), S = hn::LoadU(d, sd);
    const typename L::V a = L::load(xi);
    if constexpr (F == PairFormula::fused) L::store(hn::MulAdd(a, C, hn::Mul(hn::Reverse2(d, a), S)), xi);
    else L::store(hn::Add(hn::Mul(a, C), hn::Mul(hn::Reverse2(d, a), S)), xi);
  };
  std::size_t i = 0;
  for (; i + N <= n; i += N) step(x + i, r.cd + i, r.sd + i);
  if (i < n) {  // n - i is even: whole pairs
    const std::size_t m = n - i;
    HWY_ALIGN T a[kMax] = {};
    HWY_ALIGN A c[kMax] = {}, s[kMax] = {};
    std::copy_n(x + i, m, a), std::copy_n(r.cd + i, m, c), std::copy_n(r.sd + i, m, s);
    step(a, c, s);
    std::copy_n(a, m, x + i);
  }
}

template <class T, class A, PairFormula F>
void Heads(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r, std::ptrdiff_t prefetch) {
  for (std::size_t hd = 0; hd < heads; ++hd) {
    T* v = x + static_cast<std::ptrdiff_t>(hd) * head_stride;
    Warm(v, prefetch, 2 * r.h * sizeof(T));
    if (r.interleaved) Interleaved<T, A, F>(v, r);
    else Halves<T, A, F>(v, r);
  }
}

bool RotateF32D(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
                std::ptrdiff_t prefetch) {
  if (r.formula != PairFormula::fused) return false;
  Heads<float, double, PairFormula::fused>(x, heads, head_stride, r, prefetch);
  return true;
}
bool RotateF64D(double* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
                std::ptrdiff_t prefetch) {
  if (r.formula == PairFormula::fused) Heads<double, double, PairFormula::fused>(x, heads, head_stride, r, prefetch);
  else Heads<double, double, PairFormula::products>(x, heads, head_stride, r, prefetch);
  return true;
}
bool RotateF32F(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<float>& r,
                std::ptrdiff_t prefetch) {
  if (r.formula != PairFormula::products) return false;
  Heads<float, float, PairFormula::products>(x, heads, head_stride, r, prefetch);
  return true;
}

#else  // a target without vector kernels: pair_rotation.cpp's portable loop runs instead

bool RotateF32D(float*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) { return false; }
bool RotateF64D(double*, std::size_t, std::ptrdiff_t, const PairRotor<double>&, std::ptrdiff_t) { return false; }
bool RotateF32F(float*, std::size_t, std::ptrdiff_t, const PairRotor<float>&, std::ptrdiff_t) { return false; }

#endif  // POSENC_SIMD_VECTOR

}  // namespace posenc::core::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace posenc::core {
HWY_EXPORT(RotateF32D);
HWY_EXPORT(RotateF64D);
HWY_EXPORT(RotateF32F);

namespace kernels {
bool rotate(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
            std::ptrdiff_t prefetch) noexcept {
  return POSENC_DISPATCH(RotateF32D)(x, heads, head_stride, r, prefetch);
}
bool rotate(double* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<double>& r,
            std::ptrdiff_t prefetch) noexcept {
  return POSENC_DISPATCH(RotateF64D)(x, heads, head_stride, r, prefetch);
}
bool rotate(float* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<float>& r,
            std::ptrdiff_t prefetch) noexcept {
  return POSENC_DISPATCH(RotateF32F)(x, heads, head_stride, r, prefetch);
}
}  // namespace kernels
}  // namespace posenc::core
#endif  // HWY_ONCE
