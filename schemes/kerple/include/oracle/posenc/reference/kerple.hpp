// posenc/reference/kerple.hpp — the MPFR oracle of KERPLE, kernelized relative positional biases (Chi et al. 2022).
//
// An independent transcription of the definition in posenc/kerple_spec.hpp (it never includes or links lib/, and
// it does not call kerple_effective_p/_a: the clamps are redone here in MPFR): every bias straight from its closed
// form at its distance, no tables, no recurrences.
//
// Geometry (as ALiBi's): key positions j = 0..Lk-1, query row i at q_i = Lk - Lq + i (the queries are the last Lq
// keys); the distance d = q_i - j for j <= q_i and 0 above the diagonal (the reference's tril(i - j)). The bias
// depends on (h, d) only.
//
// Parameters of head h (the weights bias_p[h], bias_a[h] are doubles; eps = 0.01):
//   exact     p = max(bias_p, RN64(0.01)) (power: then min(., 2)), a = max(bias_a, RN64(0.01)): doubles, exact.
//   megatron  p32 = max(RN32(bias_p), eps32) (power: then min(., 2)), a32 = max(RN32(bias_a), eps32), in float32,
//             eps32 = RN32(RN64(0.01)) (torch clamps a float32 tensor against the Python float 0.01; this equals
//             RN32 of the real 0.01, checked in the self-tests). RN64(0.01) is MPFR's rounding of the decimal text.
//
// Exact regime: b(d) = -p ln(1 + a d) (log) or -a d^p (power), with p, a the exact doubles above.
//   Accuracy (correctly rounded to `bits`, |returned - true| <= ulp_bits(true)/2, ties to even):
//     d = 0:          b = -0 exactly (the sign IEEE gives -p * 0 and -a * 0^p), returned as -0.
//     log, d >= 1:    u = 1 + a d is formed exactly (a has 53 bits with exponent in [-6, 20], d < 2^31: <= 111
//                     bits, held at 128); ln u is transcendental (u rational, u > 1), so the value is never a
//                     `bits`-bit number or a midpoint and a Ziv loop terminates: t = RN_W(ln u) at
//                     W = bits + kKerpleWorkingMargin (then 1.5 W, ...), the product p t formed exactly (W + 53
//                     bits), |p t - p ln u| <= p 2^(EXP(t) - W - 1) <= 2^(EXP(p t) - W); accepted when
//                     mpfr_can_round proves every number within that bound rounds to the same `bits`-bit number.
//     power, d >= 1:  d^p with p = m 2^-k (a double in [0.01, 2]) is rational only when it is an integer (d a
//                     perfect 2^k-th power, p = 1 or 2 among them, d = 1 always): then d^p = r^m <= d^2 < 2^62.
//                     MPFR's pow returns a ternary value of 0 exactly when its W-bit result (W >= 88) is the exact
//                     power, so the oracle takes that flag: exact -> a d^p formed exactly (<= 115 bits) and
//                     rounded once (ties, e.g. a = 1 + 2^-24, d = 2, p = 1 at 24 bits, go to even); inexact ->
//                     d^p is irrational (algebraic), and the Ziv loop above runs with t = RN_W(d^p), a t exact.
//     score:          scale <q, k> + exact_bias(...) with q, k, scale finite doubles taken as exact: each
//                     scale q_c k_c is exact (159 bits); with an exact bias (d = 0 or an exact power) all terms
//                     are summed by mpfr_sum straight to `bits` (one rounding); otherwise a Ziv loop: mpfr_sum of
//                     the exact terms and the W-bit approximation B of the bias to W bits, error <=
//                     2^(EXP(s) - W - 1) + 2^(EXP(B) - W), accepted by mpfr_can_round (cancellation just takes
//                     more rounds; the score is irrational there, so never 0 or a midpoint).
//     A Ziv loop that has not converged by W = 2^20 bits throws std::logic_error (never seen; the value would have
//     to lie within 2^-2^20 relative of a rounding boundary).
//
// Megatron regime (chijames/KERPLE megatron/mpu/layers.py ParallelKerpleLog/ParallelKerplePower.forward, float32
// model): each step correctly rounded to binary32 (RN32, DESIGN.md §2; mp.hpp's rn_* functions: MPFR at 24 bits
// in the binary32 exponent range, one rounding), D = RN32(d) (exact below 2^24, then rounded: d = 2^24 + 1 gives
// D = 2^24):
//     log:    t = RN32(a32 D), u = RN32(1 + t) (1 + t formed exactly first), l = RN32(ln u), b = RN32(-p32 l)
//     power:  w = RN32(D^p32) (MPFR pow, real exponent), b = RN32(-w a32)
//   (the negations are exact: -p * log(...) and -bias * a in the code). At d = 0: ln 1 = +0 and 0^p32 = +0, so
//   b = -0. Results are exact float32 numbers held in a Real of `bits` bits (bits >= 24 holds every binary32
//   number). Real torch float32 log/pow are not correctly rounded: that envelope is the budget table's business.
//
// p(h), a(h): the clamped parameter of the spec's regime exactly, as a Real of max(bits, 53) bits (so that the
// exact regime's double is held exactly even when bits < 53); every other result has exactly `bits` bits.
//
// Errors: every function throws posenc::Error naming the parameter, the value and the accepted values: the spec
// (posenc::validate: "heads", "kernel", "regime"), the weights (posenc::check_kerple_weights: "bias_p", "bias_a"),
// "bits" (posenc::reference::check_bits), a head "h" (>= heads), a distance "d" (outside [0, 2^31)), the lengths
// (posenc::check_alibi_lengths: "query_length", "key_length"), a query row "i" (>= query_length), a key "j"
// (>= key_length), the vectors ("q" empty or not finite, "k" of another length or not finite) and "scale" (not
// finite). Thread-safe: no function reads Boost's default precision; MPFR keeps its state per thread.
// KerpleOracle's methods are const and share nothing mutable.
#pragma once

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/kerple_spec.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference {

// The first working precision of the Ziv loops is bits + kKerpleWorkingMargin.
inline constexpr unsigned kKerpleWorkingMargin = 64;

// The distance d = q_i - j for j <= q_i, else 0, with q_i = key_length - query_length + i. Throws posenc::Error
// naming "query_length" / "key_length" (posenc::check_alibi_lengths: 1 <= Lq <= Lk < 2^31), "i" (>= query_length)
// or "j" (>= key_length).
std::int64_t kerple_distance(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length);

class KerpleOracle {
 public:
  // Validates the spec, the weights (posenc::check_kerple_weights) and bits; clamps every head's parameters for
  // both regimes (exact doubles, megatron float32s).
  KerpleOracle(const KerpleSpec& spec, const KerpleWeights& weights, unsigned bits = kDefaultBits);
  const KerpleSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // The clamped parameter of head h in the spec's regime, exactly (exact: the clamped double; megatron: the
  // clamped float32), as a Real of max(bits, 53) bits.
  Real p(std::size_t h) const;
  Real a(std::size_t h) const;

  // The bias of head h at distance d (0 <= d < 2^31) in the spec's regime: exact -> correctly rounded to bits
  // (-0 at d = 0); megatron -> the float32 steps above, exactly.
  Real bias_at(std::size_t h, std::int64_t d) const;
  // The exact regime's bias whatever spec.regime says, from the double weights with the exact regime's clamp
  // (error-vs-exact measurements of the megatron regime): correctly rounded to bits.
  Real exact_bias_at(std::size_t h, std::int64_t d) const;

  // bias_at / exact_bias_at of kerple_distance(i, j, query_length, key_length).
  Real bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const;
  Real exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                  std::size_t key_length) const;

  // scale * <q, k> + exact_bias(h, i, j, ...), exact mathematics (q, k finite doubles of equal nonzero length,
  // scale a finite double, all taken as exact), correctly rounded to bits (above).
  Real score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
             std::span<const double> q, std::span<const double> k, double scale) const;

 private:
  void check_head(std::size_t h) const;
  // Sets out (precision >= w + 64) to the exact bias at d, or to an approximation B with |B - b| <= 2^(EXP(B) - w)
  // (B != 0); returns whether out is exact.
  bool exact_bias_approx(mpfr_ptr out, std::size_t h, std::int64_t d, mpfr_prec_t w) const;
  Real exact_bias_of(std::size_t h, std::int64_t d) const;
  Real megatron_bias_of(std::size_t h, std::int64_t d) const;

  KerpleSpec spec_;
  unsigned bits_;
  std::vector<Real> p64_, a64_;  // the exact regime's clamped doubles (53-bit Reals)
  std::vector<Real> p32_, a32_;  // the megatron regime's clamped float32s (64-bit Reals)
};

}  // namespace posenc::reference
