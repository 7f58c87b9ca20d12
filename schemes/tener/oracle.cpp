#include "posenc/reference/tener.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "mpfr_util.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;

constexpr const char* kTenerWhere = "tener oracle";
constexpr mpfr_prec_t kMargin = 64;  // first Ziv precision: bits + kMargin + (the exponent of the error terms)

using detail::raw;

// An mpfr_t of any precision, cleared on scope exit, movable (terms of an exact sum live in a vector).
using Num = detail::Mp;  // an mpfr_t of a working precision (mpfr_util.hpp)
using detail::exact_root;
using detail::exact_sum;
using detail::push_product;
using detail::pointers;
using detail::push_scaled;

// ---- validation ------------------------------------------------------------------------------------------------

void check_tener_length(std::size_t length) {
  if (length == 0 || length > static_cast<std::size_t>(kTenerMaxLength))
    throw Error(kTenerWhere, "length", std::to_string(length), "1 .. 2^30 - 1 tokens (TENER is self-attention: Lq = Lk = L)");
}

void check_t(std::int64_t t, std::size_t length) {
  const auto l = static_cast<std::int64_t>(length);
  if (t < -l || t > l - 1)
    throw Error(kTenerWhere, "t", std::to_string(t),
                "a signed distance of the call's table, -L .. L - 1 = " + std::to_string(-l) + " .. " +
                    std::to_string(l - 1));
}

void check_m(const TenerSpec& s, std::size_t m) {
  if (m >= s.d_head)
    throw Error(kTenerWhere, "m", std::to_string(m), "a column 0 .. d_head - 1 = " + std::to_string(s.d_head - 1));
}

void check_token(const char* name, std::size_t v, std::size_t length) {
  if (v >= length)
    throw Error(kTenerWhere, name, std::to_string(v), std::string("a token 0 <= ") + name + " < length = " +
                                                    std::to_string(length));
}

void check_tener_vector(const char* name, std::span<const double> v, std::size_t d_head) {
  if (v.size() != d_head)
    throw Error(kTenerWhere, name, "a vector of " + std::to_string(v.size()) + " values",
                "exactly d_head = " + std::to_string(d_head) + " finite values", "has the wrong length");
  for (std::size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]))
      throw Error(kTenerWhere, name, format_real(v[c]) + " in channel " + std::to_string(c), "finite numbers",
                  "is not finite");
}

// ---- the table, transcribed ------------------------------------------------------------------------------------

// A fresh module's call of length L returns a zero row at t = -L exactly when L > init_size / 2 (tener_spec.hpp).
bool is_zero_row(const TenerSpec& s, std::int64_t t, std::size_t length) {
  return length > s.init_size / 2 && t == -static_cast<std::int64_t>(length);
}

// |t| < 2^b.
int magnitude_bits(std::int64_t t) {
  const auto a = static_cast<std::uint64_t>(t < 0 ? -t : t);
  return static_cast<int>(std::bit_width(a));
}

// w (its precision W) = RN(exp(-RN(RN(RN(ln 10000) k) / (h - 1)))): relative error <= 28.7 * 2^-W (header).
void exact_frequency(mpfr_ptr w, std::size_t k, std::size_t h) {
  Num x(mpfr_get_prec(w));
  mpfr_log_ui(x.get(), 10000UL, MPFR_RNDN);
  mpfr_mul_ui(x.get(), x.get(), static_cast<unsigned long>(k), MPFR_RNDN);
  mpfr_div_ui(x.get(), x.get(), static_cast<unsigned long>(h - 1), MPFR_RNDN);
  mpfr_neg(x.get(), x.get(), MPFR_RNDN);
  mpfr_exp(w, x.get(), MPFR_RNDN);
}

// y (precision W) = RN(sin / cos(RN(t w))), w from exact_frequency at W: |y - trig(t w_k)| < 2^(5 + b - W) +
// 2^(EXP(y) - W - 1), |t| < 2^b (header).
void trig_approx(mpfr_ptr y, mpfr_srcptr w, std::int64_t t, bool cosine) {
  Num a(mpfr_get_prec(y));
  mpfr_mul_si(a.get(), w, static_cast<long>(t), MPFR_RNDN);
  if (cosine)
    mpfr_cos(y, a.get(), MPFR_RNDN);
  else
    mpfr_sin(y, a.get(), MPFR_RNDN);
}

// sin / cos(t w_k) correctly rounded to `bits`. `cached`, when given, is w_k from exact_frequency at its own
// precision, used on the first pass if that precision is at least the first one the loop would pick.
Real exact_trig(std::size_t h, std::size_t k, std::int64_t t, bool cosine, unsigned bits, mpfr_srcptr cached) {
  Real out = make_real(bits);
  if (t == 0) {
    if (cosine)
      mpfr_set_ui(raw(out), 1, MPFR_RNDN);
    else
      mpfr_set_zero(raw(out), 1);
    return out;
  }
  const int b = magnitude_bits(t);
  mpfr_prec_t w_prec = static_cast<mpfr_prec_t>(bits) + kMargin + b;
  const bool use_cache = cached != nullptr && mpfr_get_prec(cached) >= w_prec;
  if (use_cache) w_prec = mpfr_get_prec(cached);
  for (bool first = true;; w_prec += w_prec / 2, first = false) {
    if (w_prec > kZivLimit) throw std::logic_error("tener oracle: sin/cos(t w_k) did not round within 2^20 bits");
    Num w(w_prec), y(w_prec);
    if (first && use_cache)
      mpfr_set(w.get(), cached, MPFR_RNDN);  // same precision: exact
    else
      exact_frequency(w.get(), k, h);
    trig_approx(y.get(), w.get(), t, cosine);
    // error < 2^(5 + b - W) + 2^(EXP(y) - W - 1) <= 2^(max(5 + b, EXP(y) - 1) + 1 - W)
    const mpfr_exp_t ey = mpfr_get_exp(y.get());
    const mpfr_exp_t err_exp = std::max<mpfr_exp_t>(5 + b, ey - 1) + 1 - w_prec;
    const mpfr_exp_t err = ey - err_exp;
    if (err > 0 && mpfr_can_round(y.get(), err, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), y.get(), MPFR_RNDN);
      return out;
    }
  }
}

// get_embedding's float32 steps (header), each correctly rounded; 64-bit Reals holding binary32/64 numbers.

Real emulated_frequency(std::size_t k, std::size_t h) {
  constexpr Binary F = Binary::f32, D = Binary::f64;
  const Real ln64 = rn_log(D, make_real(std::int64_t{10000}, kEmu), kEmu);  // math.log(10000)
  const Real c64 = rn_div(D, ln64, make_real(static_cast<std::int64_t>(h - 1), kEmu), kEmu);  // / (h - 1)
  Real neg = make_real(kEmu);
  mpfr_neg(raw(neg), raw(c64), MPFR_RNDN);
  const Real neg32 = rn(F, neg, kEmu);  // the Python float -emb cast to the tensor's float32
  const Real k32 = rn(F, make_real(static_cast<std::int64_t>(k), kEmu), kEmu);  // arange(half_dim).float()
  return rn_exp(F, rn_mul(F, k32, neg32, kEmu), kEmu);
}

Real emulated_trig(const Real& w32, std::int64_t t, bool cosine) {
  constexpr Binary F = Binary::f32;
  const Real t32 = rn(F, make_real(t, kEmu), kEmu);  // arange(-N//2, N//2, dtype=float)
  const Real a32 = rn_mul(F, t32, w32, kEmu);
  return cosine ? rn_cos(F, a32, kEmu) : rn_sin(F, a32, kEmu);
}

// R(t)[m] after every check.
Real entry(const TenerSpec& s, std::int64_t t, std::size_t m, std::size_t length, unsigned bits) {
  const std::size_t h = s.d_head / 2;
  if (m >= 2 * h || is_zero_row(s, t, length)) {
    Real z = make_real(bits);
    mpfr_set_zero(raw(z), 1);
    return z;
  }
  const bool cosine = m >= h;
  const std::size_t k = cosine ? m - h : m;
  if (s.regime == Regime::exact) return exact_trig(h, k, t, cosine, bits, nullptr);
  return with_bits(emulated_trig(emulated_frequency(k, h), t, cosine), bits);
}

// ---- exact sums ------------------------------------------------------------------------------------------------

// x + y + z for doubles, exactly.
Num exact_sum3(double x, double y, double z) {
  std::vector<Num> terms;
  for (double v : {x, y, z}) {
    if (v == 0.0) continue;
    Num n(53);
    mpfr_set_d(n.get(), v, MPFR_RNDN);
    terms.push_back(std::move(n));
  }
  return exact_sum(terms);
}

// ---- the score, in steps ---------------------------------------------------------------------------------------

void check_score_args(const TenerSpec& s, std::span<const double> q, std::span<const double> k, std::size_t head,
                      std::size_t i, std::size_t j, std::size_t length, std::optional<double> scale) {
  check_tener_vector("q", q, s.d_head);
  check_tener_vector("k", k, s.d_head);
  if (head >= s.heads)
    throw Error(kTenerWhere, "head", std::to_string(head), "a head 0 .. heads - 1 = " + std::to_string(s.heads - 1));
  check_tener_length(length);
  check_token("i", i, length);
  check_token("j", j, length);
  if (scale && !std::isfinite(*scale))
    throw Error(kTenerWhere, "scale", format_real(*scale), "a finite number, or none for the spec's scale",
                "is not finite");
}

// One entry's inputs: q, k, a = r_r_bias and b = r_w_bias of its head, the query term's t = j - i (the key term's is
// -t: R(i - j)).
struct TenerTerms {
  const TenerSpec& spec;
  std::span<const double> q, k, a, b;
  std::int64_t t;
  std::size_t length;
};

// C = <q + a, k> as exact products; in the exact regime with t != 0, B = C + sum_k alpha_k sin(|t| w_k) + beta_k
// cos(|t| w_k) (header) with its exact alpha_k, beta_k; transcendental when one of them is not zero.
struct TenerExpansion {
  std::vector<Num> content, alpha, beta;
  bool transcendental = false;
};

TenerExpansion expand(const TenerTerms& st) {
  const std::size_t d = st.spec.d_head, h = d / 2;
  TenerExpansion x;
  x.content.reserve(2 * d);
  for (std::size_t c = 0; c < d; ++c) {
    push_product(x.content, st.q[c], st.k[c]);
    push_product(x.content, st.a[c], st.k[c]);
  }
  if (st.spec.regime != Regime::exact || st.t == 0) return x;
  const double sq = st.t > 0 ? 1.0 : -1.0, sk = -sq;  // sin(t x) = sgn(t) sin(|t| x)
  for (std::size_t p = 0; p < h; ++p) {
    x.alpha.push_back(exact_sum3(sq * st.q[p], sq * st.b[p], sk * st.k[p]));
    x.beta.push_back(exact_sum3(st.q[h + p], st.b[h + p], st.k[h + p]));
    x.transcendental = x.transcendental || !mpfr_zero_p(x.alpha.back().get()) || !mpfr_zero_p(x.beta.back().get());
  }
  return x;
}

// B dyadic: emulated (float32 table), t = 0 (R(0) = [0 | 1]), or every alpha_k = beta_k = 0 (B = C).
Real dyadic_score(const TenerTerms& st, std::vector<Num> terms, std::optional<double> scale, unsigned bits) {
  const std::size_t d = st.spec.d_head, h = d / 2;
  if (st.spec.regime == Regime::emulated || st.t == 0) {
    for (std::size_t c = 0; c < 2 * h; ++c) {
      const Real r1 = entry(st.spec, st.t, c, st.length, 64);  // exact: a float32 number or 0 / 1
      const Real r2 = entry(st.spec, -st.t, c, st.length, 64);
      push_scaled(terms, raw(r1), st.q[c]);
      push_scaled(terms, raw(r1), st.b[c]);
      push_scaled(terms, raw(r2), st.k[c]);
    }
  }
  const Num sum = exact_sum(terms);
  Real out = make_real(bits);
  if (scale) {
    mpfr_mul_d(raw(out), sum.get(), *scale, MPFR_RNDN);  // one rounding
  } else if (!st.spec.scale) {
    mpfr_set(raw(out), sum.get(), MPFR_RNDN);
  } else if (const unsigned long root = exact_root(d); root != 0) {
    mpfr_div_ui(raw(out), sum.get(), root, MPFR_RNDN);
  } else if (mpfr_zero_p(sum.get())) {
    mpfr_set_zero(raw(out), 1);
  } else {
    detail::divide_by_root(raw(out), sum.get(), d, kMargin, "tener oracle");
  }
  return out;
}

// M = sum |alpha_k| + |beta_k|, rounded up.
Num magnitude(const TenerExpansion& x) {
  Num mag(64);
  mpfr_set_zero(mag.get(), 1);
  for (const std::vector<Num>* coefs : {&x.alpha, &x.beta})
    for (const Num& c : *coefs) {
      Num a(64);
      mpfr_abs(a.get(), c.get(), MPFR_RNDU);
      mpfr_add(mag.get(), mag.get(), a.get(), MPFR_RNDU);
    }
  return mag;
}

// The terms of B at working precision w: C exactly, then alpha_k y_k and beta_k y_k with y_k = trig_approx(|t| w_k),
// each product exact.
std::vector<Num> approximate_terms(const TenerTerms& st, const TenerExpansion& x, mpfr_prec_t w) {
  const std::size_t h = st.spec.d_head / 2;
  const std::int64_t t_abs = st.t > 0 ? st.t : -st.t;
  std::vector<Num> terms;
  terms.reserve(x.content.size() + 2 * h);
  for (const Num& c : x.content) {
    Num copy(mpfr_get_prec(c.get()));
    mpfr_set(copy.get(), c.get(), MPFR_RNDN);  // exact
    terms.push_back(std::move(copy));
  }
  for (std::size_t p = 0; p < h; ++p) {
    Num wk(w);
    exact_frequency(wk.get(), p, h);
    for (bool cosine : {false, true}) {
      const Num& coef = cosine ? x.beta[p] : x.alpha[p];
      if (mpfr_zero_p(coef.get())) continue;
      Num y(w);
      trig_approx(y.get(), wk.get(), t_abs, cosine);  // within 2^(6 + bt - W) of the real value
      Num prod(w + mpfr_get_prec(coef.get()));
      if (mpfr_mul(prod.get(), y.get(), coef.get(), MPFR_RNDN) != 0)
        throw std::logic_error("tener oracle: alpha_k y_k was rounded");
      terms.push_back(std::move(prod));
    }
  }
  return terms;
}

// Transcendental B: Ziv loop (header). M = sum |alpha_k| + |beta_k| < 2^m, |t| < 2^bt, |s| < 2^S (s = 1 unless
// given or spec.scale).
Real transcendental_score(const TenerTerms& st, const TenerExpansion& x, std::optional<double> scale, unsigned bits) {
  const mpfr_exp_t m_exp = mpfr_get_exp(magnitude(x).get());
  const int bt = magnitude_bits(st.t);
  mpfr_exp_t s_exp = 1;
  if (scale) {
    int e2 = 0;
    std::frexp(*scale, &e2);  // |scale| in [2^(e2-1), 2^e2)
    s_exp = e2;
  }
  Num dd(64);
  mpfr_set_ui(dd.get(), static_cast<unsigned long>(st.spec.d_head), MPFR_RNDN);
  Real out = make_real(bits);
  const mpfr_exp_t first = static_cast<mpfr_exp_t>(bits) + kMargin + 6 + bt + std::max<mpfr_exp_t>(m_exp, 0);
  for (mpfr_prec_t w = first;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("tener oracle: a score did not round within 2^20 bits");
    std::vector<Num> terms = approximate_terms(st, x, w);
    std::vector<mpfr_ptr> ptrs = pointers(terms);
    Num bsum(w), e(w);
    mpfr_sum(bsum.get(), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
    if (mpfr_zero_p(bsum.get())) continue;
    mpfr_exp_t s_bound = s_exp;
    if (scale) {
      mpfr_mul_d(e.get(), bsum.get(), *scale, MPFR_RNDN);
    } else if (st.spec.scale) {
      Num r(w);
      mpfr_rec_sqrt(r.get(), dd.get(), MPFR_RNDN);
      s_bound = mpfr_get_exp(r.get()) + 1;
      mpfr_mul(e.get(), bsum.get(), r.get(), MPFR_RNDN);
    } else {
      mpfr_set(e.get(), bsum.get(), MPFR_RNDN);
    }
    const mpfr_exp_t xe = std::max<mpfr_exp_t>(6 + bt + m_exp, mpfr_get_exp(bsum.get()));
    const mpfr_exp_t err_exp = std::max<mpfr_exp_t>(s_bound + xe + 2, mpfr_get_exp(e.get())) + 1 - w;
    const mpfr_exp_t err = mpfr_get_exp(e.get()) - err_exp;
    if (err > 0 && mpfr_can_round(e.get(), err, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), e.get(), MPFR_RNDN);
      return out;
    }
  }
}

}  // namespace

// ---- the table -------------------------------------------------------------------------------------------------

Real tener_table_value(const TenerSpec& s, std::int64_t t, std::size_t m, std::size_t length, unsigned bits) {
  validate(s);
  check_bits(bits);
  check_tener_length(length);
  check_t(t, length);
  check_m(s, m);
  return entry(s, t, m, length, bits);
}

std::vector<double> tener_table_f64(const TenerSpec& s, std::size_t length) {
  validate(s);
  check_tener_length(length);
  const std::size_t d = s.d_head, h = d / 2;
  if (2 * length > std::vector<double>().max_size() / d)
    throw Error(kTenerWhere, "length", std::to_string(length), "a length whose [2L][d_head] table can be allocated");
  std::vector<double> out(2 * length * d, 0.0);
  const auto l = static_cast<std::int64_t>(length);
  const mpfr_prec_t w_prec = 53 + kMargin + magnitude_bits(l);  // the first Ziv precision of every |t| <= L
  for (std::size_t k = 0; k < h; ++k) {
    Num w(w_prec);
    Real w32;
    if (s.regime == Regime::exact)
      exact_frequency(w.get(), k, h);
    else
      w32 = emulated_frequency(k, h);
    for (std::size_t c = 0; c < 2 * length; ++c) {
      const std::int64_t t = static_cast<std::int64_t>(c) - l;
      if (is_zero_row(s, t, length)) continue;
      for (bool cosine : {false, true}) {
        const Real v = s.regime == Regime::exact ? exact_trig(h, k, t, cosine, 53, w.get())
                                                 : emulated_trig(w32, t, cosine);
        out[c * d + (cosine ? h + k : k)] = round_to_double(v);
      }
    }
  }
  return out;
}

// ---- the oracle ------------------------------------------------------------------------------------------------

TenerOracle::TenerOracle(const TenerSpec& spec, const TenerWeights& weights, unsigned bits)
    : spec_(spec), bits_(bits) {
  validate(spec_);
  check_tener_weights(spec_, weights);
  check_bits(bits);
  weights_ = weights;
}

bool TenerOracle::visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j,
                          std::size_t length) const {
  check_tener_length(length);
  check_token("i", i, length);
  check_token("j", j, length);
  if (!key_mask.empty() && key_mask.size() != length)
    throw Error(kTenerWhere, "key_mask", "a mask of " + std::to_string(key_mask.size()) + " entries",
                "empty (every key real) or length = " + std::to_string(length) + " entries (0 = padding)");
  return key_mask.empty() || key_mask[j] != 0;
}

Real TenerOracle::score(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i,
                        std::size_t j, std::size_t length, std::optional<double> scale) const {
  check_score_args(spec_, q, k, head, i, j, length, scale);
  if (scale && *scale == 0.0) {
    // Zero, signed as B * scale: B's sign from the unscaled score (correctly rounded, so its sign is B's).
    Real out = make_real(bits_);
    const Real unscaled = score(q, k, head, i, j, length, 1.0);
    mpfr_mul_d(raw(out), raw(unscaled), *scale, MPFR_RNDN);
    return out;
  }
  const std::size_t d = spec_.d_head;
  const TenerTerms st{spec_,
                      q,
                      k,
                      std::span<const double>(weights_.r_r_bias).subspan(head * d, d),
                      std::span<const double>(weights_.r_w_bias).subspan(head * d, d),
                      static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i),
                      length};
  TenerExpansion x = expand(st);
  if (!x.transcendental) return dyadic_score(st, std::move(x.content), scale, bits_);
  return transcendental_score(st, x, scale, bits_);
}

}  // namespace posenc::reference
