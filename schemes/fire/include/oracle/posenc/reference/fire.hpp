// posenc/reference/fire.hpp — the MPFR oracle of FIRE, functional interpolation for relative positions (Li et al.
// 2023), as mcleish7/arithmetic's FIRE module computes it in eval mode.
//
// An independent transcription of the definition in posenc/fire_spec.hpp (it never includes or links lib/): every
// bias straight from the formula at its (query, key) position pair, no tables, no shared rows.
//
// Definition (fire_spec.hpp). Weights c, L_multiplier, init_L, W1[k], b1[k] (k < w = mlp_width), W2[h][k], b2[h];
// query position q, key position j (0 <= q, j < 2^24), d = |q - j|:
//     thr = |L_multiplier init_L|,  N = max(q, thr),  x = ln(|c| d + 1) / (ln(|c| N + 1) + eps),
//     r_k = max(0, W1[k] x + b1[k]),  b_h = b2[h] + sum_k W2[h][k] r_k.
// Geometry (as every bias scheme's, posenc/bias.hpp): Lk keys at positions 0..Lk-1, the Lq queries are the last Lq
// of them: query row i sits at q_i = Lk - Lq + i. The bias is defined for every (i, j), j > q_i included (a
// function of |q_i - j|; the causal mask is applied elsewhere).
//
// Exact regime: the real numbers above with the doubles c, L_multiplier, init_L, W1, b1, W2, b2 and eps as given.
//   Every result is the true value correctly rounded to `bits` (nearest, ties to even; an exact zero is +0: real
//   arithmetic has no signed zero). Evaluation by rigorous enclosures: at working precision W (first
//   bits + kFireWorkingMargin, then W + W/2, ...) each step is rounded outward (MPFR's log, +, /, fma and sum are
//   correctly rounded in the directed modes), giving lo <= value <= hi; a result is accepted when lo and hi round
//   to the same `bits`-bit number (rounding is monotone, so every number between them, the true value included,
//   rounds there too). Exactly formed: thr (106 bits), u1 = 1 + |c| d and u2 = 1 + |c| N (at most 3288 bits: the
//   lowest bit of |c| thr is >= 2^-3222, the value < 2^65), and the MLP's rational parts below (<= 2201 bits:
//   multiples of 2^-2148 below 2^53).
//   * x = 0 exactly when c = 0 or d = 0. Then b_h = b2 + sum_{k: b1[k] > 0} W2[h][k] b1[k] is rational: summed
//     exactly (mpfr_sum at 2304 bits) and rounded once; x() returns +0.
//   * Otherwise x is irrational. Proof: u1 > 1 is rational, so L1 = ln u1 is nonzero and, by Hermite-Lindemann
//     (e^a is transcendental for algebraic a != 0), transcendental. If u2 = 1, x = L1 / eps is transcendental.
//     If u2 > 1 and x = p/q were rational (p, q > 0 integers; x > 0), then q L1 = p (ln u2 + eps), i.e.
//     ln(u1^q / u2^p) = p eps, a nonzero rational; then e^(p eps) = u1^q / u2^p would be rational,
//     contradicting Hermite-Lindemann. (This uses eps > 0, which validate() enforces: eps >= 1e-12. With eps = 0,
//     u1 = u2^k would give x = k.)
//     Consequences: (1) W1[k] x + b1[k] != 0 whenever W1[k] != 0 (else x = -b1/W1 would be rational), so every
//     ReLU is decided once the enclosure of W1 x + b1 excludes 0 (W1[k] = 0: the constant max(0, b1[k])); the
//     oracle raises W until every ReLU is decided. (2) With the active set K decided, b_h = A x + B with
//     A = sum_{k in K} W2 W1, B = b2 + sum_{k in K} W2 b1 + sum_{W1[k] = 0, b1[k] > 0} W2 b1, both rational and
//     formed exactly. A = 0: b_h = B, rounded once. A != 0: b_h is irrational, so it is never a `bits`-bit number
//     or a midpoint between two, and the enclosure [RD(A x_lo + B), RU(A x_hi + B)] (x_lo, x_hi swapped for
//     A < 0) eventually rounds to one number: the loop terminates. Cancellation (b_h tiny against |A x|, |B|) only
//     takes more rounds.
//   * score: scale <q, k> + b_h, each scale q_c k_c exact (159 bits); with b_h rational all terms are summed by
//     mpfr_sum straight to `bits` (one rounding); otherwise the score is irrational (a rational plus an irrational)
//     and a Ziv loop sums the exact terms with the enclosure's ends, rounded down and up respectively.
//   A Ziv loop that has not converged by W = 2^20 bits throws std::logic_error (never seen: by the argument above
//   the value would have to lie within ~2^-2^20 relative of a rounding boundary or a ReLU's kink).
//
// Cramming regime (fire_spec.hpp's float32 steps; each RN32 is one correct rounding to binary32 with subnormals,
// mp.hpp's rn_* or mpfr_get_flt of an exactly formed sum):
//     c32, Lm32, iL32, W1, b1, W2, b2 = RN32(weights); e32 = RN32(eps)
//     thr = |RN32(Lm32 iL32)|; Q = q, J = j (exact in float32 below 2^24), D = Q - J, N = max(Q, thr)
//     l = RN32(ln(RN32(|RN32(c32 D)| + 1))),  n = RN32(ln(RN32(|RN32(c32 N)| + 1))),  x = RN32(l / RN32(n + e32))
//     h_k = RN32(RN32(x W1[k]) + b1[k])   (two roundings),  r_k = max(h_k, +0)
//     mlp_sum fma:     acc = +0; for k = 0..w-1: acc = RN32(r_k W2[h][k] + acc)   (one rounding: fused multiply-add)
//     mlp_sum unfused: acc = +0; for k = 0..w-1: acc = RN32(acc + RN32(r_k W2[h][k]))   (two roundings)
//     b_h = RN32(acc + b2[h])
//   Results are binary32 numbers held exactly in a Real of `bits` bits (bits >= 24 holds every binary32 number).
//   Every step stays finite for the validated weights (|v| <= 1e6, eps >= 1e-12, positions < 2^24).
//
// Errors: every function throws posenc::Error naming the parameter, the value and the accepted values: the spec
// (posenc::validate: "heads", "mlp_width", "eps", "regime"), the weights (posenc::check_fire_weights: "c",
// "L_multiplier", "init_L", "w1", "b1", "w2", "b2"), "bits" (check_bits), a head "h" (>= heads), positions "q" /
// "j" (outside [0, 2^24)), the lengths (posenc::check_alibi_lengths, posenc::check_fire_key_length:
// "query_length", "key_length"), a query row "i" (>= query_length), a key "j" (>= key_length), the vectors ("q"
// empty or not finite, "k" of another length or not finite) and "scale" (not finite). Thread-safe: no function
// reads Boost's default precision; MPFR keeps its state per thread; FireOracle's methods are const and share
// nothing mutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/fire_spec.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference {

// The first working precision of the Ziv loops is bits + kFireWorkingMargin.
inline constexpr unsigned kFireWorkingMargin = 64;

class FireOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_fire_weights) and bits (check_bits); rounds
  // the weights to float32 for the cramming regime.
  FireOracle(const FireSpec& spec, const FireWeights& weights, unsigned bits = kDefaultBits);
  const FireSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // x at query position q and key position j (0 <= q, j < 2^24) in the spec's regime: exact -> the real x
  // correctly rounded to bits (+0 when c = 0 or q = j); cramming -> the float32 x of the steps, exactly.
  Real x(std::int64_t q, std::int64_t j) const;

  // The bias of head h at (q, j) in the spec's regime: exact -> the real b_h correctly rounded to bits; cramming ->
  // the float32 steps, exactly (a binary32 number).
  Real bias_at(std::size_t h, std::int64_t q, std::int64_t j) const;
  // The exact regime's bias whatever spec.regime says (the weights and eps taken as the exact doubles given),
  // correctly rounded to bits: the error-vs-exact reference of the cramming regime.
  Real exact_bias_at(std::size_t h, std::int64_t q, std::int64_t j) const;

  // S = |b2[h]| + sum_k |W2[h][k]| (|W1[k]| x + |b1[k]|) with the exact regime's x: the condition scale of the
  // MLP's sum (the budget's error is relative to it). Returned as a Real of 64 bits holding an upper bound:
  // S <= returned <= S (1 + 2^-62) (outward rounding throughout, the last step rounded up to 64 bits).
  Real condition_scale(std::size_t h, std::int64_t q, std::int64_t j) const;

  // bias_at / exact_bias_at at q_i = key_length - query_length + i and key position j. Validates the lengths
  // (posenc::check_alibi_lengths, posenc::check_fire_key_length: 1 <= Lq <= Lk <= 2^24), "i" < query_length and
  // "j" < key_length.
  Real bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const;
  Real exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                  std::size_t key_length) const;

  // scale * <q, k> + exact_bias(h, i, j, ...), exact mathematics (q, k finite doubles of equal nonzero length,
  // scale a finite double, all taken as exact), correctly rounded to bits (header).
  Real score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
             std::span<const double> q, std::span<const double> k, double scale) const;

 private:
  void check_head(std::size_t h) const;
  Real exact_x_of(std::int64_t q, std::int64_t d) const;
  Real exact_bias_of(std::size_t h, std::int64_t q, std::int64_t d) const;
  Real cramming_x_of(std::int64_t q, std::int64_t j) const;
  Real cramming_bias_of(std::size_t h, std::int64_t q, std::int64_t j) const;

  FireSpec spec_;
  FireWeights weights_;  // the doubles as given (exact regime)
  unsigned bits_;
  // The cramming regime's float32 weights (RN32 of the doubles) and RN32(eps).
  float c32_, lm32_, il32_, e32_;
  std::vector<float> w1_32_, b1_32_, w2_32_, b2_32_;
};

}  // namespace posenc::reference
