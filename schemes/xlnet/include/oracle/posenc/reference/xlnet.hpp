// posenc/reference/xlnet.hpp — the MPFR oracle of XLNet's relative positional and relative segment attention (Yang et
// al. 2019) as HF transformers implements it (modeling_xlnet.py at 98ad48f2: XLNetModel.relative_positional_encoding,
// positional_embedding, create_mask, the seg_mat of forward; XLNetRelativeAttention.rel_attn_core, rel_shift_bnij).
//
// An independent transcription of the definition in posenc/xlnet_spec.hpp (CONVENTIONS.md §2.1 item 5, §2.9). It
// never includes or links lib/, nor the sinusoidal oracle: the table is evaluated here from XLNet's own formula, and
// pos_seq, c(i, j), the segment types and the mask are computed here from the formula at each (i, j) (the spec's
// xlnet_position / xlnet_defined / xlnet_masked are a second transcription the self-tests compare against).
//   Geometry   Lq queries, Lk = M + Lq keys (M memory keys first), query row i at key position q_i = M + i.
//   pos_seq    row c = 0 .. rows - 1 holds sigma (Lk - c), clamped to [-clamp_len, clamp_len] when clamp_len > 0;
//              rows = Lk + Lq (bi) or Lk + 1 (uni); sigma = +1 forward, -1 backward (bi_data's second half).
//   R[c][m]    m < d/2: sin(pos_seq[c] w_m), m >= d/2: cos(pos_seq[c] w_{m - d/2}), w_k = 10000^(-2k/d), d = d_model.
//   c(i, j)    = Lq - i + j: the row whose unclamped value is sigma (q_i - j) (rel_shift_bnij's column; the
//              self-tests re-enact the reshape).
//   s(i, j)    = 1 iff t_i != type(j), type(j) = 0 for j < M (mem_pad), t_{j - M} otherwise.
//   e(i, j)    = scale ( <q + u_h, k> + <q + v_h, P_h[c(i, j)]> + [token types] <q + s_h, seg_embed[s(i, j)][h]> ),
//              P_h[c][e] = sum_m R[c][m] r[m][h][e]; scale = 1/sqrt(d_head) unless given.
//   defined    bi: every (i, j); uni: j <= q_i (past q_i, rel_shift_bnij reads the next row: junk).
//   visible    defined, not hidden by create_mask (uni: j > q_i; same_length: also j < min(i, Lq)), and the
//              caller's key_mask (empty: every key real; else Lk entries, 0 = padding, 1 = real) keeps key j.
//
// Regimes of R (the spec's regime):
//   exact     the real value, correctly rounded to `bits` (no slack). Derivation, working precision W, |p| < 2^b:
//             x = RN_W(2k/d) (relative error <= 2^-W), w = RN_W(10000^-x): |w - w_k| <= w_k ((1 + 2^-W)
//             e^(ln(10^4) 2^-W) - 1) <= 10.22 2^-W w_k; t = RN_W(p w): |t - p w_k| <= 11.23 2^-W |p| w_k
//             < 2^(b + 3.5 - W) (w_k <= 1); s = RN_W(sin t) (or cos): |s - R| <= 2^(b + 3.5 - W) + 2^-W <=
//             2^(b + 5 - W) =: eps_W(p). p = 0 is exact (sin 0 = 0, cos 0 = 1). Otherwise p w_k is a nonzero algebraic
//             number, so sin/cos of it are transcendental (Lindemann), never a `bits`-bit number nor a midpoint: a Ziv
//             loop (W = bits + 64, then 1.5 W, ...; mpfr_can_round) terminates and rounds once to `bits`.
//   emulated  relative_positional_encoding's float32 steps, each correctly rounded (MPFR in the binary32 format):
//             x = RN32(RN32(2k) / d), pw = RN32(10000^x) (torch.pow(10000, x)), inv = RN32(1 / pw),
//             a = RN32(RN32(p) inv) (the einsum 'i,d->id' is one product per entry; the float32 pos_seq of torch.arange
//             is RN32(p): p itself for |p| < 2^24, and clamping commutes with the monotone RN32), R = RN32(sin a) or
//             RN32(cos a) — exactly that binary32 number at any bits >= 24.
//
// Scores (q, k, the weights and a given scale are finite doubles taken as exact): XlnetOracle::score is correctly
// rounded to `bits` (nearest, ties to even) in every case. With C_m = sum_e (q_e + v_e) r[m][h][e] and the dyadic part
// D = <q + u, k> + [types] <q + s, g>, the bracket is T = D + sum_m C_m R_m; every product of two doubles is exact at
// 106 bits and mpfr_sum adds exact terms into a precision chosen from their exponents, so C_m and D are exact.
//   T dyadic (emulated regime: R_m binary32 numbers; exact regime with pos_seq[c] = 0 or every C_m = 0): T exact, then
//     given scale: RN_bits(T scale), one rounding; default scale, d_head = n^2: RN_bits(T / n), one rounding; otherwise
//     T / sqrt(d_head) is irrational for T != 0 and a Ziv loop on RN_W(T RN_W(1/sqrt(d_head))) rounds it (T = 0: +0).
//   Otherwise (exact regime, p != 0, some C_m != 0): T is transcendental (Lindemann–Weierstrass: 1 and e^(+-i p w_k),
//     k distinct, are linearly independent over the algebraic numbers), so is e (scale != 0): a Ziv loop terminates.
//     At W: R~_m within eps_W(p) (above), T~ = RN_W(D + sum C_m R~_m) (mpfr_sum of exact products):
//       |T~ - T| <= E_T = 2^(b + 5 - W) sum_m |C_m| + ulp_W(T~)/2;
//     e~ = RN_W(T~ scale) [given], RN_W(T~ / n) [n^2 = d_head], RN_W(T~ RN_W(1/sqrt(d_head))) [otherwise]:
//       |e~ - e| <= |scale| E_T + ulp_W(e~)/2,  E_T / n + ulp_W(e~)/2,  E_T + 2^-W |T~| + ulp_W(e~)/2;
//     the bound is evaluated with upward rounding and, once mpfr_can_round accepts it, e~ is rounded once to `bits`.
//     A given scale of 0 returns a zero with the sign of T scale. Not converged by W = 2^20: std::logic_error.
//   XlnetOracle::score_magnitude: S = |scale| (sum_e |q_e + u_e| |k_e| + sum_e sum_m |q_e + v_e| |R_m| |r[m][h][e]| +
//     [types] sum_e |q_e + s_e| |g_e|), the sum of the magnitudes of all products of the score (DESIGN.md §3's scaled
//     error of a dot product), as a double never below the real value (|R_m| bounded above by |R~_m| + eps_W(p)).
//
// Errors: posenc::Error naming the parameter, its value and the accepted values: the spec (posenc::validate), the
// weights (posenc::check_xlnet_weights: "r_w_bias", "r_r_bias", "r_s_bias", "seg_embed", "r"), "bits", "position"
// (|p| > 2^30 - 1), "m" (>= d_model), the lengths ("key_length", "query_length": posenc::check_xlnet_lengths), "i",
// "j" (>= key_length, or an undefined uni entry j > q_i in score), "head", "q" / "k" (not d_head finite values),
// "token_types" (neither empty nor query_length entries), "key_mask" (neither empty nor key_length entries of 0 / 1)
// and "scale" (given and not finite). Thread-safe: no function reads Boost's default precision; MPFR keeps its state
// per thread; XlnetOracle's methods are const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/xlnet_spec.hpp"

namespace posenc::reference {

// Ziv loops start at bits + kXlnetWorkingMargin.
inline constexpr unsigned kXlnetWorkingMargin = 64;

// R's entry at the (signed, already clamped) pos_seq value `position` and column m < d_model, in the spec's regime
// (header: exact correctly rounded to bits; emulated exactly the binary32 number). |position| <= 2^30 - 1.
Real xlnet_table_value(const XlnetSpec&, std::int64_t position, std::size_t m, unsigned bits = kDefaultBits);

// pos_seq[c] of the call (direction and clamp applied), transcribed here; Error naming "c" unless c < rows.
std::int64_t xlnet_pos_seq(const XlnetSpec&, std::size_t c, std::size_t query_length, std::size_t key_length);

// The call's table R: row c = 0 .. rows - 1 at pos_seq[c], [rows][d_model] row-major doubles (exact: the real value
// rounded once to double; emulated: the binary32 numbers).
std::vector<double> xlnet_table_f64(const XlnetSpec&, std::size_t query_length, std::size_t key_length);

class XlnetOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_xlnet_weights) and bits (check_bits); keeps a
  // copy of the weights.
  XlnetOracle(const XlnetSpec& spec, const XlnetWeights& weights, unsigned bits = kDefaultBits);
  const XlnetSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // bi: true; uni: j <= q_i. Checks the lengths, "i" and "j".
  bool defined(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const;

  // defined, not hidden by uni's create_mask (same_length included), and key_mask empty or key_mask[j] != 0.
  // key_mask: empty or key_length entries, each 0 or 1 ("key_mask").
  bool visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j, std::size_t query_length,
               std::size_t key_length) const;

  // e(i, j) of head h, correctly rounded to bits (header). q, k: d_head finite doubles; token_types: empty (no segment
  // term) or query_length entries; scale: std::nullopt = 1/sqrt(d_head), else a finite double. An undefined uni
  // entry (j > q_i) is refused ("j"); a defined entry hidden by the mask still has its score (ask visible()).
  Real score(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i, std::size_t j,
             std::size_t query_length, std::size_t key_length, std::span<const std::int64_t> token_types = {},
             std::optional<double> scale = std::nullopt) const;

  // S(i, j) of the header, a double never below the real value. Same checks as score.
  double score_magnitude(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i,
                         std::size_t j, std::size_t query_length, std::size_t key_length,
                         std::span<const std::int64_t> token_types = {},
                         std::optional<double> scale = std::nullopt) const;

 private:
  XlnetSpec spec_;
  XlnetWeights weights_;
  unsigned bits_;
};

}  // namespace posenc::reference
