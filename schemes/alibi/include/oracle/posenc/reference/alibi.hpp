// posenc/reference/alibi.hpp — the MPFR oracle of ALiBi, attention with linear biases (Press et al. 2022).
//
// An independent transcription of the definition in posenc/alibi_spec.hpp (it never includes or links lib/): every
// slope straight from its closed form, every bias from the variant's integer times the slope, no tables shared
// between heads, no recurrences.
//
// Exact regime (AlibiRegime::exact). n = heads, b = bias_max (the spec's double taken as an exact binary number),
// c = 2^floor(log2 n):
//   m_h = 2^E_h,  E_h = -b (h+1) / c            (h < c)
//                 E_h = -b (2j+1) / (2c)        (h = c + j, j < n - c)
//   E_h is formed exactly (b has 53 bits, (h+1) or (2j+1) at most 18, c a power of two: 71 bits < 128).
//   bias(h, i, j) = m_h x,  x = alibi_multiplier(...) (a signed integer, |x| < 2^31), so every variant is m * x:
//     relative     x = -(q_i - j) for j <= q_i, else 0        q_i = Lk - Lq + i (the queries are the last keys)
//     key          x = j
//     key_shifted  x = j - (Lk - 1)
//     key_counted  x = (cumsum(mask)_j - 1) mask_j          (no mask: every key real, x = j)
//     symmetric    x = -|q_i - j|
//   Accuracy (all three are correctly rounded to `bits`, |returned - true| <= ulp_bits(true)/2, ties to even):
//     alibi_slope, slope():  MPFR's exp2 of the exact E_h (correctly rounded by MPFR).
//     bias, exact_bias:      m_h x is irrational unless E_h is an integer (2^(p/q), q > 1, is irrational) or x = 0.
//                            Integer E_h or x = 0: 2^E_h x is formed exactly and rounded once. Otherwise a Ziv
//                            loop: t = RN_W(2^E_h) at W = bits + 64 (then 1.5 W, ...), the product t x formed
//                            exactly, |t x - m_h x| <= 2^(EXP(t x) - W); accepted when mpfr_can_round proves that
//                            every number within that bound rounds to the same `bits`-bit number.
//     score:                 scale <q, k> + exact_bias(...) with q, k, scale finite doubles taken as exact: each
//                            scale q_c k_c is exact (159 bits); with an exact bias (above) the terms are summed
//                            by mpfr_sum straight to `bits` (one rounding); otherwise a Ziv loop: mpfr_sum of the
//                            exact terms and the W-bit bias t x to W bits, error <= 2^(EXP(s) - W - 1) +
//                            2^(EXP(t x) - W), accepted by mpfr_can_round (cancellation just takes more rounds).
//     A Ziv loop that has not converged by W = 2^20 bits throws std::logic_error (never seen; the value would have
//     to lie within 2^-2^20 relative of a rounding boundary).
//
// Emulated regimes: the float32 numbers the named code computes, each step correctly rounded (RN32, RN64 = round
// to nearest-even binary32 / binary64, with IEEE subnormals and overflow; DESIGN.md §2 — real Python/torch pow may
// be an ulp off: that is the budget envelope's business, not the oracle's). c' = c for h < c, 2c for h = c + j.
//   ofirpress (ofirpress get_slopes, gpt-neox AliBi._get_slopes; Python floats, then torch.Tensor(list)):
//     s = RN64(2^(-8/c')), e = h (h < c) or 2j (h = c + j),  slope = RN32(RN64(s * RN64(s^e)))
//   bloom (HF build_alibi_tensor): base = RN32(RN64(2^(-8/c))), slope_h = RN32(base^(h+1)) (h < c);
//     extra = RN32(RN64(2^(-4/c))), slope_{c+j} = RN32(extra^(2j+1))
//   mpt (HF build_mpt_alibi_tensor): P = 2^ceil(log2 n), t = h+1 (P = n), else t = 2(h+1) (h < c) or 2j+1
//     (h = c + j);  e_t = RN32(RN32(t) * RN32(RN64(b / P))),  slope = RN32(1 / RN32(2^e_t))
//   bias (every emulated regime) = RN32(RN32(x) * slope): torch multiplies the integer position tensor by the
//     float32 slopes in float32 (int64/int32 * float32 -> float32). Results are exact float32 numbers held in a
//     Real of `bits` bits (bits >= 24 holds every binary32 number, subnormals included).
//   Verified against the real code (float32 steps; see schemes/alibi/oracle.cpp for the lines):
//     ofirpress/attention_with_linear_biases@3b7c2eca8397d27be08c6dffad9b60855507f9b7 fairseq/models/transformer.py
//       TransformerDecoder.__init__ get_slopes, self.alibi = slopes * arange(maxpos);
//     huggingface/transformers@9d97831a1cbb420edac062c2e8454ce9ac1c4b79 models/bloom/modeling_bloom.py
//       build_alibi_tensor; @4352620161a5f53911ddc19dbfa1bd76d92c93be models/mpt/modeling_mpt.py
//       build_mpt_alibi_tensor (MptAttention slices the max_seq_len row to the last key_length keys: j - (Lk - 1));
//     and against properties/heldout/data/hf/alibi_{bloom,mpt}.json (torch 2.11 CPU): MPT's 38 x 6 bias rows and
//     BLOOM's padded bias bit for bit; BLOOM's 1234 slopes bit for bit except 4 (n = 32, 40, 48: h = 14; n = 128:
//     h = 90), where base^k lies within 0.03 ulp of a float32 midpoint and torch's (not correctly rounded) float32
//     pow returned the other neighbour, one ulp below the oracle. ofirpress: the float32 slope equals RN32 of the
//     exact slope for every head of every n <= 65536 (its float64 steps never cross a float32 boundary), and the
//     same expression in C doubles (what Python runs) gives the same float32 for every n <= 128.
//   mpt near the top of bias_max's range (b <= 128): 2^e_t with e_t = 128 overflows float32 and the slope is
//     RN32(1 / inf) = +0; e_t in (126, 128) gives float32 subnormal slopes. The oracle computes exactly that.
//
// key_mask: empty (every key real) or key_length entries, each 0 (padding) or 1 (real). It is validated whenever
// it is non-empty (any variant), and used only by key_counted; the other variants ignore its values.
//
// Every function calls posenc::validate(spec) first and throws posenc::Error (naming the parameter, the value and
// the accepted values) for a bad head ("h"), lengths (posenc::check_alibi_lengths: "query_length",
// "key_length"), query row ("i" < query_length), key ("j" < key_length), mask ("key_mask"), vectors ("q" empty or
// not finite, "k" of another length or not finite), "scale" (not finite), "regime" (alibi_emulated_slope of the
// exact regime) or "bits" (posenc::reference::check_bits). Results are Reals of exactly `bits` bits.
// Thread-safe: no function reads Boost's default precision; MPFR keeps its state (exponent range, caches) per
// thread. AlibiOracle's methods are const and share nothing mutable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/alibi_spec.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference {

// The first working precision of the Ziv loops is bits + kAlibiWorkingMargin.
inline constexpr unsigned kAlibiWorkingMargin = 64;

// The exact slope m_h = 2^E_h (above) whatever spec.regime says, correctly rounded to `bits`. h < heads.
Real alibi_slope(const AlibiSpec&, std::size_t h, unsigned bits = kDefaultBits);

// The float32 slope of spec.regime (ofirpress, bloom, mpt) exactly, per the steps above, as a Real of `bits` bits.
// The exact regime has none: posenc::Error naming "regime".
Real alibi_emulated_slope(const AlibiSpec&, std::size_t h, unsigned bits = kDefaultBits);

// The integer x the variant multiplies at query row i (< query_length), key j (< key_length), signed so that the
// bias is m * x for every variant (above). key_mask: see above (used by key_counted only).
std::int64_t alibi_multiplier(const AlibiSpec&, std::size_t i, std::size_t j, std::size_t query_length,
                              std::size_t key_length, std::span<const std::uint8_t> key_mask = {});

class AlibiOracle {
 public:
  // Validates the spec (posenc::Error naming the field) and bits; precomputes every head's exact slope at
  // bits + kAlibiWorkingMargin (and the float32 slopes of an emulated regime).
  explicit AlibiOracle(const AlibiSpec& spec, unsigned bits = kDefaultBits);
  const AlibiSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // The regime's slope of head h: exact -> m_h correctly rounded to bits; emulated -> the float32 slope exactly.
  Real slope(std::size_t h) const;

  // The bias of head h at (i, j) in the spec's regime: exact -> m_h x correctly rounded to bits;
  // emulated -> RN32(RN32(x) * slope32) exactly (a float32 number).
  Real bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
            std::span<const std::uint8_t> key_mask = {}) const;
  // The exact regime's bias whatever spec.regime says (error-vs-exact measurements of the emulated regimes).
  Real exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                  std::span<const std::uint8_t> key_mask = {}) const;

  // scale * <q, k> + exact_bias(h, i, j, ...), exact mathematics (q, k finite doubles of equal nonzero length,
  // scale a finite double, all taken as exact), correctly rounded to bits (above).
  Real score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
             std::span<const double> q, std::span<const double> k, double scale,
             std::span<const std::uint8_t> key_mask = {}) const;

 private:
  void check_head(std::size_t h) const;
  Real exact_bias_of(std::size_t h, std::int64_t x) const;

  AlibiSpec spec_;
  unsigned bits_;
  std::vector<Real> slope_w_;      // 2^E_h at bits + kAlibiWorkingMargin (RN)
  std::vector<bool> slope_exact_;  // E_h is an integer: slope_w_ holds m_h exactly
  std::vector<Real> slope32_;      // emulated regimes: the float32 slopes (64-bit Reals); empty otherwise
};

}  // namespace posenc::reference
