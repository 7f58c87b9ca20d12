#include "posenc/reference/t5.hpp"

#include <gmp.h>
#include <mpfr.h>

#include "mpfr_util.hpp"
#include "score_checks.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "posenc/alibi_spec.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;
using detail::F;
using detail::Z;

constexpr const char* kT5Where = "t5 reference";
constexpr std::int64_t kLimit = std::int64_t{1} << 31;  // |r| < 2^31, a < 2^31

using detail::Mp;
using detail::raw;

// An mpz_t cleared on scope exit.
// The parameters of one side of the bucketing (t5_spec.hpp): n, me = n // 2, N = n - me, md.
struct Side {
  std::int64_t n, me, big_n, md;
};

Side side_of(const T5Spec& s) {
  const auto n = static_cast<std::int64_t>(s.bidirectional ? s.num_buckets / 2 : s.num_buckets);
  const std::int64_t me = n / 2;
  return {n, me, n - me, s.max_distance};
}

// ---- validation ----------------------------------------------------------------------------------------------

void check_t5_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_alibi_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kT5Where, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kT5Where, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_relative(std::int64_t r) {
  if (r <= -kLimit || r >= kLimit)
    throw Error(kT5Where, "r", std::to_string(r), "a relative position -2^31 < r < 2^31");
}

void check_large_distance(const Side& sd, std::int64_t a) {
  if (a < sd.me || a >= kLimit)
    throw Error(kT5Where, "a", std::to_string(a),
                "a distance max_exact = " + std::to_string(sd.me) + " <= a < 2^31 (the logarithmic buckets)");
}

// ---- the definition, transcribed ---------------------------------------------------------------------------

// t5_spec.hpp: r = j - q_i, q_i = Lk - Lq + i.
std::int64_t relative(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  const std::int64_t qi = static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(query_length) +
                          static_cast<std::int64_t>(i);
  return static_cast<std::int64_t>(j) - qi;
}

// Exact regime (header): whether L(a) >= t, i.e. a^N me^t >= md^t me^N, for 0 <= t < N, in integers. With
// g = gcd(N, t), e1 = N/g > e2 = t/g: after the g-th root and division by me^e2, a^e1 >= md^e2 me^(e1 - e2).
bool at_least(const Side& sd, std::int64_t a, std::int64_t t) {
  if (t == 0) return true;  // a >= me
  const std::int64_t g = std::gcd(sd.big_n, t);
  const auto e1 = static_cast<unsigned long>(sd.big_n / g), e2 = static_cast<unsigned long>(t / g);
  Z lhs, rhs, f;
  mpz_ui_pow_ui(lhs.get(), static_cast<unsigned long>(a), e1);
  mpz_ui_pow_ui(rhs.get(), static_cast<unsigned long>(sd.md), e2);
  mpz_ui_pow_ui(f.get(), static_cast<unsigned long>(sd.me), e1 - e2);
  mpz_mul(rhs.get(), rhs.get(), f.get());
  return mpz_cmp(lhs.get(), rhs.get()) >= 0;
}

// min(L(a), N - 1) of the real numbers, a >= me (header): the largest t in [0, N - 1] with at_least(t).
std::int64_t exact_level(const Side& sd, std::int64_t a) {
  const std::int64_t top = sd.big_n - 1;
  if (a >= sd.md) return top;  // (a/me)^N >= (md/me)^N: L >= N
  // A hint only: the walk below decides with integers whatever the hint is.
  const double est = std::floor(static_cast<double>(sd.big_n) * std::log(static_cast<double>(a) / sd.me) /
                                std::log(static_cast<double>(sd.md) / sd.me));
  std::int64_t t = std::isfinite(est) ? static_cast<std::int64_t>(std::clamp(est, 0.0, static_cast<double>(top))) : 0;
  while (t < top && at_least(sd, a, t + 1)) ++t;
  while (t > 0 && !at_least(sd, a, t)) --t;
  return t;
}

// hf regime (header): z = RN32(RN32(RN32(ln RN32(RN32(a) / RN32(me))) / RN32(RN64(ln RN64(md / me)))) * RN32(N)),
// each step one correct rounding (mp.hpp rn_*), returned as the exact binary32 number in a Real.
Real hf_z(const Side& sd, std::int64_t a) {
  const Real A = rn(F, make_real(a, kEmu), kEmu);                                    // relative_position.float()
  const Real x = rn_div(F, A, rn(F, make_real(sd.me, kEmu), kEmu), kEmu);             // / max_exact
  const Real l = rn_log(F, x, kEmu);                                                  // torch.log
  const Real q64 = rn_div(Binary::f64, make_real(sd.md, kEmu), make_real(sd.me, kEmu), kEmu);  // md / me (Python)
  const Real c = rn_log(Binary::f64, q64, kEmu);                                      // math.log
  const Real y = rn_div(F, l, rn(F, c, kEmu), kEmu);                                  // / (float32 scalar)
  return rn_mul(F, y, rn(F, make_real(sd.big_n, kEmu), kEmu), kEmu);                 // * (num_buckets - max_exact)
}

std::int64_t hf_level(const Side& sd, std::int64_t a) {
  const Real z = hf_z(sd, a);
  // .to(torch.long): truncation toward zero; z >= 0 (x >= 1). z < 2^63 (|z| <= N ln(2^31) / ln(1 + 2^-15) ~ 2^36).
  const double zd = round_to_double(z);
  if (!(zd >= 0.0) || zd > 0x1p62) throw std::logic_error("t5 reference: z out of range");
  return std::min<std::int64_t>(static_cast<std::int64_t>(std::trunc(zd)), sd.big_n - 1);
}

std::int64_t bucket_of(const T5Spec& s, std::int64_t r) {
  const Side sd = side_of(s);
  std::int64_t base = 0, a = 0;
  if (s.bidirectional) {
    base = r > 0 ? sd.n : 0;
    a = r < 0 ? -r : r;
  } else {
    a = r < 0 ? -r : 0;
  }
  if (a < sd.me) return base + a;
  const std::int64_t level = s.regime == T5Regime::hf ? hf_level(sd, a) : exact_level(sd, a);
  return base + sd.me + level;  // = base + min(me + L, n - 1)
}

// Whether v = N ln(a/me)/ln(md/me) is rational (header): md/me = (C/C')^q and a/me = (C/C')^p for some
// q in [1, 30], p in [0, 30]; then *p_out / *q_out = ln(a/me)/ln(md/me) exactly.
bool rational_ratio(const Side& sd, std::int64_t a, unsigned long* p_out, unsigned long* q_out) {
  const auto gy = static_cast<unsigned long>(std::gcd(sd.md, sd.me));
  const auto gx = static_cast<unsigned long>(std::gcd(a, sd.me));
  const Z y1(static_cast<unsigned long>(sd.md) / gy), y2(static_cast<unsigned long>(sd.me) / gy);
  const Z x1(static_cast<unsigned long>(a) / gx), x2(static_cast<unsigned long>(sd.me) / gx);
  for (unsigned long q = 1; q <= 30; ++q) {
    Z c1, c2;
    if (mpz_root(c1.get(), y1.get(), q) == 0 || mpz_root(c2.get(), y2.get(), q) == 0) continue;  // not q-th powers
    Z pw1(1), pw2(1);  // c1^p, c2^p
    for (unsigned long p = 0; p <= 30; ++p) {
      if (mpz_cmp(pw1.get(), x1.get()) == 0 && mpz_cmp(pw2.get(), x2.get()) == 0) {
        *p_out = p;
        *q_out = q;
        return true;
      }
      mpz_mul(pw1.get(), pw1.get(), c1.get());
      mpz_mul(pw2.get(), pw2.get(), c2.get());
    }
  }
  return false;
}

// Sets out (precision w) to v with relative error < 2^(4 - w) (header); a > me, v irrational.
void log_position_approx(mpfr_ptr out, const Side& sd, std::int64_t a, mpfr_prec_t w) {
  Mp u(w), num(w), den(w);
  mpfr_set_si(u.get(), static_cast<long>(a - sd.me), MPFR_RNDN);  // exact (w >= 88)
  mpfr_div_si(u.get(), u.get(), static_cast<long>(sd.me), MPFR_RNDN);
  mpfr_log1p(num.get(), u.get(), MPFR_RNDN);
  mpfr_set_si(u.get(), static_cast<long>(sd.md - sd.me), MPFR_RNDN);
  mpfr_div_si(u.get(), u.get(), static_cast<long>(sd.me), MPFR_RNDN);
  mpfr_log1p(den.get(), u.get(), MPFR_RNDN);
  mpfr_div(out, num.get(), den.get(), MPFR_RNDN);
  mpfr_mul_si(out, out, static_cast<long>(sd.big_n), MPFR_RNDN);
}

}  // namespace

// ---- free functions --------------------------------------------------------------------------------------------

std::int64_t t5_relative_position(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_t5_site(i, j, query_length, key_length);
  return relative(i, j, query_length, key_length);
}

std::int64_t t5_bucket(const T5Spec& spec, std::int64_t r) {
  validate(spec);
  check_relative(r);
  return bucket_of(spec, r);
}

Real t5_log_position(const T5Spec& spec, std::int64_t a, unsigned bits) {
  validate(spec);
  check_bits(bits);
  const Side sd = side_of(spec);
  check_large_distance(sd, a);
  Real out = make_real(bits);
  unsigned long p = 0, q = 0;
  if (rational_ratio(sd, a, &p, &q)) {
    Mp v(128);
    mpfr_set_ui(v.get(), static_cast<unsigned long>(sd.big_n) * p, MPFR_RNDN);  // exact: < 2^20
    mpfr_div_ui(raw(out), v.get(), q, MPFR_RNDN);                               // one rounding
    return out;
  }
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits) + kT5WorkingMargin;
  for (;;) {
    Mp v(w);
    log_position_approx(v.get(), sd, a, w);
    if (mpfr_can_round(v.get(), w - 4, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), v.get(), MPFR_RNDN);
      return out;
    }
    w += w / 2;
    if (w > kZivLimit) throw std::logic_error("t5 reference: ln(a/me)/ln(md/me)*N did not round within 2^20 bits");
  }
}

double t5_hf_z(const T5Spec& spec, std::int64_t a) {
  validate(spec);
  const Side sd = side_of(spec);
  check_large_distance(sd, a);
  return round_to_double(hf_z(sd, a));  // exact: a binary32 number
}

// ---- T5Oracle --------------------------------------------------------------------------------------------------

T5Oracle::T5Oracle(const T5Spec& spec, const T5Weights& weights, unsigned bits) : spec_(spec), bits_(bits) {
  validate(spec_);
  check_t5_weights(spec_, weights);
  check_bits(bits);
  table_ = weights.table;
}

void T5Oracle::check_head(std::size_t h) const {
  if (h >= spec_.heads)
    throw Error(kT5Where, "h", std::to_string(h), "a head index 0 <= h < heads = " + std::to_string(spec_.heads));
}

std::int64_t T5Oracle::bucket(std::int64_t r) const {
  check_relative(r);
  return bucket_of(spec_, r);
}

double T5Oracle::bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                      std::size_t key_length) const {
  check_head(h);
  check_t5_site(i, j, query_length, key_length);
  const std::int64_t b = bucket_of(spec_, relative(i, j, query_length, key_length));
  return table_[static_cast<std::size_t>(b) * spec_.heads + h];
}

// <q, k> + bias (header): the exact products and the exact bias, summed by mpfr_sum with one rounding.
Real T5Oracle::score(std::size_t h, std::span<const double> q, std::span<const double> k, std::size_t i,
                     std::size_t j, std::size_t query_length, std::size_t key_length) const {
  check_head(h);
  check_t5_site(i, j, query_length, key_length);
  check_score_vectors(kT5Where, q, k, 1.0);
  const double b = bias(h, i, j, query_length, key_length);

  std::vector<Real> terms;
  terms.reserve(q.size() + 1);
  for (std::size_t c = 0; c < q.size(); ++c) {
    Real term = make_real(128);
    if (mpfr_mul(raw(term), raw(make_real(q[c], 64)), raw(make_real(k[c], 64)), MPFR_RNDN) != 0)
      throw std::logic_error("t5 reference: q_c k_c was rounded");  // 106 bits: never
    terms.push_back(std::move(term));
  }
  terms.push_back(make_real(b, 64));
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (Real& term : terms) ptrs.push_back(raw(term));
  Real out = make_real(bits_);
  mpfr_sum(raw(out), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
  return out;
}

}  // namespace posenc::reference
