#include "posenc/reference/fire.hpp"

#include <mpfr.h>

#include "mpfr_util.hpp"
#include "score_checks.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "posenc/alibi_spec.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;
using detail::F;

constexpr const char* kFireWhere = "fire reference";
constexpr mpfr_prec_t kThrBits = 128;      // thr = |L_multiplier init_L|: 106 bits, exact
constexpr mpfr_prec_t kFireArgBits = 3328;     // u1 = 1 + |c| d, u2 = 1 + |c| N: <= 3288 bits (header), exact
constexpr mpfr_prec_t kProductBits = 128;  // a product of two doubles: 106 bits, exact
constexpr mpfr_prec_t kRationalBits = 2304;  // A, B and the x = 0 bias: multiples of 2^-2148 below 2^53, exact
constexpr mpfr_prec_t kFloatSumBits = 640;   // a + b, r W2 + acc of float32 numbers: <= 427 bits, exact
constexpr mpfr_prec_t kScaleBits = 192;      // condition_scale's working precision
constexpr std::int64_t kPositionLimit = std::int64_t{1} << 24;

using detail::Mp;
using detail::raw;

// ---- validation ----------------------------------------------------------------------------------------------

void check_position(const char* name, std::int64_t v) {
  if (v < 0 || v >= kPositionLimit)
    throw Error(kFireWhere, name, std::to_string(v),
                std::string("a position 0 <= ") + name + " < 2^24 = " + std::to_string(kPositionLimit));
}

void check_fire_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_alibi_lengths(query_length, key_length);
  check_fire_key_length(key_length);
  if (i >= query_length)
    throw Error(kFireWhere, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kFireWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_fire_vectors(std::span<const double> q, std::span<const double> k, double scale) {
  check_score_vectors(kFireWhere, q, k, scale);
}

// The query position of row i (fire_spec.hpp: the queries are the last Lq keys).
std::int64_t distance(std::int64_t q, std::int64_t j) { return q >= j ? q - j : j - q; }

void require_exact(int ternary, const char* what) {
  if (ternary != 0) throw std::logic_error(std::string("fire reference: ") + what + " was rounded");
}

// ---- the exact regime: outward-rounded enclosures (header) ----------------------------------------------------

// x = ln(|c| d + 1) / (ln(|c| N + 1) + eps) for c != 0, d >= 1, enclosed: lo <= x <= hi, each step rounded
// outward at the destinations' precision. Every quantity is positive (u1 > 1, the denominator >= eps > 0), so the
// quotient's lower end is the numerator's lower end over the denominator's upper end.
void enclose_x(mpfr_ptr lo, mpfr_ptr hi, const FireWeights& wt, double eps, std::int64_t q, std::int64_t d,
               mpfr_prec_t w) {
  Mp c(53), thr(kThrBits), n(kThrBits), u1(kFireArgBits), u2(kFireArgBits);
  mpfr_set_d(c.get(), std::fabs(wt.c), MPFR_RNDN);  // exact
  // thr = |L_multiplier init_L|, exact at 106 bits
  {
    Mp lm(53);
    mpfr_set_d(lm.get(), wt.L_multiplier, MPFR_RNDN);
    require_exact(mpfr_mul_d(thr.get(), lm.get(), wt.init_L, MPFR_RNDN), "thr");
    mpfr_abs(thr.get(), thr.get(), MPFR_RNDN);
  }
  // N = max(q, thr)
  mpfr_set_si(n.get(), static_cast<long>(q), MPFR_RNDN);
  if (mpfr_cmp(thr.get(), n.get()) > 0) mpfr_set(n.get(), thr.get(), MPFR_RNDN);
  require_exact(mpfr_mul_si(u1.get(), c.get(), static_cast<long>(d), MPFR_RNDN), "|c| d");
  require_exact(mpfr_add_ui(u1.get(), u1.get(), 1, MPFR_RNDN), "1 + |c| d");
  require_exact(mpfr_mul(u2.get(), c.get(), n.get(), MPFR_RNDN), "|c| N");
  require_exact(mpfr_add_ui(u2.get(), u2.get(), 1, MPFR_RNDN), "1 + |c| N");

  Mp num_lo(w), num_hi(w), den_lo(w), den_hi(w);
  mpfr_log(num_lo.get(), u1.get(), MPFR_RNDD);
  mpfr_log(num_hi.get(), u1.get(), MPFR_RNDU);
  mpfr_log(den_lo.get(), u2.get(), MPFR_RNDD);  // +0 exactly when u2 = 1
  mpfr_log(den_hi.get(), u2.get(), MPFR_RNDU);
  mpfr_add_d(den_lo.get(), den_lo.get(), eps, MPFR_RNDD);
  mpfr_add_d(den_hi.get(), den_hi.get(), eps, MPFR_RNDU);
  mpfr_div(lo, num_lo.get(), den_hi.get(), MPFR_RNDD);
  mpfr_div(hi, num_hi.get(), den_lo.get(), MPFR_RNDU);
}

// mpfr_sum over Reals (all exact), into out with rounding rnd.
void sum_into(mpfr_ptr out, std::vector<Real>& terms, mpfr_rnd_t rnd) {
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size());
  for (Real& t : terms) ptrs.push_back(raw(t));
  mpfr_sum(out, ptrs.data(), static_cast<unsigned long>(ptrs.size()), rnd);
}

// a * b for doubles a, b, exactly.
Real product(double a, double b) {
  Real r = make_real(static_cast<unsigned>(kProductBits));
  mpfr_set_d(raw(r), a, MPFR_RNDN);
  require_exact(mpfr_mul_d(raw(r), raw(r), b, MPFR_RNDN), "a product of two doubles");
  return r;
}

enum class Bounds {
  rational,   // lo = hi = the exact bias (rational)
  enclosed,   // lo < b < hi, b irrational
  undecided,  // a ReLU's sign is not yet decided at this precision
};

// The exact bias of head h at (q, d) at working precision w, enclosed (header). lo and hi have precision
// >= kRationalBits.
Bounds exact_bias_bounds(mpfr_ptr lo, mpfr_ptr hi, const FireSpec& spec, const FireWeights& wt, std::size_t h,
                         std::int64_t q, std::int64_t d, mpfr_prec_t w) {
  const std::size_t width = spec.mlp_width;
  const double* w2 = wt.w2.data() + h * width;
  std::vector<Real> a_terms, b_terms;
  b_terms.push_back(product(wt.b2[h], 1.0));

  if (wt.c == 0.0 || d == 0) {
    // x = 0: r_k = max(0, b1[k])
    for (std::size_t k = 0; k < width; ++k)
      if (wt.b1[k] > 0.0) b_terms.push_back(product(w2[k], wt.b1[k]));
    sum_into(lo, b_terms, MPFR_RNDN);  // exact (header)
    mpfr_set(hi, lo, MPFR_RNDN);
    return Bounds::rational;
  }

  Mp xlo(w), xhi(w);
  enclose_x(xlo.get(), xhi.get(), wt, spec.eps, q, d, w);
  Mp t_lo(w), t_hi(w), w1(53), b1(53);
  for (std::size_t k = 0; k < width; ++k) {
    if (wt.w1[k] == 0.0) {  // the constant unit max(0, b1)
      if (wt.b1[k] > 0.0) b_terms.push_back(product(w2[k], wt.b1[k]));
      continue;
    }
    mpfr_set_d(w1.get(), wt.w1[k], MPFR_RNDN);
    mpfr_set_d(b1.get(), wt.b1[k], MPFR_RNDN);
    const bool up = wt.w1[k] > 0.0;  // W1 x + b1 increases with x
    mpfr_fma(t_lo.get(), w1.get(), up ? xlo.get() : xhi.get(), b1.get(), MPFR_RNDD);
    mpfr_fma(t_hi.get(), w1.get(), up ? xhi.get() : xlo.get(), b1.get(), MPFR_RNDU);
    if (mpfr_sgn(t_lo.get()) >= 0) {  // W1 x + b1 >= 0: r = W1 x + b1
      a_terms.push_back(product(w2[k], wt.w1[k]));
      b_terms.push_back(product(w2[k], wt.b1[k]));
    } else if (mpfr_sgn(t_hi.get()) > 0) {
      return Bounds::undecided;  // the enclosure straddles the kink
    }  // else W1 x + b1 <= 0: r = 0
  }
  Mp a(kRationalBits), b(kRationalBits);
  sum_into(a.get(), a_terms, MPFR_RNDN);  // exact (header)
  sum_into(b.get(), b_terms, MPFR_RNDN);  // exact
  if (mpfr_zero_p(a.get())) {
    mpfr_set(lo, b.get(), MPFR_RNDN);  // exact: precision >= kRationalBits
    mpfr_set(hi, b.get(), MPFR_RNDN);
    return Bounds::rational;
  }
  const bool up = mpfr_sgn(a.get()) > 0;
  mpfr_fma(lo, a.get(), up ? xlo.get() : xhi.get(), b.get(), MPFR_RNDD);
  mpfr_fma(hi, a.get(), up ? xhi.get() : xlo.get(), b.get(), MPFR_RNDU);
  return Bounds::enclosed;
}

// RN_bits(lo) == RN_bits(hi): then the value between them rounds there too; out holds it.
bool same_rounding(Real& out, mpfr_srcptr lo, mpfr_srcptr hi) {
  Mp other(mpfr_get_prec(raw(out)));
  mpfr_set(raw(out), lo, MPFR_RNDN);
  mpfr_set(other.get(), hi, MPFR_RNDN);
  return mpfr_equal_p(raw(out), other.get()) != 0;
}

// An exact zero of the exact regime is +0 (real arithmetic has no signed zero).
void unsign_zero(Real& r) {
  if (mpfr_zero_p(raw(r))) mpfr_set_zero(raw(r), +1);
}

mpfr_prec_t grow(mpfr_prec_t w, const char* what) {
  w += w / 2;
  if (w > kZivLimit) throw std::logic_error(std::string("fire reference: ") + what + " did not round within 2^20 bits");
  return w;
}

// ---- the cramming regime: float32 steps, each one correct rounding ------------------------------------------

Real f32(float v) {
  Real r = make_real(kEmu);
  mpfr_set_flt(raw(r), v, MPFR_RNDN);  // exact
  return r;
}

// RN32 of an exactly formed value (mpfr_get_flt: one rounding, subnormals included).
Real rn32_exact(mpfr_srcptr exact) { return f32(mpfr_get_flt(exact, MPFR_RNDN)); }

// RN32(a + b) for float32 numbers a, b.
Real fire_rn32_add(const Real& a, const Real& b) {
  Mp s(kFloatSumBits);
  require_exact(mpfr_add(s.get(), raw(a), raw(b), MPFR_RNDN), "a float32 sum");
  return rn32_exact(s.get());
}

// RN32(a b + c) for float32 numbers a, b, c: one rounding (a fused multiply-add).
Real rn32_fma(const Real& a, const Real& b, const Real& c) {
  Mp s(kFloatSumBits);
  require_exact(mpfr_fma(s.get(), raw(a), raw(b), raw(c), MPFR_RNDN), "a float32 fma");
  return rn32_exact(s.get());
}

Real abs_of(const Real& x) {
  Real r = with_bits(x, bits_of(x));
  mpfr_abs(raw(r), raw(r), MPFR_RNDN);
  return r;
}

// RN32(ln(RN32(|RN32(c32 v)| + 1))): the log transform of one float32 position difference or normalizer.
Real log_transform(const Real& c32, const Real& v) {
  const Real t = abs_of(rn_mul(F, c32, v, kEmu));
  return rn_log(F, fire_rn32_add(t, make_real(1, kEmu)), kEmu);
}

}  // namespace

// ---- FireOracle -------------------------------------------------------------------------------------------------

FireOracle::FireOracle(const FireSpec& spec, const FireWeights& weights, unsigned bits)
    : spec_(spec), weights_(weights), bits_(bits) {
  validate(spec_);
  check_fire_weights(spec_, weights_);
  check_bits(bits);
  const auto rn32 = [](double v) { return round_to_float(make_real(v, 53)); };
  c32_ = rn32(weights_.c);
  lm32_ = rn32(weights_.L_multiplier);
  il32_ = rn32(weights_.init_L);
  e32_ = rn32(spec_.eps);
  for (double v : weights_.w1) w1_32_.push_back(rn32(v));
  for (double v : weights_.b1) b1_32_.push_back(rn32(v));
  for (double v : weights_.w2) w2_32_.push_back(rn32(v));
  for (double v : weights_.b2) b2_32_.push_back(rn32(v));
}

void FireOracle::check_head(std::size_t h) const {
  if (h >= spec_.heads)
    throw Error(kFireWhere, "h", std::to_string(h), "a head index 0 <= h < heads = " + std::to_string(spec_.heads));
}

Real FireOracle::exact_x_of(std::int64_t q, std::int64_t d) const {
  Real out = make_real(bits_);
  if (weights_.c == 0.0 || d == 0) return out;  // +0 exactly
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kFireWorkingMargin;
  for (;;) {
    Mp lo(w), hi(w);
    enclose_x(lo.get(), hi.get(), weights_, spec_.eps, q, d, w);
    if (same_rounding(out, lo.get(), hi.get())) return out;  // x irrational (header): never a tie
    w = grow(w, "x");
  }
}

Real FireOracle::exact_bias_of(std::size_t h, std::int64_t q, std::int64_t d) const {
  Real out = make_real(bits_);
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kFireWorkingMargin;
  for (;;) {
    const mpfr_prec_t p = std::max(kRationalBits, w + 64);
    Mp lo(p), hi(p);
    const Bounds kind = exact_bias_bounds(lo.get(), hi.get(), spec_, weights_, h, q, d, w);
    if (kind == Bounds::rational) {
      mpfr_set(raw(out), lo.get(), MPFR_RNDN);  // the exact value rounded once
      unsign_zero(out);
      return out;
    }
    if (kind == Bounds::enclosed && same_rounding(out, lo.get(), hi.get())) return out;
    w = grow(w, "the bias");
  }
}

Real FireOracle::cramming_x_of(std::int64_t q, std::int64_t j) const {
  const Real c32 = f32(c32_);
  const Real Q = rn(F, make_real(q, kEmu), kEmu), J = rn(F, make_real(j, kEmu), kEmu);  // exact: < 2^24
  Real D = make_real(kEmu);
  require_exact(mpfr_sub(raw(D), raw(Q), raw(J), MPFR_RNDN), "Q - J");
  const Real thr = abs_of(rn_mul(F, f32(lm32_), f32(il32_), kEmu));
  const Real N = mpfr_cmp(raw(Q), raw(thr)) >= 0 ? Q : thr;
  const Real l = log_transform(c32, D);
  const Real n = log_transform(c32, N);
  return rn_div(F, l, fire_rn32_add(n, f32(e32_)), kEmu);
}

Real FireOracle::cramming_bias_of(std::size_t h, std::int64_t q, std::int64_t j) const {
  const Real x = cramming_x_of(q, j);
  const std::size_t width = spec_.mlp_width;
  Real acc = f32(0.0f);
  const Real zero = f32(0.0f);
  for (std::size_t k = 0; k < width; ++k) {
    const Real hk = fire_rn32_add(rn_mul(F, x, f32(w1_32_[k]), kEmu), f32(b1_32_[k]));
    const Real& r = mpfr_sgn(raw(hk)) > 0 ? hk : zero;  // max(h_k, +0)
    if (spec_.mlp_sum == FireMlpSum::unfused)
      acc = fire_rn32_add(acc, rn_mul(F, r, f32(w2_32_[h * width + k]), kEmu));  // the product rounded, then the sum
    else
      acc = rn32_fma(r, f32(w2_32_[h * width + k]), acc);
  }
  return fire_rn32_add(acc, f32(b2_32_[h]));
}

Real FireOracle::x(std::int64_t q, std::int64_t j) const {
  check_position("q", q);
  check_position("j", j);
  if (spec_.regime == FireRegime::cramming) return with_bits(cramming_x_of(q, j), bits_);
  return exact_x_of(q, distance(q, j));
}

Real FireOracle::bias_at(std::size_t h, std::int64_t q, std::int64_t j) const {
  check_head(h);
  check_position("q", q);
  check_position("j", j);
  if (spec_.regime == FireRegime::cramming) return with_bits(cramming_bias_of(h, q, j), bits_);
  return exact_bias_of(h, q, distance(q, j));
}

Real FireOracle::exact_bias_at(std::size_t h, std::int64_t q, std::int64_t j) const {
  check_head(h);
  check_position("q", q);
  check_position("j", j);
  return exact_bias_of(h, q, distance(q, j));
}

// Header: outward rounding with the upper end of x, the sum rounded up to 64 bits.
Real FireOracle::condition_scale(std::size_t h, std::int64_t q, std::int64_t j) const {
  check_head(h);
  check_position("q", q);
  check_position("j", j);
  const std::int64_t d = distance(q, j);
  const std::size_t width = spec_.mlp_width;
  Mp xlo(kScaleBits), xhi(kScaleBits);
  if (weights_.c == 0.0 || d == 0)
    mpfr_set_zero(xhi.get(), +1);
  else
    enclose_x(xlo.get(), xhi.get(), weights_, spec_.eps, q, d, kScaleBits);
  std::vector<Real> terms;
  terms.reserve(width + 1);
  terms.push_back(make_real(std::fabs(weights_.b2[h]), 64));
  Mp aw1(53), ab1(53);
  for (std::size_t k = 0; k < width; ++k) {
    mpfr_set_d(aw1.get(), std::fabs(weights_.w1[k]), MPFR_RNDN);
    mpfr_set_d(ab1.get(), std::fabs(weights_.b1[k]), MPFR_RNDN);
    Real t = make_real(static_cast<unsigned>(kScaleBits));
    mpfr_fma(raw(t), aw1.get(), xhi.get(), ab1.get(), MPFR_RNDU);
    mpfr_mul_d(raw(t), raw(t), std::fabs(weights_.w2[h * width + k]), MPFR_RNDU);
    terms.push_back(std::move(t));
  }
  Real out = make_real(64);
  sum_into(raw(out), terms, MPFR_RNDU);
  return out;
}

Real FireOracle::bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                      std::size_t key_length) const {
  check_head(h);
  check_fire_site(i, j, query_length, key_length);
  return bias_at(h, query_position(i, query_length, key_length), static_cast<std::int64_t>(j));
}

Real FireOracle::exact_bias(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                            std::size_t key_length) const {
  check_head(h);
  check_fire_site(i, j, query_length, key_length);
  return exact_bias_at(h, query_position(i, query_length, key_length), static_cast<std::int64_t>(j));
}

// scale <q, k> + b (header): the terms scale q_c k_c exactly, summed with the bias (exact, or the enclosure's ends
// rounded down and up) by mpfr_sum.
Real FireOracle::score(std::size_t h, std::size_t i, std::size_t j, std::size_t query_length,
                       std::size_t key_length, std::span<const double> q, std::span<const double> k,
                       double scale) const {
  check_head(h);
  check_fire_site(i, j, query_length, key_length);
  check_fire_vectors(q, k, scale);
  const std::int64_t qi = query_position(i, query_length, key_length);
  const std::int64_t d = distance(qi, static_cast<std::int64_t>(j));

  std::vector<Real> terms;
  terms.reserve(q.size());
  for (std::size_t c = 0; c < q.size(); ++c) {
    Real term = make_real(160);
    mpfr_set_d(raw(term), q[c], MPFR_RNDN);
    require_exact(mpfr_mul_d(raw(term), raw(term), k[c], MPFR_RNDN), "q k");     // 106 bits
    require_exact(mpfr_mul_d(raw(term), raw(term), scale, MPFR_RNDN), "scale q k");  // 159 bits
    terms.push_back(std::move(term));
  }
  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(terms.size() + 1);
  for (Real& term : terms) ptrs.push_back(raw(term));
  ptrs.push_back(nullptr);
  const auto n = static_cast<unsigned long>(ptrs.size());

  Real out = make_real(bits_);
  mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kFireWorkingMargin;
  for (;;) {
    const mpfr_prec_t p = std::max(kRationalBits, w + 64);
    Mp lo(p), hi(p);
    const Bounds kind = exact_bias_bounds(lo.get(), hi.get(), spec_, weights_, h, qi, d, w);
    if (kind == Bounds::rational) {
      ptrs.back() = lo.get();
      mpfr_sum(raw(out), ptrs.data(), n, MPFR_RNDN);  // every term exact: one rounding
      unsign_zero(out);
      return out;
    }
    if (kind == Bounds::enclosed) {
      Mp s_lo(w), s_hi(w);
      ptrs.back() = lo.get();
      mpfr_sum(s_lo.get(), ptrs.data(), n, MPFR_RNDD);
      ptrs.back() = hi.get();
      mpfr_sum(s_hi.get(), ptrs.data(), n, MPFR_RNDU);
      if (same_rounding(out, s_lo.get(), s_hi.get())) return out;  // the score is irrational: never a tie
    }
    w = grow(w, "the score");
  }
}

}  // namespace posenc::reference
