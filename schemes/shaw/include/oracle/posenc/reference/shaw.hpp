// posenc/reference/shaw.hpp — the MPFR oracle of clipped relative position representations: Shaw et al. 2018 as
// tensor2tensor implements it, and HF BERT's relative_key / relative_key_query (the same mechanism, opposite sign,
// no clipping).
//
// An independent transcription of the definition in posenc/shaw_spec.hpp (CONVENTIONS.md §2.3; it never includes
// or links lib/): every index computed from the formula at its (i, j), no tables of indices, no recurrences.
//
// Geometry (shaw_spec.hpp, as every bias scheme's): key positions j = 0..Lk-1, query row i at q_i = Lk - Lq + i (the
// queries are the last Lq keys: t2t's range_q = range_k[-length_q:], its cached query and HF BERT's cached query at
// key_length - 1).
//   d(i, j)   = j - q_i  (sign = key_minus_query: tensor2tensor)      = q_i - j  (sign = query_minus_key: HF BERT)
//   idx(i, j) = clip(d, -k, k) + k in [0, 2k], k = max_relative_position. clip = false: check_shaw_lengths refuses
//               Lk > k + 1, so |d| <= Lk - 1 <= k and no clamp is needed (a |d| > k there would be a logic_error).
//   e(i, j)   = scale * ( <q, k> + <q, a^K[idx]> + [key_query] <k, a^K[idx]> ),  scale = 1/sqrt(head_dim) by default
//   z_i       = sum_j alpha(i, j) (v_j + [values] a^V[idx(i, j)]),  alpha(i, .) = softmax of e(i, .) over the keys of
//               row i visible under the mask.
// Mask (ShawMask, the geometry's masks): causal hides the keys j > q_i; a non-empty key_mask (key_length entries,
// each 0 = padding or 1 = real) hides the keys with key_mask[j] == 0. A row left with no visible key has no softmax:
// refused (Error naming "key_mask").
//
// Accuracy (q, k, Q, K, V, the tables and a given scale are finite doubles taken as exact; u = 2^-W below):
//   shaw_distance, shaw_index, ShawOracle::visible: exact integer arithmetic.
//   ShawOracle::score: correctly rounded to `bits` (nearest, ties to even) in every case. The bracket B = <q, k> +
//     <q, a> + [key_query] <k, a> is formed EXACTLY: every product of two doubles is exact at 106 bits, and mpfr_sum
//     adds them into a precision chosen from the terms' exponents (max exponent - lowest bit + log2(count) + 1, at
//     most ~4400 bits), so the sum is exact (checked: MPFR's ternary value is 0, else std::logic_error).
//       given scale (a double): e = RN_bits(B * scale), one rounding.
//       default scale, head_dim = m^2 a perfect square: e = RN_bits(B / m), one rounding (B / 3 is not dyadic: a
//         Ziv loop could not decide a value that is exactly a midpoint, so this case never goes through one).
//       default scale otherwise: sqrt(head_dim) is irrational, so e = B / sqrt(head_dim) is irrational for B != 0
//         (never a `bits`-bit number nor a midpoint) and a Ziv loop terminates: at W = bits + 64 (then 1.5 W, ...)
//         r = RN_W(1/sqrt(head_dim)) (mpfr_rec_sqrt), t = RN_W(B r): |t - e| <= (2u + u^2)|e| < 2^(EXP(t) - W + 2),
//         accepted by mpfr_can_round(t, W - 2, RNDN, RNDZ, bits + 1), then rounded once to `bits`. Not converged by
//         W = 2^20: std::logic_error (never seen). B = 0 gives +0 (a given scale: the sign of B * scale).
//   ShawOracle::output: each returned z_c (c < head_dim) satisfies, with T_c = sum_j alpha(i, j) |w_jc| (w_jc =
//     v_jc + [values] a^V[idx(i, j)][c], over the visible keys; DESIGN.md §3's magnitude of the terms),
//         |returned_c - z_c| <= ulp_bits(returned_c) / 2 + 2^(-bits - 61) T_c  (+ the dropped keys' term below).
//     Derivation, W = bits + 64, u = 2^-W:
//       * every visible key's B_j exactly (as in score); the reference key m has the largest e (decided exactly
//         from the B_j and the sign of scale; a scale of 0 makes every e equal), D_j = B_j - B_m exactly;
//       * Delta_j = scale * D_j <= 0 rounded at W + 32 bits (rel. error <= 2^(1.01 - W - 32), as in score);
//         keys with computed Delta_j < -2^29 are dropped (their alpha < exp(-2^29 (1 - 2^-300)) < 2^(-7.7e8),
//         near the bottom of MPFR's default exponent range; since E_m = 1, dropping key j moves z_c by at most
//         alpha_j (|w_jc| + |z_c|), in all < 2^32 exp(-2^29) max_j |w_jc| < 2^(-7.7e8) max_j |w_jc|); the kept ones
//         have |Delta_j| < 2^30 and so an absolute error < 2^-(W + 0.99) < u/2;
//       * E_j = RN_W(exp(Delta_j)): relative error <= 1.51 u (E_m = 1 exactly);
//       * S = mpfr_sum(E_j) to W bits (correctly rounded: no log2(Lk) growth), N_c = mpfr_sum of the exact products
//         E_j v_jc and E_j a^V_c to W bits: |S - S*| <= 2.52 u S*, |N_c - N*_c| <= 2.52 u sum_j E_j |w_jc|;
//       * z = RN_W(N_c / S): |z - z_c| <= 6.3 u T_c < 2^(3 - W) T_c = 2^(-bits - 61) T_c; then rounded to `bits`.
//     So, when there is no cancellation (T_c ~ |z_c|), the value is within ulp/2 + 2^-61 ulp of the exact one; a
//     single visible key returns RN_bits(v_jc + a^V_c) exactly.
//   ShawOracle::score_magnitude: S(i, j) = |scale| (sum |q_c k_c| + sum |q_c a_c| + [key_query] sum |k_c a_c|) as a
//     double rounded up: the exact sum of magnitudes times |scale| (or 1/sqrt(head_dim)), each step rounded up at
//     128 bits, then rounded up to a double (+inf past DBL_MAX): never below the real value, and the rounded-up
//     double of a value at most 2^-126 relative above it.
//
// Errors: every function throws posenc::Error naming the parameter, the value and the accepted values: the spec
// (posenc::validate: "sign", "max_relative_position", "head_dim", ...), the weights (posenc::check_shaw_weights:
// "keys", "values"), "bits" (posenc::reference::check_bits), the lengths (posenc::check_shaw_lengths:
// "query_length", "key_length"), a query row "i" (>= query_length), a key "j" (>= key_length), the vectors ("q",
// "k" not of head_dim values or not finite; "Q" not query_length * head_dim, "K" / "V" not key_length * head_dim
// values, or not finite), "key_mask" (neither empty nor key_length entries, an entry other than 0 / 1, or a row with
// no visible key) and "scale" (given and not finite). Thread-safe: no function reads Boost's default precision;
// MPFR keeps its state per thread (the default exponent range is assumed); ShawOracle's methods are const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/shaw_spec.hpp"

namespace posenc::reference {

// The output's working precision is bits + kShawWorkingMargin (and the score's Ziv loop starts there).
inline constexpr unsigned kShawWorkingMargin = 64;

// d(i, j) per spec.sign with q_i = key_length - query_length + i. Validates the spec (posenc::validate), the lengths
// (posenc::check_shaw_lengths: "query_length", "key_length"), i < query_length ("i") and j < key_length ("j").
std::int64_t shaw_distance(const ShawSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                           std::size_t key_length);

// idx(i, j) = clip(d(i, j), -k, k) + k in [0, 2k] (clip = false: check_shaw_lengths guarantees |d| <= k). Same
// checks as shaw_distance.
std::int64_t shaw_index(const ShawSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                        std::size_t key_length);

// The masks of the geometry: causal hides the keys j > q_i; key_mask is empty (every key real) or key_length entries,
// each 0 (padding: hidden) or 1 (real). Anything else: Error naming "key_mask".
struct ShawMask {
  bool causal = false;
  std::vector<std::uint8_t> key_mask;
};

class ShawOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_shaw_weights: "keys", "values") and bits
  // (check_bits); keeps copies of both tables.
  ShawOracle(const ShawSpec& spec, const ShawWeights& weights, unsigned bits = kDefaultBits);
  const ShawSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // Whether key j is visible from query row i: (!causal || j <= q_i) && (key_mask empty || key_mask[j] != 0).
  // Checks the lengths, "i", "j" and "key_mask" (its size and 0/1 entries).
  bool visible(const ShawMask& mask, std::size_t i, std::size_t j, std::size_t query_length,
               std::size_t key_length) const;

  // e(i, j) = scale (<q, k> + <q, a^K[idx]> + [key_query] <k, a^K[idx]>), correctly rounded to bits (header).
  // q, k: head_dim finite doubles ("q", "k"); scale: std::nullopt = 1/sqrt(head_dim), else a finite double
  // ("scale"). The mask plays no part (a masked score is -inf by definition; ask visible()).
  Real score(std::span<const double> q, std::span<const double> k, std::size_t i, std::size_t j,
             std::size_t query_length, std::size_t key_length, std::optional<double> scale = std::nullopt) const;

  // z_i = sum_j alpha(i, j) (v_j + [values] a^V[idx(i, j)]), alpha(i, .) = softmax over row i's visible keys of
  // score(Q_i, K_j, ...). Q: [query_length][head_dim], K, V: [key_length][head_dim], row-major finite doubles.
  // Returns head_dim Reals of `bits` bits, each within ulp/2 + 2^(-bits-61) sum_j alpha |w_jc| of the exact value
  // (header). A row with no visible key: Error naming "key_mask".
  std::vector<Real> output(std::span<const double> Q, std::span<const double> K, std::span<const double> V,
                           std::size_t i, std::size_t query_length, std::size_t key_length, const ShawMask& mask = {},
                           std::optional<double> scale = std::nullopt) const;

  // S(i, j) = |scale| (sum |q_c k_c| + sum |q_c a^K_c| + [key_query] sum |k_c a^K_c|), a^K = a^K[idx(i, j)]: the
  // scaled-error magnitude of DESIGN.md §3, as a double rounded up (never below the real value). Same checks as
  // score.
  double score_magnitude(std::span<const double> q, std::span<const double> k, std::size_t i, std::size_t j,
                         std::size_t query_length, std::size_t key_length,
                         std::optional<double> scale = std::nullopt) const;

 private:
  std::span<const double> key_row(std::int64_t idx) const;
  std::span<const double> value_row(std::int64_t idx) const;

  ShawSpec spec_;
  unsigned bits_;
  std::vector<double> keys_;    // a^K: [2k + 1][head_dim], row-major
  std::vector<double> values_;  // a^V: [2k + 1][head_dim] (empty unless spec.values)
};

}  // namespace posenc::reference
