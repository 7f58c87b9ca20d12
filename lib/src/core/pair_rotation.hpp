// lib/src/core/pair_rotation.hpp — rotating the channel pairs of head vectors in place (RoPE's application).
//
// Pair k of a head vector x is (x[k], x[k + h]) (halves) or (x[2k], x[2k + 1]) (interleaved); it turns by the
// token's (c_k, s_k). Two formulas, each a fixed sequence of IEEE operations, so every kernel (the portable one,
// the vector one of every SIMD target, any tail or head grouping) gives the same bits:
//   fused (the exact regime; arithmetic in double):  y_i = RN_T(fma(x_i, c, -RN(x_j s))), y_j = RN_T(fma(x_j, c, RN(x_i s)))
//   products (the emulated float32 regimes; in A):   y_i = RN_T(RN(x_i c) - RN(x_j s)),   y_j = RN_T(RN(x_j c) + RN(x_i s))
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "posenc/half.hpp"

namespace posenc::core {

enum class PairFormula { fused, products };

// One token's coefficients in the arithmetic type A. For interleaved pairs also every value twice, sin with
// alternating sign (cd = [c0, c0, c1, c1, ...], sd = [-s0, s0, -s1, s1, ...]): y = x cd + swap(x) sd gives the
// formulas above exactly (x_j * (-s) = -(x_j s) and a + (-b) = a - b in IEEE arithmetic, signed zeros included).
template <class A>
struct PairRotor {
  const A *c = nullptr, *s = nullptr, *cd = nullptr, *sd = nullptr;
  std::size_t h = 0;
  bool interleaved = false;
  PairFormula formula = PairFormula::fused;
};

// The rotor of a token's double c, s: A = double uses them in place, A = float converts them into buf; for
// interleaved pairs buf also receives cd and sd. buf: room for 6 h values of A (any alignment); c, s must outlive
// the rotor.
// fused requires A = double (the exact regime rounds only the result).
template <class A>
PairRotor<A> make_rotor(const double* c, const double* s, std::size_t h, bool interleaved, PairFormula f,
                        A* buf) noexcept {
  static_assert(std::is_same_v<A, float> || std::is_same_v<A, double>);
  PairRotor<A> r{.h = h, .interleaved = interleaved, .formula = f};
  if constexpr (std::is_same_v<A, double>) {
    r.c = c, r.s = s;  // used as they are
  } else {
    A *cc = buf, *ss = buf + h;
    for (std::size_t k = 0; k < h; ++k) cc[k] = static_cast<A>(c[k]), ss[k] = static_cast<A>(s[k]);
    r.c = cc, r.s = ss;
  }
  if (interleaved) {
    A *cd = buf + 2 * h, *sd = buf + 4 * h;
    for (std::size_t k = 0; k < h; ++k) cd[2 * k] = cd[2 * k + 1] = r.c[k], sd[2 * k] = -r.s[k], sd[2 * k + 1] = r.s[k];
    r.cd = cd, r.sd = sd;
  }
  return r;
}

// Rotates `heads` head vectors starting at x, head_stride elements apart. prefetch: the distance in elements to
// the data the next call will rotate (the next token), 0 for none; it only warms caches, it changes no value.
// The vector kernels (rotation_kernels.cpp) serve float and double with the formula of their regime; bf16 and f16
// (and a scalar target) take the portable loop, which performs the same operations.
// Defined for T in {float, double, bf16, f16} with A = double, and T in {float, bf16, f16} with A = float.
template <class T, class A>
void rotate_heads(T* x, std::size_t heads, std::ptrdiff_t head_stride, const PairRotor<A>& r,
                  std::ptrdiff_t prefetch) noexcept;

}  // namespace posenc::core
