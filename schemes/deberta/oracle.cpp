#include "posenc/reference/deberta.hpp"

#include <gmp.h>
#include <mpfr.h>

#include "mpfr_util.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;
using detail::F;
using detail::Z;
using detail::exact_root;

constexpr const char* kDebertaWhere = "deberta reference";
constexpr mpfr_prec_t kFirstEnclosure = 64;                 // the bucket's first enclosure precision W
constexpr std::size_t kMaxComparisonBits = std::size_t{1} << 16;  // GMP operands of the candidate test (header)
constexpr std::int64_t kMaxRel = (std::int64_t{1} << 31) - 1;

using detail::Mp;
using detail::raw;

// An mpz_t cleared on scope exit.
// The constants of the log buckets (deberta_spec.hpp): mid = position_buckets // 2, M = max_relative_positions - 1,
// N = mid - 1. validate() guarantees mid >= 1 and M >= mid + 1.
struct Geo {
  std::int64_t mid, big_m, big_n;
};

Geo geo_of(const DebertaSpec& s) {
  const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
  return {mid, static_cast<std::int64_t>(s.max_relative_positions) - 1, mid - 1};
}

// ---- validation ----------------------------------------------------------------------------------------------

void check_deberta_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_deberta_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kDebertaWhere, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kDebertaWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_rel(std::int64_t rel) {
  if (rel < -kMaxRel || rel > kMaxRel)
    throw Error(kDebertaWhere, "rel", std::to_string(rel), "a relative position -(2^31 - 1) <= rel <= 2^31 - 1");
}

void check_has_buckets(const DebertaSpec& s) {
  if (!s.position_buckets)
    throw Error(kDebertaWhere, "position_buckets", "none",
                "a number of buckets (the log-bucket curve v(a) exists only with position_buckets)");
}

void check_values(const char* name, std::span<const double> v, std::size_t want) {
  if (v.size() != want)
    throw Error(kDebertaWhere, name, "a vector of " + std::to_string(v.size()) + " values",
                "exactly head_dim = " + std::to_string(want) + " finite values", "has the wrong length");
  for (std::size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]))
      throw Error(kDebertaWhere, name, format_real(v[c]) + " at entry " + std::to_string(c), "finite numbers",
                  "is not finite");
}

void check_deberta_scale(std::optional<double> scale) {
  if (scale && !std::isfinite(*scale))
    throw Error(kDebertaWhere, "scale", format_real(*scale),
                "a finite number, or none for 1/sqrt(head_dim (1 + [c2p] + [p2c]))", "is not finite");
}

// ---- the real value v(a) ---------------------------------------------------------------------------------------

// out (precision w >= 64) = v~(a): v(a) = N ln(a / mid) / ln(M / mid) with |v~ - v| < 2^(EXP(v~) - w + 4) (header).
// Both logs are log1p of a positive argument: ln(a / mid) = log1p((a - mid) / mid) for a >= mid, -log1p((mid - a) / a)
// below; the integer differences are exact at w >= 64.
void approx_v(mpfr_ptr out, const Geo& g, std::int64_t a, mpfr_prec_t w) {
  Mp u(w), num(w), den(w);
  if (a >= g.mid) {
    mpfr_set_si(u.get(), static_cast<long>(a - g.mid), MPFR_RNDN);
    mpfr_div_si(u.get(), u.get(), static_cast<long>(g.mid), MPFR_RNDN);
    mpfr_log1p(num.get(), u.get(), MPFR_RNDN);
  } else {
    mpfr_set_si(u.get(), static_cast<long>(g.mid - a), MPFR_RNDN);
    mpfr_div_si(u.get(), u.get(), static_cast<long>(a), MPFR_RNDN);
    mpfr_log1p(num.get(), u.get(), MPFR_RNDN);
    mpfr_neg(num.get(), num.get(), MPFR_RNDN);
  }
  mpfr_set_si(u.get(), static_cast<long>(g.big_m - g.mid), MPFR_RNDN);
  mpfr_div_si(u.get(), u.get(), static_cast<long>(g.mid), MPFR_RNDN);
  mpfr_log1p(den.get(), u.get(), MPFR_RNDN);
  mpfr_div(out, num.get(), den.get(), MPFR_RNDN);
  mpfr_mul_si(out, out, static_cast<long>(g.big_n), MPFR_RNDN);
}

// The sign of v(a) - t for a > mid, t >= 0, N >= 1, i.e. of a^N mid^t - M^t mid^N, reduced by g = gcd(N, t) to
// a^e1 mid^e2 - M^e2 mid^e1 (header); std::nullopt when the operands would exceed kMaxComparisonBits (then v != t).
std::optional<int> compare_with_integer(const Geo& g, std::int64_t a, std::int64_t t) {
  const std::int64_t gd = std::gcd(g.big_n, t);  // gcd(N, 0) = N
  const auto e1 = static_cast<unsigned long>(g.big_n / gd), e2 = static_cast<unsigned long>(t / gd);
  const auto bits = [](std::int64_t x) {
    return static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(x)));
  };
  const std::size_t lhs_bits = e1 * bits(a) + e2 * bits(g.mid), rhs_bits = e2 * bits(g.big_m) + e1 * bits(g.mid);
  if (std::max(lhs_bits, rhs_bits) > kMaxComparisonBits) return std::nullopt;
  Z lhs, rhs, f;
  mpz_ui_pow_ui(lhs.get(), static_cast<unsigned long>(a), e1);
  mpz_ui_pow_ui(f.get(), static_cast<unsigned long>(g.mid), e2);
  mpz_mul(lhs.get(), lhs.get(), f.get());
  mpz_ui_pow_ui(rhs.get(), static_cast<unsigned long>(g.big_m), e2);
  mpz_ui_pow_ui(f.get(), static_cast<unsigned long>(g.mid), e1);
  mpz_mul(rhs.get(), rhs.get(), f.get());
  const int c = mpz_cmp(lhs.get(), rhs.get());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// ceil(v(a)) for a > mid, exactly (header).
std::int64_t exact_ceil(const Geo& g, std::int64_t a) {
  if (g.big_n == 0) return 0;  // v = 0
  for (mpfr_prec_t w = kFirstEnclosure;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("deberta reference: ceil(v(a)) not decided within 2^20 bits");
    Mp v(w), err(2), lo(w + 8), hi(w + 8), fl(w + 8);
    approx_v(v.get(), g, a, w);
    if (mpfr_sgn(v.get()) <= 0) throw std::logic_error("deberta reference: v(a) <= 0 for a > mid");
    const mpfr_exp_t e = mpfr_get_exp(v.get());
    if (e > w - 8) throw std::logic_error("deberta reference: v(a) too large for the enclosure");
    mpfr_set_ui_2exp(err.get(), 1, e - w + 4, MPFR_RNDN);
    mpfr_sub(lo.get(), v.get(), err.get(), MPFR_RNDD);
    mpfr_add(hi.get(), v.get(), err.get(), MPFR_RNDU);
    mpfr_floor(fl.get(), hi.get());
    const auto t = static_cast<std::int64_t>(mpfr_get_sj(fl.get(), MPFR_RNDN));  // exact: an integer < 2^36
    if (mpfr_cmp(lo.get(), fl.get()) > 0) return t + 1;  // lo > t = floor(hi): no integer in [lo, hi]
    if (t < 0) throw std::logic_error("deberta reference: negative candidate");
    if (const std::optional<int> c = compare_with_integer(g, a, t)) return *c <= 0 ? t : t + 1;
    // operands too large: v != t (header), a narrower enclosure leaves t out
  }
}

// hf regime (header): z = RN32(RN32(RN32(ln RN32(RN32(a) / RN32(mid))) / RN32(ln RN32(RN64(M / mid)))) * RN32(N)),
// each step one correct rounding (mp.hpp rn_*), as the exact binary32 number in a Real.
Real hf_z(const Geo& g, std::int64_t a) {
  const Real x = rn_div(F, rn(F, make_real(a, kEmu), kEmu), rn(F, make_real(g.mid, kEmu), kEmu), kEmu);  // a / mid
  const Real l = rn_log(F, x, kEmu);                                                              // torch.log
  const Real q64 = rn_div(Binary::f64, make_real(g.big_m, kEmu), make_real(g.mid, kEmu), kEmu);   // Python M / mid
  const Real den = rn_log(F, rn(F, q64, kEmu), kEmu);  // torch.log(torch.tensor(...)): float32 tensor, float32 log
  const Real y = rn_div(F, l, den, kEmu);
  return rn_mul(F, y, rn(F, make_real(g.big_n, kEmu), kEmu), kEmu);  // * (mid - 1)
}

// The hf bucket's magnitude for a > mid: RN32(ceil(z) + mid) (header), an integer.
std::int64_t hf_magnitude(const Geo& g, std::int64_t a) {
  const Real z = hf_z(g, a);
  Real c = make_real(kEmu);
  mpfr_ceil(raw(c), raw(z));  // exact: z is a binary32 number, its ceil is one too (or 2^k: 64 bits hold it)
  const Real lp = rn(F, make_real(round_to_double(c) + static_cast<double>(g.mid), kEmu), kEmu);
  // round_to_double(c) + mid is exact: c < 2^36 (z <= N ln(2^31) / ln(1 + 2^-15) < 2^35), mid <= 2^15
  const double d = round_to_double(lp);
  if (!(d >= 0.0) || d > 0x1p40) throw std::logic_error("deberta reference: hf log_pos out of range");
  return static_cast<std::int64_t>(d);
}

std::int64_t bucket_of(const DebertaSpec& s, std::int64_t rel) {
  if (!s.position_buckets) return rel;
  const Geo g = geo_of(s);
  const std::int64_t r = s.clamp ? std::clamp(rel, -g.big_m, g.big_m) : rel;
  const std::int64_t a = r < 0 ? -r : r;
  if (a <= g.mid) return r;
  const std::int64_t magnitude = s.regime == DebertaRegime::hf ? hf_magnitude(g, a) : g.mid + exact_ceil(g, a);
  return r < 0 ? -magnitude : magnitude;
}

std::int64_t relative_of(std::size_t i, std::size_t j) {
  return static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j);  // lengths <= 2^30: no overflow
}

std::int64_t index_of(const DebertaSpec& s, std::size_t i, std::size_t j) {
  const auto span = static_cast<std::int64_t>(deberta_span(s));
  return std::clamp(bucket_of(s, relative_of(i, j)) + span, std::int64_t{0}, 2 * span - 1);
}

// Whether v = N ln(a / mid) / ln(M / mid) is rational (header): M / mid = c^q and a / mid = c^p (p < 0: mid / a =
// c^|p|) for some q in [1, 29]; then *p_out / *q_out = ln(a / mid) / ln(M / mid) exactly.
bool rational_ratio(const Geo& g, std::int64_t a, long* p_out, unsigned long* q_out) {
  if (a == g.mid) {
    *p_out = 0;
    *q_out = 1;
    return true;
  }
  const bool above = a > g.mid;
  const std::int64_t xn = above ? a : g.mid, xd = above ? g.mid : a;  // x = xn / xd > 1
  const auto gy = static_cast<unsigned long>(std::gcd(g.big_m, g.mid));
  const auto gx = static_cast<unsigned long>(std::gcd(xn, xd));
  const Z y1(static_cast<unsigned long>(g.big_m) / gy), y2(static_cast<unsigned long>(g.mid) / gy);
  const Z x1(static_cast<unsigned long>(xn) / gx), x2(static_cast<unsigned long>(xd) / gx);
  for (unsigned long q = 1; q <= 29; ++q) {
    Z c1, c2;
    if (mpz_root(c1.get(), y1.get(), q) == 0 || mpz_root(c2.get(), y2.get(), q) == 0) continue;  // not q-th powers
    Z pw1(1), pw2(1);  // c1^p, c2^p
    for (long p = 1; p <= 30; ++p) {
      mpz_mul(pw1.get(), pw1.get(), c1.get());
      mpz_mul(pw2.get(), pw2.get(), c2.get());
      if (mpz_cmp(pw1.get(), x1.get()) > 0) break;  // c1 >= 2: the powers only grow
      if (mpz_cmp(pw1.get(), x1.get()) == 0 && mpz_cmp(pw2.get(), x2.get()) == 0) {
        *p_out = above ? p : -p;
        *q_out = q;
        return true;
      }
    }
  }
  return false;
}

// ---- exact sums ------------------------------------------------------------------------------------------------

// x * y exactly (106 bits, held at 128), appended unless zero.
void push_product(std::vector<Real>& terms, double x, double y) {
  if (x == 0.0 || y == 0.0) return;
  Real t = make_real(128);
  mpfr_set_d(raw(t), x, MPFR_RNDN);  // exact
  if (mpfr_mul_d(raw(t), raw(t), y, MPFR_RNDN) != 0)
    throw std::logic_error("deberta reference: a product of two doubles was rounded");
  terms.push_back(std::move(t));
}

// The exact sum of the terms (finite, nonzero): a precision from their exponents (header), mpfr_sum. +0 if none.
Real exact_sum(std::vector<Real>& terms) {
  if (terms.empty()) return make_real(kEmu);  // +0
  mpfr_exp_t top = 0, low = 0;
  for (std::size_t n = 0; n < terms.size(); ++n) {
    const mpfr_exp_t e = mpfr_get_exp(raw(terms[n]));
    const mpfr_exp_t lsb = e - static_cast<mpfr_exp_t>(mpfr_get_prec(raw(terms[n])));  // a multiple of 2^lsb
    top = n == 0 ? e : std::max(top, e);
    low = n == 0 ? lsb : std::min(low, lsb);
  }
  // |sum| < count 2^top <= 2^(top + bit_width(count)), a multiple of 2^low.
  const auto count = static_cast<unsigned long>(terms.size());
  const auto prec = static_cast<unsigned>(top - low) + static_cast<unsigned>(std::bit_width(count)) + 1;
  Real out = make_real(std::max(prec, kEmu));
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (Real& t : terms) ptrs.push_back(raw(t));
  if (mpfr_sum(raw(out), ptrs.data(), count, MPFR_RNDN) != 0)
    throw std::logic_error("deberta reference: an exact sum was rounded");
  return out;
}

}  // namespace

// ---- free functions --------------------------------------------------------------------------------------------

std::int64_t deberta_relative(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_deberta_site(i, j, query_length, key_length);
  return relative_of(i, j);
}

std::int64_t deberta_bucket(const DebertaSpec& spec, std::int64_t rel) {
  validate(spec);
  check_rel(rel);
  return bucket_of(spec, rel);
}

std::int64_t deberta_position_index(const DebertaSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                                    std::size_t key_length) {
  validate(spec);
  check_deberta_site(i, j, query_length, key_length);
  return index_of(spec, i, j);
}

Real deberta_log_position(const DebertaSpec& spec, std::int64_t a, unsigned bits) {
  validate(spec);
  check_bits(bits);
  check_has_buckets(spec);
  if (a < 1 || a > kMaxRel)
    throw Error(kDebertaWhere, "a", std::to_string(a), "a distance 1 <= a <= 2^31 - 1");
  const Geo g = geo_of(spec);
  Real out = make_real(bits);  // +0
  if (g.big_n == 0) return out;
  long p = 0;
  unsigned long q = 0;
  if (rational_ratio(g, a, &p, &q)) {
    Mp v(128);
    mpfr_set_si(v.get(), static_cast<long>(g.big_n) * p, MPFR_RNDN);  // exact: |N p| < 2^20
    mpfr_div_ui(raw(out), v.get(), q, MPFR_RNDN);                     // one rounding
    return out;
  }
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits) + kDebertaWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("deberta reference: v(a) did not round within 2^20 bits");
    Mp v(w);
    approx_v(v.get(), g, a, w);
    if (mpfr_can_round(v.get(), w - 4, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), v.get(), MPFR_RNDN);
      return out;
    }
  }
}

double deberta_hf_z(const DebertaSpec& spec, std::int64_t a) {
  validate(spec);
  check_has_buckets(spec);
  const Geo g = geo_of(spec);
  if (a <= g.mid || a > kMaxRel)
    throw Error(kDebertaWhere, "a", std::to_string(a),
                "a distance mid = position_buckets // 2 = " + std::to_string(g.mid) +
                    " < a <= 2^31 - 1 (the logarithmic buckets)");
  return round_to_double(hf_z(g, a));  // exact: a binary32 number
}

// ---- DebertaOracle ---------------------------------------------------------------------------------------------

DebertaOracle::DebertaOracle(const DebertaSpec& spec, const DebertaWeights& weights, unsigned bits)
    : spec_(spec), bits_(bits) {
  validate(spec_);
  check_deberta_weights(spec_, weights);
  check_bits(bits);
  pos_key_ = weights.pos_key;
  pos_query_ = weights.pos_query;
}

void DebertaOracle::check_head(std::size_t h) const {
  if (h >= spec_.heads)
    throw Error(kDebertaWhere, "h", std::to_string(h), "a head index 0 <= h < heads = " + std::to_string(spec_.heads));
}

std::span<const double> DebertaOracle::key_row(std::size_t h, std::int64_t c) const {
  const std::size_t row = h * deberta_table_rows(spec_) + static_cast<std::size_t>(c);
  return std::span<const double>(pos_key_).subspan(row * spec_.head_dim, spec_.head_dim);
}

std::span<const double> DebertaOracle::query_row(std::size_t h, std::int64_t c) const {
  const std::size_t row = h * deberta_table_rows(spec_) + static_cast<std::size_t>(c);
  return std::span<const double>(pos_query_).subspan(row * spec_.head_dim, spec_.head_dim);
}

Real DebertaOracle::score(std::size_t h, std::span<const double> q, std::span<const double> k, std::size_t i,
                          std::size_t j, std::size_t query_length, std::size_t key_length,
                          std::optional<double> scale) const {
  check_head(h);
  check_deberta_site(i, j, query_length, key_length);
  check_values("q", q, spec_.head_dim);
  check_values("k", k, spec_.head_dim);
  check_deberta_scale(scale);
  const std::int64_t c = index_of(spec_, i, j);

  // B = <q, k> + [c2p] <q, K_r[h][c]> + [p2c] <k, Q_r[h][c]>, exactly.
  std::vector<Real> terms;
  terms.reserve(3 * q.size());
  for (std::size_t n = 0; n < q.size(); ++n) push_product(terms, q[n], k[n]);
  if (spec_.c2p) {
    const std::span<const double> kr = key_row(h, c);
    for (std::size_t n = 0; n < q.size(); ++n) push_product(terms, q[n], kr[n]);
  }
  if (spec_.p2c) {
    const std::span<const double> qr = query_row(h, c);
    for (std::size_t n = 0; n < k.size(); ++n) push_product(terms, k[n], qr[n]);
  }
  const Real b = exact_sum(terms);

  Real out = make_real(bits_);
  const std::size_t n = spec_.head_dim * deberta_scale_factor(spec_);
  if (scale) {
    mpfr_mul_d(raw(out), raw(b), *scale, MPFR_RNDN);  // one rounding
    return out;
  }
  if (const unsigned long m = exact_root(n); m != 0) {
    mpfr_div_ui(raw(out), raw(b), m, MPFR_RNDN);  // one rounding
    return out;
  }
  if (mpfr_zero_p(raw(b))) return out;  // +0
  // B / sqrt(n), irrational: Ziv loop (header).
  Mp d(64);
  mpfr_set_ui(d.get(), static_cast<unsigned long>(n), MPFR_RNDN);
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kDebertaWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("deberta reference: B/sqrt(n) did not round within 2^20 bits");
    Mp r(w), t(w);
    mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDN);
    mpfr_mul(t.get(), raw(b), r.get(), MPFR_RNDN);
    if (mpfr_can_round(t.get(), w - 2, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits_) + 1)) {
      mpfr_set(raw(out), t.get(), MPFR_RNDN);
      return out;
    }
  }
}

double DebertaOracle::score_magnitude(std::size_t h, std::span<const double> q, std::span<const double> k,
                                      std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                                      std::optional<double> scale) const {
  check_head(h);
  check_deberta_site(i, j, query_length, key_length);
  check_values("q", q, spec_.head_dim);
  check_values("k", k, spec_.head_dim);
  check_deberta_scale(scale);
  const std::int64_t c = index_of(spec_, i, j);
  std::vector<Real> terms;
  terms.reserve(3 * q.size());
  for (std::size_t n = 0; n < q.size(); ++n) push_product(terms, std::fabs(q[n]), std::fabs(k[n]));
  if (spec_.c2p) {
    const std::span<const double> kr = key_row(h, c);
    for (std::size_t n = 0; n < q.size(); ++n) push_product(terms, std::fabs(q[n]), std::fabs(kr[n]));
  }
  if (spec_.p2c) {
    const std::span<const double> qr = query_row(h, c);
    for (std::size_t n = 0; n < k.size(); ++n) push_product(terms, std::fabs(k[n]), std::fabs(qr[n]));
  }
  const Real sum = exact_sum(terms);
  Mp r(128), out(128);
  if (scale) {
    mpfr_set_d(r.get(), std::fabs(*scale), MPFR_RNDN);  // exact
  } else {
    Mp d(64);
    mpfr_set_ui(d.get(), static_cast<unsigned long>(spec_.head_dim * deberta_scale_factor(spec_)), MPFR_RNDN);
    mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDU);
  }
  mpfr_mul(out.get(), raw(sum), r.get(), MPFR_RNDU);
  return mpfr_get_d(out.get(), MPFR_RNDU);
}

}  // namespace posenc::reference
