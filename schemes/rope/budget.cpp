// The RoPE rows of THE budget table (verify/budget.hpp). Notation: u = 2^-53.
//
// The algorithm analysed (schemes/rope/fast.cpp on the angle core lib/src/core/angle_table.hpp and trig.hpp):
//  * theta_k = base^(-2k/r) in binary128 (a product of two expq values) split into double-double: relative
//    error <= 2^-104.9.
//  * exact regime: cos, sin of p theta_k from the angle core, each within E64 = 2 sqrt2 eps_sc + 2^-54 + 2^-53
//    ~= 4.505 u absolute (eps_sc = 2^-53 + 2^-57; derivation in schemes/sinusoidal/budget.cpp, the same core).
//  * exact rotation of a pair (a, b) = (x_i, x_j), S = |a| + |b|: y_i = fma(a, c, -RN(b s)) in double, with c, s
//    within E64: |y_i - (a cos - b sin)| <= S E64 + u |b s| + u |y_i| <= S (E64 + 2u) = 6.505 u S (before any
//    rounding to float). |a cos - b sin| <= sqrt(a^2 + b^2) <= S, so ulp(max(|r|, S)) = ulp(S) > S u (f64) or
//    S 2^-24 (f32).
//  * hf / ggml regimes: float32 steps each correctly rounded; the oracle replays the same steps, so the fast
//    values equal the oracle's bit for bit (bitwise rows).
//  * roformer regime (HF RoFormer): the float64 numpy table RN64(p / RN64(base^RN64(2k/r))), cos/sin rounded to
//    double and then to float32, then the hf rotation's float32 steps; each step correctly rounded in the fast path
//    (binary128 powq; IEEE division; the angle core's double sin/cos settled against float32 boundaries, binary128
//    otherwise) and in the oracle (MPFR): bitwise rows rope.*.roformer.*.
#include "schemes/rope/budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace rope_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = RopeRow;

const double kU = std::ldexp(1.0, -53);
const double kEpsSc = std::ldexp(1.0, -53) + std::ldexp(1.0, -57);
const double kE64 = 2 * std::sqrt(2.0) * kEpsSc + std::ldexp(1.0, -54) + std::ldexp(1.0, -53);
const double kRot = kE64 + 2 * kU;  // per unit of S, one exact-regime rotation in double (6.505 u)
// With an attention factor m != 1 (YaRN, LongRoPE) or an xPos scale (m x_{p,k} in its place, formed in binary128
// from expq/logq and rounded once: m_d within u relative), c' = RN(c m_d) and s' = RN(s m_d), m_d = RN(m): each within
// m (E64 + 2u)(1 + u) of m cos, m sin; the rotation then adds u |b s'| + u |y|: per unit of S' = m S,
// (E64 + 4u)(1 + u) = 8.505 u (1 + u).
const double kRotAttention = kE64 + 4 * kU;

using Rows = BudgetRows<R>;

const std::string kAllDomain =
    "|p| <= 2^40, layouts, partial rotary, base in [2, 1e7], every preset and generated spec";

// The frequency vector: exact, emulated float32, RoFormer.
void frequency_rows(Rows& r) {
  const auto add = row_adder(r);
  add(R::frequency_exact_f64,
      {.quantity = "theta_k = base^(-2k/r) as returned by rope_frequencies (exact regime)",
       .dtype = "f64", .regime = "exact", .domain = "base in [2, 1e7], rotary_dim <= 512",
       .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of theta_k)"},
       .bound = 0.5 + std::ldexp(1.0, -50),
       .why = "theta_k is formed in binary128 as the product of two expq values of multiples of logq(base) "
              "(base^(-32 i / r) and base^(-2 j / r) for k = 16 i + j, each within 2^-107 relative; the product "
              "within 2^-105.9) and rounded once to double: err <= 0.5 + 2^-105.9 |theta_k| / ulp(theta_k) <= "
              "0.5 + 2^-52.9 < 0.5 + 2^-50."});
  add(R::frequency_emulated,
      {.quantity = "float32 frequency of the hf (inv_freq_k) and ggml (theta_k at p = 1) regimes",
       .dtype = "f32", .regime = "hf, ggml", .domain = "base in [2, 1e7], rotary_dim <= 512",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "each float32 step (int-to-float, division, pow, reciprocal; ggml: repeated products) is "
              "correctly rounded in both the fast path (binary128 powq rounded once to float32; IEEE float "
              "division and multiplication) and the oracle (MPFR at 256 bits rounded once): the same float32 "
              "numbers unless a pow result lies within 2^-110 relative of a float32 midpoint." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::frequency_roformer,
      {.quantity = "float64 frequency of the roformer regime: the angle of position 1, RN64(1 / w_k), w_k = "
                   "RN64(base^RN64(2k/r))",
       .dtype = "f64", .regime = "roformer", .domain = "base in [2, 1e7], rotary_dim <= 512",
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp_f64 distance)"},
       .bound = 0.0,
       .why = "w_k: the exponent 2k / r is one correctly rounded double division (Python's int / int), the pow is "
              "binary128 powq rounded once to double in the fast path and MPFR's correctly rounded pow in the "
              "oracle; 1 / w_k is an IEEE double division in both: the same doubles unless base^(2k/r) lies within "
              "2^-110 relative of a double midpoint (numpy's real float64 pow is a libm call within a few ulp: the "
              "envelope row rope.check.roformer.envelope)." +
              std::string(kCorrectlyRoundedSteps)});
}

// The cos/sin caches: exact (with and without an attention factor), emulated, RoFormer.
void cache_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::cache_exact_f32,
      {.quantity = "cos / sin cache entry, float32 output", .dtype = "f32", .regime = "exact", .domain = all,
       .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1), ulp_f32"},
       .bound = (std::ldexp(1.0, -25) + kE64) / std::ldexp(1.0, -23),
       .why = "the double value is within E64 ~= 4.505 u of cos/sin(p theta_k); rounding it to float32 adds "
              "<= 0.5 ulp_f32(|v|) <= 2^-25 for |v| < 1 (a double >= 1 rounds to 1.0, closer to the value). "
              "In ulp_f32(1) = 2^-23: 0.25 + 4.505 * 2^-30."});
  add(R::cache_exact_f64,
      {.quantity = "cos / sin cache entry, float64 output", .dtype = "f64", .regime = "exact", .domain = all,
       .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1), ulp_f64"},
       .bound = kE64 / std::ldexp(1.0, -52),
       .why = "the angle core's bound E64 = 2 sqrt2 eps_sc + 2^-54 + 2^-53 ~= 4.505 u (anchor and in-block "
              "values each within eps_sc = 2^-53 + 2^-57, one complex multiply): 2.25 ulp_f64(1)."});
  add(R::cache_exact_f32_attention,
      {.quantity = "cos / sin cache entry times the attention factor m != 1 (YaRN, LongRoPE) or the xPos scale x_{p,k}, float32 output",
       .dtype = "f32", .regime = "exact", .domain = all + ", scaling yarn or longrope with m != 1, or xPos with the scale below 2^100",
       .metric = {MetricKind::scaled, DType::f32, 0.0, "err_S (S = M, the least power of two >= max(1, m)), ulp_f32"},
       .bound = (std::ldexp(1.0, -25) + kRot * (1 + kU)) / std::ldexp(1.0, -23),
       .why = "v = RN(c_d m_d) in double with c_d within E64 of cos(p theta'_k) and m_d = RN(m): |v - m cos| <= "
              "m (E64 + 2u)(1 + u) = 6.505 u m (1 + u); rounding to float32 adds <= 0.5 ulp_f32(|v|) <= 2^-25 M "
              "since |v| < m <= M (at p = 0, v = RN(m_d) is m rounded once). In ulp_f32(M) = "
              "M 2^-23: 0.25 + 6.505 * 2^-30 (1 + u). (M plays the role S = 1 plays without m.)"});
  add(R::cache_exact_f64_attention,
      {.quantity = "cos / sin cache entry times the attention factor m != 1 (YaRN, LongRoPE) or the xPos scale x_{p,k}, float64 output",
       .dtype = "f64", .regime = "exact", .domain = all + ", scaling yarn or longrope with m != 1, or xPos",
       .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = M, the least power of two >= max(1, m)), ulp_f64"},
       .bound = kRot * (1 + kU) / std::ldexp(1.0, -52),
       .why = "v = RN(c_d m_d): |v - m cos| <= m (E64 + 2u)(1 + u) (the cos error scaled by m_d, m_d's rounding, "
              "the product's rounding) <= M 6.505 u (1 + u); ulp_f64(M) = M 2^-52: 3.25 (1 + u) ulp_f64(M)."});
  add(R::frequency_attention,
      {.quantity = "the attention factor m (RopePlan::attention_factor): exact regime, and HF's double",
       .dtype = "f64", .regime = "exact, hf", .domain = "scaling yarn: factor in [1, 2^20], mscale, mscale_all_dim "
                                                           "in [0, 1e3]; longrope: factor in [1, 2^20], L0 in "
                                                           "[2, 2^40]; other scalings m = 1",
       .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of m)"},
       .bound = 0.5 + std::ldexp(1.0, -40),
       .why = "exact: m = (0.1 x ln s + 1) / (0.1 y ln s + 1) formed in binary128 (logq within 2^-112 relative, "
              "a handful of roundings at 2^-113) and rounded once to double: <= 0.5 + 2^-45 ulp; longrope's "
              "sqrt(1 + ln s / ln L0) likewise (one sqrtq, two logq, a quotient). hf: HF's Python double steps "
              "(0.1 * mscale * log(s) + 1.0 and the quotient; math.sqrt(1 + math.log(s) / math.log(L0)); each "
              "rounded to double, log correctly rounded) replayed by the oracle: equal (err 0)."});
  add(R::cache_emulated,
      {.quantity = "cos / sin cache entry of the hf and ggml regimes (f32 and f64 outputs)",
       .dtype = "f32, f64", .regime = "hf, ggml", .domain = all,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "the float32 angle is formed by the same correctly rounded steps as the oracle's; cos/sin of it "
              "are correctly rounded to float32 (a double within 2^-53 + 2^-58 absolute, or for hf's product angles "
              "RN32(p inv_freq) on the AVX-512 fast path the angle core's cos/sin of p inv_freq corrected by the "
              "angle's rounding, within 5.8 * 2^-53 (core/sincos32.hpp), whose interval does not straddle a float32 "
              "rounding boundary, else binary128 cosq/sinq): equal to the oracle's RN32(cos "
              "a32) unless the value lies within ~2^-112 relative of a float32 midpoint. f64 outputs hold the "
              "float32 number exactly." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::cache_roformer,
      {.quantity = "cos / sin cache entry of the roformer regime (HF RoFormer's float64 table cast to float32; f32 "
                   "and f64 outputs)",
       .dtype = "f32, f64", .regime = "roformer", .domain = all + " (roformer: scaling none, no M-RoPE, no xPos)",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "c = RN32(RN64(cos a)), a = RN64(p / w_k) (|a| <= 2^40): the angle is an IEEE double division of the "
              "exact p by the bitwise-equal w_k (rope.frequency.roformer.bitwise); the angle core's sincos_dd of the "
              "double a is within 2^-53 + 2^-58 absolute and RN64 moves the real value by at most 2^-54, so "
              "RN64(cos a) lies within 2^-52 of the double; where no float32 rounding boundary lies within 2^-51 of "
              "it the float is settled, otherwise binary128 cosq/sinq rounded to double, then to float (the "
              "oracle: MPFR's correctly rounded cos to double, then to float): equal unless cos a lies within "
              "~2^-112 relative of a double midpoint. f64 outputs hold the float32 number exactly. Bit for bit "
              "against correctly rounded float64 steps (numpy's np.power / np.cos / np.sin) and the float32 cast; "
              "real numpy float64 pow/sin/cos are libm calls 1–4 ulp of double off, which moves a float32 entry "
              "only where its float64 value lies that close to a float32 rounding boundary (rope.check.roformer."
              "envelope)." +
              std::string(kCorrectlyRoundedSteps)});
}

// Rotations: exact, emulated float32 and 16-bit, RoFormer; identities.
void apply_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::apply_exact_f32,
      {.quantity = "rotated channel R(p)x, float32 data, exact regime", .dtype = "f32", .regime = "exact",
       .domain = all + ", x in float32 with |x| <= 1e4",
       .metric = {MetricKind::scaled, DType::f32, 0.0, "err_S (S = |x_i| + |x_j| of the pair), ulp_f32"},
       .bound = 0.5 + std::ldexp(1.0, -25),
       .why = "before the final rounding the double result is within 6.505 u S of the exact rotation (header "
              "of budget.cpp); rounding to float32 adds 0.5 ulp_f32(|y|) <= 0.5 ulp_f32(S). In ulp_f32(S) "
              "> S 2^-24: 0.5 + 6.505 * 2^-29 < 0.5 + 2^-25."});
  add(R::apply_exact_f64,
      {.quantity = "rotated channel R(p)x, float64 data, exact regime", .dtype = "f64", .regime = "exact",
       .domain = all + ", |x| <= 1e4",
       .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = |x_i| + |x_j| of the pair), ulp_f64"},
       .bound = kRot / kU,
       .why = "y_i = fma(a, c, -RN(b s)): the cos/sin errors contribute <= (|a| + |b|) E64, the product RN(b s) "
              "<= u |b s|, the fma <= u |y|; total <= S (E64 + 2u) = 6.505 u S, and ulp_f64(S) > S u."});
  add(R::apply_exact_f64_attention,
      {.quantity = "rotated channel m R(p)x with the attention factor m != 1 (YaRN, LongRoPE), float64 data, exact regime",
       .dtype = "f64", .regime = "exact", .domain = all + ", scaling yarn or longrope with m != 1, |x| <= 1e4",
       .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = m (|x_i| + |x_j|) of the pair), ulp_f64"},
       .bound = kRotAttention / kU * (1 + std::ldexp(1.0, -40)),
       .why = "c' = RN(c m_d), s' = RN(s m_d) each within m (E64 + 2u)(1 + u) of m cos, m sin; y_i = fma(a, c', "
              "-RN(b s')) adds u |b s'| + u |y_i| <= 2u m S (1 + u): <= (E64 + 4u)(1 + u) m S = 8.505 u (1 + u) S' "
              "with S' = m S, and ulp_f64(S') > S' u. The float32 and 16-bit rows hold unchanged with S' (0.5 + "
              "8.505 * 2^-29 < 0.5 + 2^-25; 0.5 + 8.505 * 2^-42 < 0.5 + 2^-30)."});
  add(R::apply_emulated_f32,
      {.quantity = "rotated channel of the hf and ggml regimes, float32 data", .dtype = "f32", .regime = "hf, ggml",
       .domain = all + ", x in float32",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "y_i = RN32(RN32(x_i c) - RN32(x_j s)) with the regime's float32 c, s (bitwise equal to the "
              "oracle's, row rope.cache.emulated.bitwise): IEEE float32 multiply and subtract, no contraction "
              "(-ffp-contract=off), the same three roundings as the oracle." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::apply_roformer_f32,
      {.quantity = "rotated channel of the roformer regime (HF RoFormer's apply_rotary_position_embeddings), float32 "
                   "data",
       .dtype = "f32", .regime = "roformer", .domain = all + ", x in float32 (roformer: scaling none, no M-RoPE, no xPos)",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "RoFormer's q * cos_pos + rotate_every_two(q) * sin_pos in eager float32 PyTorch: three kernels, each "
              "product and the sum rounded (rotate_every_two negates x_j exactly, so y_i = RN32(RN32(x_i c) - "
              "RN32(x_j s)), y_j = RN32(RN32(x_j c) + RN32(x_i s))), with the roformer table's float32 c, s "
              "(bitwise equal to the oracle's, rope.cache.roformer.bitwise); lib/ performs the same three IEEE "
              "operations (-ffp-contract=off). HF's own rotations (heldout.hf, roformer_d64_apply_*) are bit for bit "
              "these wherever HF's table entry equals posenc's." +
              std::string(kCorrectlyRoundedSteps)});
  for (DType t : {DType::bf16, DType::f16}) {
    const std::string ts(to_string(t));
    add(t == DType::bf16 ? R::apply_exact_bf16 : R::apply_exact_f16,
        {.quantity = "rotated channel R(p)x, " + ts + " data (arithmetic in double), exact regime", .dtype = ts,
         .regime = "exact", .domain = all + ", x in " + ts + " with |S| <= 512",
         .metric = {MetricKind::scaled, t, 0.0, "err_S (S = |x_i| + |x_j| of the pair), ulp_" + ts},
         .bound = 0.5 + std::ldexp(1.0, -30),
         .why = "the double result is within 6.505 u S of the exact rotation and is rounded once to " + ts +
                " (posenc/half.hpp: no double rounding through float): <= 0.5 ulp_" + ts + "(S) + 6.505 u S, and "
                "ulp_" + ts + "(S) > S 2^-p (p = 8 or 11; on the subnormal grid the ulp is larger still): 0.5 + "
                "6.505 * 2^(p-53) < 0.5 + 2^-30."});
  }
  add(R::apply_emulated_half,
      {.quantity = "rotated channel of the hf, ggml and roformer regimes, bf16 and f16 data", .dtype = "bf16, f16",
       .regime = "hf, ggml, roformer", .domain = all + ", x in bf16 / f16",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "the 16-bit values are widened exactly to float32, the float32 steps are those of "
              "rope.apply.emulated.f32.bitwise (roformer: rope.apply.roformer.f32.bitwise), and the float32 result "
              "is rounded once to the 16-bit type: RN_T of the oracle's float32 steps, bit for bit." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::apply_identity,
      {.quantity = "exact values: R(0)x = x, channels >= rotary_dim untouched, the two layouts related by the "
                   "channel permutation, strided/fused/GQA views equal dense rotations, any thread count",
       .dtype = "f32, f64", .regime = "exact, hf, ggml, roformer", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp distance in the data type)"},
       .bound = 0.0,
       .why = "cos(0) = 1 and sin(0) = 0 exactly in every regime, so fma(a, 1, -(b*0)) = a; pass-through "
              "channels are never written; a permutation of channels permutes the same arithmetic on the same "
              "(c, s); views change addresses, not operations; positions are independent of each other and of "
              "the thread that computes them (fixed chunks, anchors at fixed multiples)."});
}

// Composition, K-shift drift, scores, the emulated caches against the exact ones, laws on the oracle.
void law_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::compose_f64,
      {.quantity = "R(a) R(b) x and R(-p) R(p) x against the exact R(a + b) x, x, f64, exact regime",
       .dtype = "f64", .regime = "exact", .domain = all + ", |a|, |b| <= 2^39",
       .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = |x_i| + |x_j| of the original pair), ulp_f64"},
       .bound = 2 * std::sqrt(2.0) * kRot / kU * (1 + 1e-12),
       .why = "the first rotation leaves a pair error of 2-norm <= sqrt2 * 6.505 u S; the second rotation "
              "preserves it (exactly orthogonal part) and adds its own <= 6.505 u S' per channel with S' = "
              "|y_i| + |y_j| <= sqrt2 S: per channel <= 2 sqrt2 * 6.505 u S = 18.4 u S."});
  add(R::kshift_drift_f64,
      {.quantity = "a key rotated at p then shifted 1000 times by delta, vs the exact R(p + 1000 delta) k, f64",
       .dtype = "f64", .regime = "exact", .domain = "|p| <= 2^30, |delta| <= 2^20",
       .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = |k_i| + |k_j| of the original pair), ulp_f64"},
       .bound = 1001 * std::sqrt(2.0) * kRot / kU * (1 + 1e-9),
       .why = "each of the 1001 rotations adds a pair error of 2-norm <= sqrt2 * 6.505 u S'' (S'' <= sqrt2 S: "
              "rotations keep the pair's 2-norm, and |x_i| + |x_j| <= sqrt2 * 2-norm <= sqrt2 S), and every "
              "later rotation preserves earlier errors' 2-norm: <= 1001 * sqrt2 * 6.505 u * S per channel "
              "(the linear drift of llama.cpp-style repeated K-shifts; one rotation by the total shift has "
              "the single-rotation bound instead)."});
  add(R::score_f64,
      {.quantity = "<R(m)q, R(n)k> from fast exact-regime f64 rotations (dot product formed exactly)",
       .dtype = "f64", .regime = "exact", .domain = all + ", m - n fixed, both shifted by s in {1, 1000, 1e5, 2^20, 2^24}",
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|score - exact| / B(q, k)"},
       .bound = 1.0,
       .why = "per channel |dq_i| <= 6.505 u S_i(q) <= 6.505 u |q|_1 (likewise k); |sum q~ k~ - sum q' k'| <= "
              "sum |dq_i| |k'_i| + |q'_i| |dk_i| + |dq_i||dk_i| with |k'|_1 <= sqrt2 |k|_1: B = 2 sqrt2 * 6.505 u "
              "|q|_1 |k|_1 (1 + 6.505 u)."});
  for (DType t : {DType::f32, DType::f64}) {
    const bool f32 = t == DType::f32;
    add(f32 ? R::scores_f32 : R::scores_f64,
        {.quantity = std::string("pre-softmax score <R(m)q, R(n)k> from RopePlan::scores (rotate, then cblas ") +
                     (f32 ? "sgemm)" : "dgemm)"),
         .dtype = f32 ? "f32" : "f64", .regime = "exact", .domain = all + ", Lq, Lk <= 8",
         .metric = {MetricKind::ratio, t, 0.0, "|score - exact| / B(q, k)"},
         .bound = 1.0,
         .why = std::string("each rotated channel is within a S_c of the exact rotation (a = ") +
                (f32 ? "2^-24 (1 + 2^-24): rope.apply.exact.f32.scaled, 0.5 + 2^-25 ulp_f32(S) <= that S" :
                       "6.505 u: rope.apply.exact.f64.scaled") +
                "), and |exact channel| <= S_c; so sum |dq_c||k'_c| + |q'_c||dk_c| + |dq_c||dk_c| <= (2a + a^2) "
                "sum S_c(q) S_c(k). The gemm sums d products of the rotated values in any order (blocked, with or "
                "without FMA): <= gamma_d sum |q~_c||k~_c| <= gamma_d (1 + a)^2 sum S_c(q) S_c(k), gamma_d = d u / "
                "(1 - d u) with u the unit roundoff of the type. B = (2a + a^2 + gamma_d (1 + a)^2) sum_c S_c(q) "
                "S_c(k)."});
  }
  add(R::emulated_vs_exact,
      {.quantity = "HF / ggml / RoFormer float32 cos/sin vs the exact cos/sin(p theta_k) (the long-context deviation)",
       .dtype = "f32", .regime = "hf, ggml, roformer (against exact)", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|c32 - cos(p theta_k)| / (|a32 - p theta_k| + 2^-25)"},
       .bound = 1.0,
       .why = "c32 = RN32(cos a32): |c32 - cos(p theta)| <= |RN32(cos a32) - cos a32| + |cos a32 - cos(p theta)| "
              "<= 2^-25 + |a32 - p theta| (cos is 1-Lipschitz; likewise sin). The float32 angle's error "
              "|a32 - p theta_k| (p |inv32_k - theta_k| plus the angle's rounding, ~ulp_f32(p theta_k)) is what "
              "grows with position; the sweep reports it per position. With an attention factor (hf: c' = "
              "RN32(c32 m32) against m cos(p theta'_k)): |c' - m cos| <= ulp_f32(m32)/2 + |m32 - m| |c32| + m |c32 - "
              "cos| <= m (|a32 - p theta'| + 2^-25) + |m32 - m| + ulp_f32(m32)/2, the scale of the ratio then. "
              "roformer: c = RN32(RN64(cos a64)) of the float64 angle: |c - cos a64| <= 2^-25 + 2^-54 (the float64 "
              "rounding first), so the scale is |a64 - p theta_k| + 2^-25 + 2^-54 (a64's error is ~p 2^-52 theta_k: "
              "RoFormer's table is exact to float32 up to p ~ 2^26, where the float32 angles of hf already drift)."});
  add(R::identity_oracle,
      {.quantity = "an identity evaluated on the oracle at 256 bits (score shift invariance, R(a)R(b) = R(a+b), "
                   "norm)",
       .dtype = "mp", .regime = "exact", .domain = all,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "absolute"},
       .bound = std::ldexp(1.0, -200),
       .why = "both sides are formed at >= 256 bits from values correct to ~2^-(256 - log2 p) and |x| <= 1e4: "
              "their difference is below 2^-200 unless the identity is false."});
}

// What `posenc check rope` holds a user's numbers to.
void check_rows(Rows& r) {
  const auto add = row_adder(r);
  // ---- what `posenc check rope` holds a user's numbers to ---------------------------------------------------
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(rope::check_exact_row(t),
        {.quantity = "a user's cos/sin cache entry (posenc check rope, exact regime)", .dtype = ts, .regime = "exact",
         .domain = "every spec and position posenc accepts",
         .metric = {MetricKind::scaled, t, 1.0, "err_S (S = 1), ulp_" + ts},
         .bound = t == DType::f64 ? kE64 / std::ldexp(1.0, -52) : 0.5,
         .why = "an entry that is the exact value rounded once has err_S <= 0.25 (|r| < 1); 0.5 leaves a quarter "
                "ulp(1) for the arithmetic before that rounding (a float64 angle p theta carries ~p theta 2^-53) "
                "and still refuses an entry one unit in the last place off at |r| >= 1/2. float64 caches are held "
                "to what posenc's own f64 output meets (rope.cache.exact.f64.scaled, 2.25 ulp_f64(1))."});
  }
  add(R::check_envelope,
      {.quantity = "a user's hf / ggml float32 cache entry vs posenc's emulation (posenc check rope)",
       .dtype = "f32 (any type holding float32 numbers); f16 / bf16: the float32 cache cast once",
       .regime = "hf, ggml", .domain = "|p| <= 2^40",
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|y - e| / E(p, k), E the envelope of the entry"},
       .bound = 1.0,
       .why = "posenc's emulation rounds every float32 step correctly; real torch / C pow and cos/sin do not. "
              "With allowances A_pow and A_trig (ulps of float32, default 2 each): hf: a pow result off by A_pow "
              "ulp is off by <= A_pow 2^-23 relative (an ulp is at most 2^-23 of its value), which the reciprocal "
              "keeps, plus one flip of its rounding: dinv <= |inv| A_pow 2^-23 (1 + 2^-20) + ulp32(inv) (not "
              "(A_pow + 1) ulp32(inv): pow and inv can sit in binades whose ulp-to-value ratios differ by 2, "
              "which ROPE-CHECK-2 found); the angle RN32(p32 inv') then differs by da <= |p32| dinv + ulp32(|a| + "
              "|p32| dinv) (the rounding may flip one ulp); ggml: theta_scale off by A_pow "
              "ulp, each of the k products may flip one ulp: da <= |t_k| k (A_pow + 1) 2^-23 (1 + 2^-20) + "
              "ulp32(t_k). Then E = da + (A_trig + 1) ulp32(min(1, |e| + da)): cos/sin are 1-Lipschitz and the "
              "final value may be A_trig ulp from correctly rounded plus a flip of the rounding (at p = 0 the "
              "same slack is allowed: no exactness of a real cos(0) is assumed). An attention factor m32 (hf "
              "YaRN / LongRoPE: RN32(c32 m32); ggml YaRN's mscale, its logf A_pow ulps off and its two steps "
              "flipped: dm < m32 (A_pow + 2) 2^-23): m32 E + dm (|e| + E) + ulp32(m32 (|e| + E)). xPos (hf: "
              "torchscale's RN32(c32 X), X = RN32(pow(zeta32, e32)), keys RN32(1 / X); zeta32 and e32 are IEEE steps "
              "every implementation shares): a pow A_pow ulps off and a flipped reciprocal put X within dX = X "
              "(A_pow + 1) 2^-23 (1 + 2^-20), so E_x = X E + (|e| + E) dX + ulp32((|e| + E)(X + dX)), for scales "
              "in [2^-100, 2^100] (|p - c| <= 55 scale_base; beyond, the check refuses the position). M-RoPE: the "
              "entry of pair k at the position of its axis (t, h or w), the same envelope. A cache stored as f16 / bf16 "
              "(HF casts its float32 cos and sin with .to(x.dtype)) adds that one rounding, allowed a whole ulp of the "
              "stored type t: E_t = E + ulp_t(|e| + E) (posenc check found every correct bf16 cache of a PyTorch "
              "module over the f32 envelope before)."});
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(rope::check_rotated_exact_row(t),
        {.quantity = "a user's rotated tensor R(p)x (posenc check rope --x), exact regime", .dtype = ts,
         .regime = "exact", .domain = "every spec and position posenc accepts; x finite",
         .metric = {MetricKind::scaled, t, 0.0, "err_S (S = |x_a| + |x_b| of the pair), ulp_" + ts},
         .bound = 4.1,
         .why = "what a rotation computed in " + ts + " (unit roundoff u = 2^-p) achieves when its cos/sin are "
                "within 1 ulp of cos/sin(p theta) (the angle's own error included; libm-grade): |c' - c| <= 2u|c|, "
                "so the pair contributes <= 2u (|x_a c| + |x_b s|) <= 2u S; the two products round to <= u(1 + 2u) "
                "S; the sum to <= u(1 + 2u)^2 S (|y'| <= S (1 + 2u)^2). Total <= 4u S (1 + 2u)^2 plus, near the "
                "subnormal range, absolute half-ulps that ulp_" + ts + "(S)'s floor covers; ulp_" + ts + "(S) > u S: "
                "< 4 (1 + 2^-7)^2 + 0.01 < 4.1. An FMA, arithmetic in a wider type rounded once, or correctly "
                "rounded cos/sin only lower it. A float32 angle (the hf and ggml regimes) exceeds it as p grows: "
                "that is what the exact column shows. Channels >= rotary_dim are held to the same bound with S = "
                "|x_c| (the emulation envelope holds them to bit-identity)."});
  }
  add(R::check_roformer_envelope,
      {.quantity = "a user's roformer cache entry (HF RoFormer's float32 table) vs posenc's emulation (posenc check "
                   "rope)",
       .dtype = "f32 (any type holding float32 numbers)", .regime = "roformer", .domain = "|p| <= 2^40",
       .metric = {MetricKind::ratio, DType::f32, 0.0,
                  "|y - e| / E(p, k), E = d + ulp_f32(min(1, |e| + d)), d = da + (A_trig + 1) 2^-53"},
       .bound = 1.0,
       .why = "posenc rounds numpy's float64 steps correctly; the real table is built by numpy's float64 pow, sin "
              "and cos (libm or SVML, not correctly rounded). With allowances A_pow, A_trig (here ulps of float64, "
              "default 2 each): the real divisor w' is within (A_pow + 1/2) ulp_f64 of base^(2k/r), so p / w' is "
              "within (A_pow + 1) 2^-52 |a| (1 + 2^-20) of p / w_k, and the two float64 angles (each rounded once) "
              "within da = (A_pow + 1) 2^-52 |a| (1 + 2^-20) + ulp_f64(|a| (1 + 2^-40)); cos is 1-Lipschitz and "
              "the real cos within A_trig ulp_f64 <= A_trig 2^-53 of cos(a'), posenc's float64 value within 2^-54 "
              "of cos a: the two float64 values within d = da + (A_trig + 1) 2^-53; the float32 cast moves each by "
              "at most half an ulp_f32 of its result: E = d + ulp_f32(min(1, |e| + d)) (likewise sin). Up to p ~ "
              "2^20 that is one float32 neighbour on either side, which a libm flips only where the float64 value "
              "lies within a few ulp_f64 of a float32 rounding boundary; a different table (another base, the "
              "float32 angle of hf, a transposed [cos | sin]) is off by far more."});
  add(R::check_rotated_envelope,
      {.quantity = "a user's hf / ggml / roformer rotated tensor vs posenc's emulation (posenc check rope --x)",
       .dtype = "f16, bf16, f32 (f64 data holding float32 numbers)", .regime = "hf, ggml, roformer",
       .domain = "|p| <= 2^40",
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|y - e| / E_y, E_y the envelope of the channel"},
       .bound = 1.0,
       .why = "e = RN32(RN32(x_a c_e) -+ RN32(x_b s_e)), posenc's emulation with its correctly rounded float32 "
              "c_e, s_e. The user's c_u, s_u lie within the cache envelope E_c, E_s of them (rope.check.envelope; "
              "roformer: rope.check.roformer.envelope; same allowances) and may be rounded to the data's type T (HF casts cos/sin to the model's dtype): "
              "+ ulp_T(|c_e| + E_c). Each of the user's two products and one sum, and each of e's, moves its value "
              "by <= 0.5 ulp of its result (in T; float32 for f32 and f64 data); with |x_a c| <= A = |x_a| (1 + "
              "E_c), |x_b s| <= B = |x_b| (1 + E_s), |y| <= A + B, and a whole ulp per rounding (a result may sit "
              "one binade above its bound): |y - e| <= E_y = |x_a| (E_c + ulp_T(|c_e| + E_c)) + |x_b| (E_s + "
              "ulp_T(|s_e| + E_s)) + 2 ulp_T(A) + 2 ulp_T(B) + 2 ulp_T(A + B). An FMA (one rounding fewer) lies "
              "inside. Channels >= rotary_dim must equal x bit for bit (E = 0)."});
}

Rows make_rows() {
  Rows r;
  frequency_rows(r);
  cache_rows(r);
  apply_rows(r);
  law_rows(r);
  check_rows(r);
  return r;
}

const BudgetRegistration<RopeRow> kRegistration(make_rows);

}  // namespace
}  // namespace rope_rows

namespace rope {
using namespace rope_rows;

double score_error_scale(double q_l1, double k_l1) {
  return 2 * std::sqrt(2.0) * kRot * q_l1 * k_l1 * (1 + kRot) + std::ldexp(1.0, -1000);
}
double scores_error_scale(DType t, std::size_t d, double sum_sq_sk) {
  const double a = t == DType::f32 ? std::ldexp(1.0, -24) * (1 + std::ldexp(1.0, -24)) : kRot;
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : kU;
  const double gamma = static_cast<double>(d) * u / (1 - static_cast<double>(d) * u);
  return (2 * a + a * a + gamma * (1 + a) * (1 + a)) * sum_sq_sk * (1 + 1e-12) + std::ldexp(1.0, -1000);
}
double attention_scale(double m) { return m <= 1.0 ? 1.0 : std::ldexp(1.0, std::ilogb(m) + (m == std::ldexp(1.0, std::ilogb(m)) ? 0 : 1)); }
double emulated_vs_exact_scale(double angle_error, double m, double m32, bool roformer) {
  if (roformer) return angle_error + std::ldexp(1.0, -25) + std::ldexp(1.0, -54);
  if (m == 1.0 && m32 == 1.0f) return angle_error + std::ldexp(1.0, -25);
  const double ulp_m32 = std::ldexp(1.0, std::ilogb(m32) - 23);
  return m * (angle_error + std::ldexp(1.0, -25)) + std::fabs(m32 - m) + ulp_m32 / 2;
}
double apply_exact_bound(DType t, bool attention) {
  if (t == DType::f32) return 0.5 + std::ldexp(1.0, -25);
  return attention ? kRotAttention / kU * (1 + std::ldexp(1.0, -40)) : kRot / kU;
}

RopeRow check_rotated_exact_row(DType t) {
  return row_of_dtype(t, R::check_rotated_exact_f16, R::check_rotated_exact_bf16, R::check_rotated_exact_f32,
                      R::check_rotated_exact_f64);
}

RopeRow check_exact_row(DType t) {
  return row_of_dtype(t, R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64);
}

}  // namespace rope
}  // namespace posenc::verify
