// posenc/reference/t5.hpp — the oracle of T5's relative attention bias (Raffel et al. 2020): the log-bucketed
// relative position and the per-head bias table it indexes.
//
// An independent transcription of the definition in posenc/t5_spec.hpp (it never includes or links lib/): every
// bucket decided from the formula at its distance, no tables of buckets, no recurrences.
//
// Geometry (t5_spec.hpp, as every bias scheme's): key positions j = 0..Lk-1, query row i at q_i = Lk - Lq + i (the
// queries are the last Lq keys); the relative position is r = j - q_i (memory minus query, CONVENTIONS.md §3 item 3).
//
// Bucket of r (nb = num_buckets, md = max_distance):
//   bidirectional:   n = nb // 2, base = n if r > 0 else 0, a = |r|
//   unidirectional:  n = nb,      base = 0,                 a = max(-r, 0)
//   me = n // 2, N = n - me;  b = base + a if a < me, else base + me + min(L(a), N - 1)   (= min(me + L, n - 1))
//
// Exact regime: L(a) = floor(ln(a/me) / ln(md/me) * N), decided with integer arithmetic only (GMP mpz), never by a
// floating-point comparison. Since md > me, ln(md/me) > 0 and, for an integer t >= 0,
//     L(a) >= t   <=>   N ln(a/me) >= t ln(md/me)   <=>   (a/me)^N >= (md/me)^t   <=>   a^N me^t >= md^t me^N,
// both sides positive integers. With g = gcd(N, t) (t > 0) the g-th root is monotone, so the test is done on
// a^(N/g) me^(t/g) >= md^(t/g) me^(N/g) (fewer bits, same answer). The predicate is true at t = 0 (a >= me) and
// non-increasing in t; the oracle starts from a double estimate of L (a hint only), then walks t up while the
// predicate holds at t + 1 and down while it fails at t, inside [0, N - 1]: the result is the largest t in
// [0, N - 1] with the predicate true, which is min(L(a), N - 1) exactly, whatever the hint. a >= md gives
// (a/me)^N >= (md/me)^N, i.e. L >= N: the last bucket without arithmetic. Where the real value is an integer
// (a = me (md/me)^(t/N) exactly, e.g. a = 16, 32, 64 for nb = 32, md = 128 bidirectional) the equality makes the
// predicate true, so the bucket is me + t: the floor of the exact value.
//
// hf regime: HF's float32 steps (transformers models/t5/modeling_t5.py T5Attention._relative_position_bucket, read at
// huggingface/transformers@6b8b757dfcb582379a64f013cdce46c43629f2b0: `max_exact + (torch.log(relative_position.float()
// / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)`), each correctly
// rounded to binary32 (mp.hpp's rn_* functions: MPFR at 24 bits in the binary32 exponent range, one rounding):
//     A = RN32(a)                 relative_position.float()          (exact below 2^24, then rounded)
//     x = RN32(A / RN32(me))      / max_exact (a Python int: a float32 scalar in the float32 op; me < 2^15, exact)
//     l = RN32(ln x)              torch.log (float32)
//     c = RN64(ln(RN64(md / me))) math.log(max_distance / max_exact): Python's int / int true division (correctly
//                                 rounded to double), then the double log, taken as correctly rounded
//     D = RN32(c)                 the double scalar converted to float32 by the float32 tensor op
//     y = RN32(l / D),  z = RN32(y * RN32(N)),  L = trunc(z)   (z >= 0 since x >= 1, so trunc = floor)
//   c is RN64 of the double quotient's log, as Python computes it; where md / me is itself a double (every md < 2^31
//   with me a power of two, e.g. all the presets) this is RN64(ln(md / me)). Real torch float32 log (and glibc's
//   double log behind math.log) are not correctly rounded: where z lies within a few ulps of an integer a real run
//   may take the other bucket (the budget table's envelope, t5_spec.hpp).
//
// Accuracy of the real-valued helpers:
//   t5_log_position(spec, a, bits): v = N ln(a/me) / ln(md/me), correctly rounded to `bits` (nearest, ties to even).
//     v is rational exactly when (a/me)^q = (md/me)^p for integers p >= 0, q >= 1 (then v = N p / q). With
//     gcd(p, q) = 1 and p > 0, each prime's exponents give md/me = c^q and a/me = c^p for a rational c = C/C' > 1
//     in lowest terms (C >= 2): the reduced numerators of md/me and a/me are C^q <= md and C^p <= a, so
//     2^q, 2^p < 2^31 and p, q <= 30 (p = 0 only at a = me). The oracle tests every pair p in [0, 30], q in [1, 30]
//     exactly with GMP (a^q me^p == md^p me^q) and returns N p / q rounded once. Otherwise v is irrational, never
//     a `bits`-bit number nor a midpoint, and a Ziv loop terminates: ln(a/me) = log1p((a - me)/me) and ln(md/me)
//     likewise at W bits (W = bits + kT5WorkingMargin, then 1.5 W, ...); the two quotients, the two log1p (the
//     relative error of log1p(u) is at most that of u, as log1p(u) >= u/(1 + u)), the division and the product by
//     N each contribute <= 2^-W relative: total < 6.01 * 2^-W < 2^(4-W) relative, so |error| < 2^(EXP(v) - W + 4)
//     (the 6.01 leaves room for |v| itself being off), accepted by mpfr_can_round at W - 4 bits. Not converged by
//     W = 2^20 bits: std::logic_error (never seen).
//   t5_hf_z(spec, a): z above, exactly (a binary32 number, held exactly in the returned double).
//   T5Oracle::bias: the table's double exactly (no arithmetic).
//   T5Oracle::score: <q, k> + bias with q, k finite doubles taken as exact: each product q_c k_c is exact (106
//     bits, held at 128), the bias is exact: mpfr_sum of all terms straight to `bits`, one rounding. T5 does not
//     scale the scores (no 1/sqrt(d)).
//
// Errors: every function throws posenc::Error naming the parameter, the value and the accepted values: the spec
// (posenc::validate: "bidirectional", "num_buckets", "max_distance", "heads", "regime"), the weights
// (posenc::check_t5_weights: "table"), "bits" (posenc::reference::check_bits), a head "h" (>= heads), a relative
// position "r" (|r| >= 2^31), a distance "a" (t5_log_position, t5_hf_z: outside [me, 2^31)), the lengths
// (posenc::check_alibi_lengths: "query_length", "key_length"), a query row "i" (>= query_length), a key "j"
// (>= key_length), the vectors ("q" empty or not finite, "k" of another length or not finite). Thread-safe: no
// function reads Boost's default precision; MPFR and GMP keep no shared mutable state here; T5Oracle's methods are
// const.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "posenc/reference/mp.hpp"
#include "posenc/t5_spec.hpp"

namespace posenc::reference {

// The first working precision of t5_log_position's Ziv loop is bits + kT5WorkingMargin.
inline constexpr unsigned kT5WorkingMargin = 64;

// The relative position r = j - q_i with q_i = key_length - query_length + i. Throws posenc::Error naming
// "query_length" / "key_length" (posenc::check_alibi_lengths: 1 <= Lq <= Lk < 2^31), "i" (>= query_length) or "j"
// (>= key_length).
std::int64_t t5_relative_position(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length);

// The bucket of relative position r (|r| < 2^31, else Error naming "r") in the spec's regime (header). Validates the
// spec first (Error naming the spec field).
std::int64_t t5_bucket(const T5Spec& spec, std::int64_t r);

// v = N ln(a/me) / ln(md/me) for me <= a < 2^31 (Error naming "a" otherwise), correctly rounded to bits (header).
Real t5_log_position(const T5Spec& spec, std::int64_t a, unsigned bits = kDefaultBits);

// The hf regime's float32 z = RN32(RN32(l / RN32(RN64 ln RN64(md/me))) * RN32(N)) before truncation, exactly, for
// me <= a < 2^31 (Error naming "a" otherwise), whatever spec.regime says.
double t5_hf_z(const T5Spec& spec, std::int64_t a);

class T5Oracle {
 public:
  // Validates the spec (posenc::validate), the weights (posenc::check_t5_weights) and bits.
  T5Oracle(const T5Spec& spec, const T5Weights& weights, unsigned bits = kDefaultBits);
  const T5Spec& spec() const noexcept { return spec_; }
  unsigned bits() const noexcept { return bits_; }

  // t5_bucket(spec(), r).
  std::int64_t bucket(std::int64_t r) const;

  // table[bucket(j - q_i)][h], exactly the table's double.
  double bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const;

  // <q, k> + bias(h, i, j, ...), exact mathematics (q, k finite doubles of equal nonzero length taken as exact),
  // rounded once to bits. No 1/sqrt(d) scale.
  Real score(std::size_t h, std::span<const double> q, std::span<const double> k, std::size_t i, std::size_t j,
             std::size_t query_length, std::size_t key_length) const;

 private:
  void check_head(std::size_t h) const;

  T5Spec spec_;
  unsigned bits_;
  std::vector<double> table_;  // [num_buckets][heads], row-major
};

}  // namespace posenc::reference
