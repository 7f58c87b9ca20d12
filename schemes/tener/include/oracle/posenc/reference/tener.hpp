// posenc/reference/tener.hpp — the MPFR oracle of TENER's relative attention (Yan et al. 2019).
//
// An independent transcription of the definition in posenc/tener_spec.hpp (CONVENTIONS.md §2.6; fastnlp/TENER@d2614d50
// modules/relative_transformer.py). It never includes or links lib/, nor the sinusoidal oracle: the table is
// evaluated here from TENER's own get_embedding formula.
//
// Table R of a call of length L (rows t = -L .. L - 1, d_head columns, h = d_head // 2 >= 2 pairs):
//   R(t)[k] = sin(t w_k), R(t)[h + k] = cos(t w_k), k < h, w_k = exp(-k ln(10000) / (h - 1)); odd d_head: column
//   d_head - 1 is 0; the row t = -L is all 0 exactly when L > init_size / 2 (the table a fresh module rebuilds for
//   2L positions, its row 0 zeroed as padding_idx; a call with L <= init_size / 2 reads rows 1 .. of the init
//   table, never its zeroed row: tener_spec.hpp).
//   exact     the real sin / cos, correctly rounded to `bits` (nearest, ties to even) in every case, no slack:
//             t = 0 gives 0 and 1 exactly. For t != 0, t w_k is a nonzero algebraic number (w_k = 10000^(-k/(h-1)) is
//             algebraic), so by Lindemann-Weierstrass e^(i t w_k) and hence sin(t w_k), cos(t w_k) are transcendental:
//             never a `bits`-bit number nor a midpoint, so a Ziv loop terminates. At working precision W (u = 2^-W):
//             x = RN(RN(RN(ln 10000) k) / (h - 1)) has |x - x*| <= ((1 + u)^3 - 1) ln(10000) <= 27.7 u; w =
//             RN(exp(-x)) has relative error <= 28.7 u; a = RN(t w) relative error <= 29.8 u < 2^5 u, so |a - t w_k|
//             < 2^(5 + b - W) with |t| < 2^b; y = RN(sin a) then |y - sin(t w_k)| < 2^(5 + b - W) + 2^(-W - 1), which
//             mpfr_can_round(y, ., RNDN, RNDZ, bits + 1) turns into a decision; W starts at bits + 64 + b and grows
//             by half until it decides (std::logic_error past 2^20 bits: never seen).
//   emulated  get_embedding's float32 steps, each correctly rounded (RN32 / RN64: to nearest-even binary32 / 64):
//             c = RN64(RN64(ln 10000) / (h - 1))                    Python: math.log(10000) / (half_dim - 1)
//             w_k = RN32(exp(RN32(RN32(k) RN32(-c))))                torch.exp(arange(half_dim).float() * -emb)
//             a = RN32(RN32(t) w_k)                                  arange(-N//2, N//2).float()[:, None] * w[None]
//             R(t)[k] = RN32(sin a), R(t)[h + k] = RN32(cos a)       exactly these float32 numbers.
//             Why RN32(-c): a Python float times a float32 tensor has result dtype float32 (a wrapped number does
//             not promote), and on CPU TensorIterator::compute_types (promote_inputs_to_common_dtype_) converts the
//             0-dim double scalar to float32 before mul_kernel's plain float a * b runs (aten/src/ATen/native/cpu/
//             BinaryOpsKernel.cpp keeps a wider opmath scalar only for bf16/f16); CUDA reads the scalar as its float
//             opmath type. So the product is RN32(k * RN32(-c)), not RN32(k * -c). RN32(t) = t for |t| <= 2^24;
//             beyond, it is CPU torch.arange's value (start + i * step in double, cast to float32). Real torch exp /
//             sin / cos are not correctly rounded (1-2 ulp is common): this is the convention of DESIGN.md §2.
//   The sin half is odd and the cos half even in t in both regimes, bit for bit (RN is symmetric), t != -L.
//
// Scores of head h, query i, key j (0 <= i, j < L; a = r_r_bias[h], b = r_w_bias[h]; q, k finite doubles, exact):
//   e(i, j) = ( <q + a, k> + <q + b, R(j - i)> + <k, R(i - j)> ) * s
//   s: a given finite double, else 1 / sqrt(d_head) if spec.scale, else 1. The row t = -L never appears
//   (|i - j| <= L - 1). R is the regime's table: real values (exact) or the float32 numbers (emulated).
//   Accuracy: correctly rounded to `bits` (nearest, ties to even) in every case:
//     emulated, or exact with t = j - i = 0: B = the bracket is a sum of exact products of dyadic numbers, formed
//       exactly (mpfr_sum at a precision covering every term's exponent, checked: ternary 0). Then s a given
//       double: RN(B s); s = 1: RN(B); s = 1/sqrt(d_head), d_head = m^2: RN(B / m); else B / sqrt(d_head) is
//       irrational for B != 0 and a Ziv loop decides it (as the Shaw oracle).
//     exact, t != 0: with sin(-x) = -sin x, cos(-x) = cos x, B = C + sum_k (alpha_k sin(|t| w_k) + beta_k cos(|t|
//       w_k)), C = <q + a, k>, alpha_k = sgn(j - i)(q_k + b_k) + sgn(i - j) k_k, beta_k = q_{h+k} + b_{h+k} + k_{h+k}
//       (exact dyadics). If every alpha_k, beta_k is 0, B = C is dyadic (the case above). Otherwise B is
//       transcendental: 1 = e^0 and e^(+-i |t| w_k) have distinct algebraic exponents (the w_k are distinct), so by
//       Lindemann-Weierstrass they are linearly independent over the algebraic numbers and C' + sum(...) = 0 for an
//       algebraic C' forces every alpha_k = beta_k = 0. So B s (s != 0 algebraic) is never a `bits`-bit number nor
//       a midpoint and a Ziv loop terminates: at W bits each sin / cos is within eps = 2^(6 + b - W) (above), B~ =
//       RN_W(sum of exact products) is within eps M + ulp_W(B~)/2 of B (M = sum |alpha_k| + |beta_k| < 2^m), and e~
//       = RN_W(B~ s~) (s~ = s or RN_W(1/sqrt(d_head)), relative error <= u) is within 2^(max(S + max(6 + b + m,
//       EXP(B~)) + 2, EXP(e~)) + 1 - W) of e, |s| < 2^S; decided by mpfr_can_round(e~, ., RNDN, RNDZ, bits + 1).
//     A given scale of +-0 returns a zero signed as B * scale (B's sign decided first).
//
// Errors: posenc::Error naming the parameter, the value and the accepted values: the spec (posenc::validate), the
// weights (posenc::check_tener_weights: "r_r_bias", "r_w_bias"), "bits" (check_bits), "length" (1 .. 2^30 - 1, or a
// table too large to allocate), "t" (not in -L .. L - 1), "m" (not < d_head), "head" (not < heads), "i" / "j" (not <
// L), "q" / "k" (not d_head finite values), "key_mask" (neither empty nor L entries), "scale" (not finite).
// Thread-safe: no function reads Boost's default precision; MPFR keeps its state per thread; the oracle's methods are
// const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/tener_spec.hpp"

namespace posenc::reference {

// R(t)[m] of the call of length L in the spec's regime (header: exact correctly rounded to `bits`; emulated the
// float32 number exactly, as a Real of `bits` bits). -L <= t <= L - 1, m < d_head.
Real tener_table_value(const TenerSpec&, std::int64_t t, std::size_t m, std::size_t length,
                       unsigned bits = kDefaultBits);

// The call's whole table, [2L][d_head] row-major, row c at t = c - L: exact, each real entry rounded once to double;
// emulated, the float32 numbers.
std::vector<double> tener_table_f64(const TenerSpec&, std::size_t length);

class TenerOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_tener_weights) and bits (check_bits); keeps a
  // copy of the weights.
  TenerOracle(const TenerSpec& spec, const TenerWeights& weights, unsigned bits = kDefaultBits);
  const TenerSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // Whether key j is visible from query i: key_mask empty or key_mask[j] != 0 (TENER's masked_fill(mask.eq(0))); no
  // causal mask. key_mask: empty or `length` entries. Checks "length", "i", "j", "key_mask".
  bool visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j, std::size_t length) const;

  // e(i, j) of head `head` (header), correctly rounded to bits(). q, k: d_head finite doubles; scale: nullopt = the
  // spec's (1/sqrt(d_head) if spec.scale, else 1), else a finite double. The mask plays no part (ask visible()).
  Real score(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i, std::size_t j,
             std::size_t length, std::optional<double> scale = std::nullopt) const;

 private:
  TenerSpec spec_;
  unsigned bits_;
  TenerWeights weights_;
};

}  // namespace posenc::reference
