#include "pair_rotation.hpp"

#include "rotation_kernels.hpp"

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


}  // namespace

// The vector kernel of posenc's target where it serves (T, A, formula) (rotation_kernels.cpp); else the portable
// loop, which performs the same operations.
template <class T, class A>
void rotate_heads(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r,
                  std::ptrdiff_t prefetch) noexcept {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if constexpr (std::is_same_v<A, double> || std::is_same_v<T, float>)
      if (kernels::rotate(x, heads, head_stride, r, prefetch)) return;
  }
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
