// posenc/reference/deberta.hpp — the oracle of DeBERTa's disentangled attention (He et al. 2021) as HF
// DeBERTa-v2/v3 and microsoft/DeBERTa implement it: the log-bucketed relative position, the c2p / p2c gather index
// and the disentangled score c2c + c2p + p2c.
//
// An independent transcription of the definition in posenc/deberta_spec.hpp (CONVENTIONS.md §2.8, §3 items 3 and 6;
// it never includes or links lib/): every bucket decided from the formula at its relative position, no tables of
// buckets, no recurrences.
//
// Geometry (deberta_spec.hpp; NOT the bias schemes' one): query row i at position i, key j at position j (the
// queries are the FIRST positions, HF build_relative_position); rel(i, j) = i - j (query minus key).
//
// Bucket of rel (position_buckets = none: b = rel). Otherwise mid = position_buckets // 2, M = max_relative_positions
// - 1, N = mid - 1 (validate() guarantees M >= mid + 1, so ln(M / mid) > 0):
//     r = clamp ? clamp(rel, -M, M) : rel;   b = r if |r| <= mid,   else sign(r) (mid + ceil(v(|r|))),
//     v(a) = ln(a / mid) / ln(M / mid) * N.
//   N = 0 (position_buckets 2 or 3: mid = 1) makes v = 0: b = sign(r) for |r| > 1, in both regimes.
//
// Exact regime: ceil(v(a)) for a > mid, decided exactly, never by a floating-point comparison alone:
//   * an enclosure at W bits (W = 64 first): v~ = RN_W(RN_W(L1 / L2) * N) with L1 = RN_W(log1p(RN_W((a - mid) / mid)))
//     and L2 = RN_W(log1p(RN_W((M - mid) / mid))) (a - mid and M - mid are exact integers at W >= 64 bits). Each of
//     the six roundings has relative error <= u = 2^-W, and a relative error d in an argument u' > 0 moves log1p(u')
//     by at most about |d| relative (mean value theorem: log1p(u'(1 + d)) - log1p(u') = u' d / (1 + xi), and
//     log1p(u') >= u' / (1 + u')), so |v~ - v| <= 6.1 u |v| < 2^(EXP(v~) - W + 3); the oracle takes the wider
//     [lo, hi] = v~ -+ 2^(EXP(v~) - W + 4) (lo rounded down, hi up). Since v < 2^35 (a < 2^31, mid <= 2^15, M >= mid
//     + 1: v <= N ln(2^31) / ln(1 + 1/mid) < 2^35) and W >= 64, hi - lo < 1/8.
//   * no integer in [lo, hi]: ceil(v) = floor(hi) + 1.
//   * the one integer t = floor(hi) in [lo, hi]: v - t has the sign of N ln(a / mid) - t ln(M / mid), i.e. of
//         a^N mid^t - M^t mid^N   (the integer form of v <= t:  a^N mid^t <= M^t mid^N),
//     and, with g = gcd(N, t), e1 = N / g, e2 = t / g (the g-th root is monotone), of a^e1 mid^e2 - M^e2 mid^e1.
//     That integer comparison (GMP mpz) is made whenever its operands have at most 2^16 bits; it decides v <= t
//     (ceil = t) or v > t (ceil = t + 1) exactly, an integer value of v included (a = M gives v = N exactly: the
//     bucket mid + N = 2 mid - 1, i.e. position_buckets - 1 for an even position_buckets, - 2 for an odd one).
//     Larger operands: v != t, proven so: (a / mid)^e1 = (M / mid)^e2 with gcd(e1, e2) = 1 forces a / mid = c^e2 and
//     M / mid = c^e1 for a rational c = C / C' > 1 in lowest terms (C >= 2), whose reduced numerators C^e1 <= M <
//     2^30 and C^e2 <= a < 2^31 give e1 <= 29, e2 <= 30, i.e. operands of < 2^12 bits. So the oracle raises W
//     (1.5 W, ...) until the enclosure leaves t out, which terminates. Not converged by W = 2^20: std::logic_error
//     (never seen; a needs |v - t| < 2^(36 - 2^20)).
//   The hint (the enclosure) only selects the candidate t; the answer is the integer comparison or a rigorous
//   enclosure, never a rounded comparison.
//
// hf regime: HF's float32 torch steps (transformers models/deberta_v2/modeling_deberta_v2.py make_log_bucket_position,
// CONVENTIONS.md §2.8, read through deberta_spec.hpp), each correctly rounded to binary32 / binary64 (mp.hpp's rn_*
// functions: MPFR at 24 / 53 bits in the format's exponent range, one rounding):
//     x   = RN32(RN32(a) / RN32(mid))            abs_pos / mid (int64 tensor true-divided: float32; RN32(a) rounds
//                                                for a > 2^24)
//     l   = RN32(ln x)                           torch.log
//     den = RN32(ln(RN32(RN64(M / mid))))        torch.log(torch.tensor((max_position - 1) / mid)): Python's
//                                                correctly rounded int / int, made a float32 tensor, its float32 log
//     y   = RN32(l / den),  z = RN32(y * RN32(N))
//     log_pos = RN32(ceil(z) + mid)              torch.ceil(...) + mid: a float32 tensor plus a Python int is a
//                                                float32 op; exact while ceil(z) + mid <= 2^24, which every spec of
//                                                the test ranges meets (|z| < 1.1e6 there); beyond, rounded unless
//                                                mid is a multiple of ulp(z) (position_buckets 65534, max 32769,
//                                                |r| = 2^31 - 1: z = 11907664896, z + 32767 -> 11907697664)
//     b   = sign(r) log_pos                      log_pos * sign, then .to(torch.long): exact.
//   z >= 0 (x >= 1 + 2^-15 since a > mid, so l >= 0, den > 0). A real torch log is not correctly rounded: where z
//   lies within a few ulps of an integer a real run may take the neighbouring bucket (deberta_spec.hpp: the
//   envelope is the budget table's and `posenc check deberta`'s, not the oracle's).
//
// Position index (c2p / p2c gathers): c(i, j) = clamp(b(rel(i, j)) + span, 0, 2 span - 1), span = position_buckets
// or, without buckets, max_relative_positions (deberta_span): exact integer arithmetic.
//
// Accuracy (q, k, the tables and a given scale are finite doubles taken as exact; u = 2^-W below):
//   deberta_relative, deberta_bucket, deberta_position_index: exact (above).
//   deberta_log_position(spec, a, bits): v(a) for 1 <= a < 2^31 (negative below mid), correctly rounded to `bits`
//     (nearest, ties to even) in every case. v is rational exactly when ln(a / mid) / ln(M / mid) = p / q (lowest
//     terms): as above, a / mid = c^p and M / mid = c^q for a rational c > 1, so q <= 29 and |p| <= 30 (p < 0 below
//     mid: C^|p| <= mid; p = 0 at a = mid). The oracle tests every q in [1, 29] exactly with GMP (are the reduced
//     numerator and denominator of M / mid perfect q-th powers, and those of a / mid (or mid / a) powers of the
//     roots?) and returns N p / q rounded once. Otherwise v is irrational (never a `bits`-bit number nor a
//     midpoint) and a Ziv loop terminates: v~ as above at W = bits + kDebertaWorkingMargin (then 1.5 W, ...), with
//     ln(a / mid) = -log1p((mid - a) / a) below mid (a positive argument again, same bound), |v~ - v| <
//     2^(EXP(v~) - W + 4), accepted by mpfr_can_round at W - 4 bits. N = 0: +0 exactly.
//   deberta_hf_z(spec, a): z above, exactly (a binary32 number, held exactly in the returned double).
//   DebertaOracle::score: correctly rounded to `bits` (nearest, ties to even) in every case. The bracket B = <q, k> +
//     [c2p] <q, K_r[h][c]> + [p2c] <k, Q_r[h][c]> is formed EXACTLY: every product of two doubles is exact at 106
//     bits and mpfr_sum adds them into a precision chosen from their exponents (max exponent - lowest bit +
//     bit_width(count) + 1, at most ~4300 bits), so the sum is exact (checked: MPFR's ternary value is 0, else
//     std::logic_error). Then, with f = 1 + [c2p] + [p2c] (deberta_scale_factor) and n = head_dim f:
//       given scale (a double): e = RN_bits(B * scale), one rounding; B = 0 gives a zero with the sign of scale.
//       default scale, n = m^2 a perfect square (e.g. head_dim 3 with c2p and p2c: m = 3; head_dim 12: m = 6):
//         e = RN_bits(B / m), one rounding (B / 3 is not dyadic: a Ziv loop could not decide a value exactly on a
//         midpoint, so this case never goes through one).
//       default scale otherwise: sqrt(n) is irrational, so e = B / sqrt(n) is irrational for B != 0 (never a
//         `bits`-bit number nor a midpoint) and a Ziv loop terminates: at W = bits + kDebertaWorkingMargin (then
//         1.5 W, ...) r = RN_W(1 / sqrt(n)) (mpfr_rec_sqrt), t = RN_W(B r): |t - e| <= (2u + u^2)|e| < 2^(EXP(t) -
//         W + 2), accepted by mpfr_can_round(t, W - 2, RNDN, RNDZ, bits + 1), then rounded once to `bits`. Not
//         converged by W = 2^20: std::logic_error (never seen). B = 0 gives +0.
//   DebertaOracle::score_magnitude: S = |scale| (sum |q_c k_c| + [c2p] sum |q_c K_r_c| + [p2c] sum |k_c Q_r_c|)
//     (DESIGN.md §3's magnitude of the terms) as a double rounded up: the exact sum of magnitudes (as in score) times
//     |scale| or RU_128(1 / sqrt(n)), rounded up at 128 bits, then rounded up to a double (+inf past DBL_MAX): never
//     below the real value, and the rounded-up double of a value at most 2^-126 relative above it.
//
// Errors: every function throws posenc::Error naming the parameter, the value and the accepted values: the spec
// (posenc::validate: "position_buckets", "max_relative_positions", "clamp", "regime", "heads", "head_dim"), the
// weights (posenc::check_deberta_weights: "pos_key", "pos_query"), "bits" (posenc::reference::check_bits), the
// lengths (posenc::check_deberta_lengths: "query_length", "key_length"), a query row "i" (>= query_length), a key
// "j" (>= key_length), a relative position "rel" (|rel| > 2^31 - 1), a distance "a" (deberta_log_position: outside
// [1, 2^31 - 1]; deberta_hf_z: outside [mid + 1, 2^31 - 1]), "position_buckets" (none, for deberta_log_position
// and deberta_hf_z: no log buckets), a head "h" (>= heads), the vectors ("q", "k": not head_dim values or not
// finite) and "scale" (given and not finite). Thread-safe: no function reads Boost's default precision; MPFR and GMP
// keep their state per thread (the default exponent range is assumed); DebertaOracle's methods are const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "posenc/deberta_spec.hpp"
#include "posenc/reference/mp.hpp"

namespace posenc::reference {

// The first working precision of deberta_log_position's and score's Ziv loops is bits + kDebertaWorkingMargin.
inline constexpr unsigned kDebertaWorkingMargin = 64;

// rel(i, j) = i - j for query row i at position i and key j at position j (the queries are the FIRST positions, HF
// build_relative_position). Validates posenc::check_deberta_lengths(query_length, key_length) ("query_length",
// "key_length"), i < query_length ("i") and j < key_length ("j").
std::int64_t deberta_relative(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length);

// b(rel) in the spec's regime (header): validates the spec first, then |rel| <= 2^31 - 1 (else Error naming "rel").
// Without buckets: rel itself.
std::int64_t deberta_bucket(const DebertaSpec& spec, std::int64_t rel);

// c(i, j) = clamp(b(rel(i, j)) + span, 0, 2 span - 1). Validates the spec, then as deberta_relative.
std::int64_t deberta_position_index(const DebertaSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                                    std::size_t key_length);

// v(a) = ln(a / mid) / ln(M / mid) * N correctly rounded to bits (header), for 1 <= a <= 2^31 - 1 (Error naming "a"
// otherwise) and a spec with buckets (Error naming "position_buckets" without): the real value whose ceil the exact
// regime takes (for a > mid). Whatever spec.regime and spec.clamp say.
Real deberta_log_position(const DebertaSpec& spec, std::int64_t a, unsigned bits = kDefaultBits);

// The hf regime's z = RN32(y * RN32(N)) (header), exactly (a binary32 number in a double), for mid < a <= 2^31 - 1
// (Error naming "a" otherwise) and a spec with buckets (Error naming "position_buckets" without), whatever
// spec.regime says.
double deberta_hf_z(const DebertaSpec& spec, std::int64_t a);

class DebertaOracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_deberta_weights: "pos_key", "pos_query") and
  // bits (check_bits); keeps copies of both.
  DebertaOracle(const DebertaSpec& spec, const DebertaWeights& weights, unsigned bits = kDefaultBits);
  const DebertaSpec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // e(i, j) of head h = scale (<q, k> + [c2p] <q, K_r[h][c(i, j)]> + [p2c] <k, Q_r[h][c(i, j)]>), correctly rounded
  // to bits (header). q, k: head_dim finite doubles ("q", "k"); h < heads ("h"); scale: std::nullopt = 1 /
  // sqrt(head_dim (1 + [c2p] + [p2c])), else a finite double ("scale"). A key_mask's -inf is the caller's.
  Real score(std::size_t h, std::span<const double> q, std::span<const double> k, std::size_t i, std::size_t j,
             std::size_t query_length, std::size_t key_length, std::optional<double> scale = std::nullopt) const;

  // S = |scale| (sum |q_c k_c| + [c2p] sum |q_c K_r_c| + [p2c] sum |k_c Q_r_c|) at c(i, j) of head h: the
  // scaled-error magnitude of DESIGN.md §3, as a double rounded up (never below the real value). Same checks as score.
  double score_magnitude(std::size_t h, std::span<const double> q, std::span<const double> k, std::size_t i,
                         std::size_t j, std::size_t query_length, std::size_t key_length,
                         std::optional<double> scale = std::nullopt) const;

 private:
  void check_head(std::size_t h) const;
  std::span<const double> key_row(std::size_t h, std::int64_t c) const;
  std::span<const double> query_row(std::size_t h, std::int64_t c) const;

  DebertaSpec spec_;
  unsigned bits_;
  std::vector<double> pos_key_;    // K_r: [heads][2 span][head_dim] (empty unless spec.c2p)
  std::vector<double> pos_query_;  // Q_r: [heads][2 span][head_dim] (empty unless spec.p2c)
};

}  // namespace posenc::reference
