// posenc/reference/transformer_xl.hpp — the MPFR oracle of Transformer-XL's relative attention (Dai et al. 2019,
// RelPartialLearnableMultiHeadAttn of kimiyoung/transformer-xl).
//
// An independent transcription of the definition in posenc/transformer_xl_spec.hpp (CONVENTIONS.md §2.1 item 5,
// §2.5), checked against kimiyoung/transformer-xl@01102106eeb627c592a023cd7f9f799b7d11b27f pytorch/mem_transformer.py
// (PositionalEmbedding, RelMultiHeadAttn._rel_shift, RelPartialLearnableMultiHeadAttn.forward, MemTransformerLM.
// _forward). It never includes or links lib/, nor the sinusoidal oracle: R is evaluated here from Transformer-XL's own
// formula, and the mask is transcribed from the code's triu/tril, not taken from posenc::transformer_xl_masked.
//
// Definition (d = d_model, d/2 frequencies; q_i = key_length - query_length + i, the queries are the last keys):
//   pos(delta)   = min(delta, clamp_len) if clamp_len > 0 else delta, for delta = q_i - j >= 0 only
//   R(p, m)      = sin(p w_k) for m = k < d/2, cos(p w_k) for m = d/2 + k;  w_k = 10000^(-2k/d)
//   table        row c = 0 .. klen - 1 is R(pos(klen - 1 - c), .): pos_seq = arange(klen - 1, -1, -1) (descending)
//   c(i, j)      = klen - 1 - (q_i - j): the column _rel_shift moves to (i, j) for j <= q_i (the test checks this on
//                  the literal zero-pad-and-reshape)
//   e(i, j)      = scale ( <q + u_h, k> + <q + v_h, P_h[c(i, j)]> ),  P_h[c][e] = sum_m W_R[h d_head + e][m] R[c][m],
//                  u = r_w_bias, v = r_r_bias, W_R = r_net; scale = 1/sqrt(d_head) unless given
//   mask         triu(ones(qlen, klen), 1 + mlen) + [same_length] tril(ones(qlen, klen), -s), mlen = klen - qlen,
//                  s = qlen - (klen - mem_len) if klen > mem_len else qlen (s < 0 when klen - mem_len > qlen):
//                  hidden iff j - i >= 1 + mlen (j > q_i), or [same_length] j - i <= -s.
//
// Regimes of R and their accuracy (|returned - true|; ulp_bits(x) = 2^(floor(log2|x|) - bits + 1)):
//   exact     The real sin/cos CORRECTLY ROUNDED to `bits` (nearest, ties to even): |returned - R| <= ulp_bits(R)/2.
//             p = 0 gives 0 / 1 exactly. For p >= 1, a = p w_k is a nonzero algebraic number (10000^(-2k/d) is
//             algebraic), so sin a and cos a are transcendental (Lindemann): never a `bits`-bit number nor a midpoint,
//             and a Ziv loop terminates. At W = bits + 64 (then 1.5 W, ...; u = 2^-W), each step one MPFR rounding:
//               x = RN_W(2k/d): |x - 2k/d| <= u;  w = RN_W(10000^-x): |w/w_k - 1| <= (e^(u ln 10^4) - 1)(1 + u) + u
//               <= 10.24 u;  a = RN_W(p w): |a - p w_k| <= p w_k (10.24 u + 1.0001 u) <= 11.25 u p < 2^(35 - W)
//               (p < 2^31, w_k <= 1);  t = RN_W(sin a): |t - R| <= 2^(35 - W) + 2^(EXP(t) - W - 1)
//             (sin, cos are 1-Lipschitz), accepted when mpfr_can_round(t, err, RNDN, RNDZ, bits + 1) holds for
//             err = EXP(t) - that bound's exponent; not converged by W = 2^20: std::logic_error (never seen).
//   emulated  PositionalEmbedding's float32 steps, each correctly rounded (RN32 = nearest-even binary32), exactly:
//               x = RN32(RN32(2k) / d)        torch.arange(0.0, d, 2.0) / d  (2k and d < 2^24: exact in float32)
//               P = RN32(10000^x)             10000 ** tensor: the real power of the float32 x, rounded once
//               inv = RN32(1 / P)             1 / tensor (Tensor.reciprocal)
//               a = RN32(RN32(p) inv)         torch.ger(pos_seq, inv_freq); pos_seq is float32: p exact below 2^24;
//                                             above, RN32(p) is taken — what a float32 arange holding the integers
//                                             rounded once has (clamp_ commutes with the monotone RN32); a float32
//                                             arange that accumulates in float32 (CUDA) may differ there
//               R = RN32(sin a) | RN32(cos a) the float32 number itself (subnormals on float32's grid).
//             A real torch pow / sin / cos is not correctly rounded (1-2 ulp): that is the envelope's business.
//
// transformer_xl_table_f64: each entry as a double: emulated = the float32 number; exact = R correctly rounded to 53
//   bits, which is RN64(R) whenever |R| >= 2^-1022 (a smaller |R| would need p w_k within ~2^-1022 of a multiple of
//   pi; it would be rounded twice).
//
// TransformerXlOracle::score — CORRECTLY ROUNDED to `bits` (nearest, ties to even) in both regimes; q, k, u, v, W_R
//   and a given scale are finite doubles taken as exact. Exact reassociation: <q + v, P[c]> = sum_m g_m R_m with
//   g_m = sum_e (q_e + v_e) W_R[h d_head + e][m], so e = scale S, S = A + sum_m g_m R_m, A = <q + u, k>. A and every
//   g_m are formed EXACTLY (x + y of doubles, exact products, mpfr_sum at the precision the terms' exponents need;
//   MPFR's ternary value checked, else std::logic_error).
//   S exact (emulated R; or p = 0, where R is 0 / 1; or every g_m = 0): a given scale: RN_bits(S scale); default with
//     d_head = m^2: RN_bits(S / m) (one rounding each: a Ziv loop could not decide an exact midpoint); default
//     otherwise, S != 0: S / sqrt(d_head) is irrational, so the loop below (with G = 0) terminates; S = 0: +0 (a
//     given scale: the sign of 0 * scale).
//   S transcendental (exact regime, p >= 1, some g_m != 0). Why: the angles a_k = p w_k are distinct positive
//     algebraic numbers; over a Q-basis b_1..b_r of their span (scaled so a_k = sum_l n_kl b_l with integer n_k, all
//     distinct and non-zero), the z_l = e^(i b_l) are algebraically independent (Lindemann-Weierstrass) and
//     sin a_k = (Z_k - 1/Z_k)/2i, cos a_k = (Z_k + 1/Z_k)/2 with the monomials Z_k = z^n_k, so S - A is a Laurent
//     polynomial whose coefficient of Z_k, g_cos/2 + g_sin/2i, vanishes only if both g do; S algebraic would be a
//     non-trivial algebraic relation among the z_l, so S, and e = S * (1/sqrt(d_head) or a non-zero double), is
//     transcendental: never a `bits`-bit number or a midpoint. Ziv loop at W = bits + 64, then 1.5 W, ... (u = 2^-W):
//       r_m = RN_W(sin / cos a) from the W-bit angle above: |r_m - R_m| <= eps = 2^(36 - W)  (2^(35 - W) + 2^-W);
//       S_W = mpfr_sum(A, g_m r_m) to W bits, the products exact: |S_W - S| <= G eps + h_S,  G = sum_m |g_m|,
//         h_S = 2^(EXP(S_W) - W - 1);
//       given scale s != 0: t = RN_W(s S_W):                    |t - e| <= |s| (G eps + h_S) + h_t;
//       default:            t = RN_W(S_W RN_W(d_head^(-1/2))):  |t - e| <= G eps + h_S + |S_W| u + h_t
//                           (d_head^(-1/2) <= 1, RN_W(d_head^(-1/2)) within u d_head^(-1/2));
//       h_t = 2^(EXP(t) - W - 1). The bound E is evaluated upward at 64 bits; t is accepted when
//       mpfr_can_round(t, EXP(t) - EXP(E), RNDN, RNDZ, bits + 1) (so every number within E of t rounds alike).
//       A given scale of 0: S's sign from the loop at scale 1, then the signed zero 0 * S.
//     Cancellation (|S| << G) only costs rounds. Not converged by W = 2^20: std::logic_error (never seen).
//
// Errors: posenc::Error naming the parameter, its value and the accepted range: the spec (posenc::validate), the
// weights (posenc::check_transformer_xl_weights: "r_w_bias", "r_r_bias", "r_net"), "bits" (check_bits), "position"
// (not in 0 .. 2^31 - 1, or above clamp_len > 0: not a value pos_seq holds), "m" (>= d_model), "key_length" /
// "query_length" (posenc::check_transformer_xl_lengths; the f64 table also refuses key_length * d_model > 2^26),
// "head", "i", "j" (>= key_length; score also for an undefined entry j > q_i), "q" / "k" (not d_head finite values),
// "scale" (given and not finite), "key_mask" (neither empty nor key_length entries, or an entry other than 0 / 1).
// Thread-safe: no function reads Boost's default precision; MPFR keeps its state per thread (the default exponent
// range is assumed); the oracle's methods are const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/transformer_xl_spec.hpp"

namespace posenc::reference {

// The Ziv loops start at bits + kTxlWorkingMargin bits.
inline constexpr unsigned kTxlWorkingMargin = 64;
// transformer_xl_table_f64 refuses key_length * d_model above this (an oracle table of 512 MiB).
inline constexpr std::size_t kTxlMaxTableEntries = std::size_t{1} << 26;

// R's entry at pos_seq value `position` (0 <= position < 2^31, <= clamp_len when clamp_len > 0) and column m < d_model
// in the spec's regime: exact correctly rounded to `bits`, emulated the float32 number exactly (header).
Real transformer_xl_table_value(const TransformerXlSpec& spec, std::int64_t position, std::size_t m,
                                unsigned bits = kDefaultBits);

// The table of a call with key_length klen: row c = 0 .. klen - 1 at pos(klen - 1 - c), [klen][d_model] row-major,
// each entry a double (exact: R rounded once; emulated: the float32 number).
std::vector<double> transformer_xl_table_f64(const TransformerXlSpec& spec, std::size_t key_length);

class TransformerXlOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_transformer_xl_weights) and bits; keeps copies.
  TransformerXlOracle(const TransformerXlSpec& spec, const TransformerXlWeights& weights,
                      unsigned bits = kDefaultBits);
  const TransformerXlSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // j <= q_i. Checks the lengths, "i" (< query_length) and "j" (< key_length).
  bool defined(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const;

  // defined, not hidden by same_length's tril (header), and key_mask empty or key_mask[j] != 0. Checks as defined()
  // and "key_mask" (empty or key_length entries, each 0 = padding or 1 = real).
  bool visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j, std::size_t query_length,
               std::size_t key_length) const;

  // e(i, j) of head h, correctly rounded to bits() (header). q, k: d_head finite doubles; scale: std::nullopt =
  // 1/sqrt(d_head), else a finite double. The mask plays no part beyond definedness (ask visible()).
  Real score(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i, std::size_t j,
             std::size_t query_length, std::size_t key_length, std::optional<double> scale = std::nullopt) const;

 private:
  TransformerXlSpec spec_;
  unsigned bits_;
  std::vector<double> r_w_bias_;  // u: [heads][d_head]
  std::vector<double> r_r_bias_;  // v: [heads][d_head]
  std::vector<double> r_net_;     // W_R: [heads * d_head][d_model]
};

}  // namespace posenc::reference
