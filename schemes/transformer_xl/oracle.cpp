#include "posenc/reference/transformer_xl.hpp"

#include <mpfr.h>

#include "mpfr_util.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "score_checks.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;
using detail::kEmu;

constexpr const char* kTransformerXlWhere = "transformer_xl reference";
constexpr Binary F32 = Binary::f32;

using detail::raw;

using Num = detail::Mp;  // an mpfr_t of a working precision (mpfr_util.hpp)
using detail::exact_root;
using detail::exact_sum;

// ---- validation ------------------------------------------------------------------------------------------------

void check_position(const TransformerXlSpec& s, std::int64_t position) {
  if (position < 0 || position > kTxlMaxLength)
    throw Error(kTransformerXlWhere, "position", std::to_string(position),
                "a pos_seq value 0 .. 2^31 - 1 (a distance q_i - j >= 0, clamped)");
  if (s.clamp_len > 0 && position > s.clamp_len)
    throw Error(kTransformerXlWhere, "position", std::to_string(position),
                "0 .. clamp_len = " + std::to_string(s.clamp_len) + " (pos_seq is clamped: pass min(delta, clamp_len))");
}

void check_column(const TransformerXlSpec& s, std::size_t m) {
  if (m >= s.d_model)
    throw Error(kTransformerXlWhere, "m", std::to_string(m), "a column 0 .. d_model - 1 = " + std::to_string(s.d_model - 1));
}

void check_transformer_xl_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_transformer_xl_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kTransformerXlWhere, "i", std::to_string(i), "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kTransformerXlWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_transformer_xl_vector(const char* name, std::span<const double> v, std::size_t d_head) {
  if (v.size() != d_head)
    throw Error(kTransformerXlWhere, name, "a vector of " + std::to_string(v.size()) + " values",
                "exactly d_head = " + std::to_string(d_head) + " finite values", "has the wrong length");
  for (std::size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]))
      throw Error(kTransformerXlWhere, name, format_real(v[c]) + " at entry " + std::to_string(c), "finite numbers",
                  "is not finite");
}

// ---- the definition, transcribed --------------------------------------------------------------------------------

// q_i = klen - qlen + i (lengths < 2^31: no overflow).
// pos_seq.clamp_(max=clamp_len) if clamp_len > 0.
std::int64_t clamped(const TransformerXlSpec& s, std::int64_t delta) {
  return s.clamp_len > 0 ? std::min(delta, s.clamp_len) : delta;
}

// MemTransformerLM._forward's dec_attn_mask, entry (i, j): triu(ones, 1 + mlen) [+ tril(ones, -mask_shift_len)].
// torch.triu(x, d) keeps j - i >= d, torch.tril(x, d) keeps j - i <= d; a non-zero entry hides the key.
bool hidden_by_code_mask(const TransformerXlSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length) {
  const auto qlen = static_cast<std::int64_t>(query_length);
  const auto klen = static_cast<std::int64_t>(key_length);
  const std::int64_t mlen = klen - qlen;
  const std::int64_t diff = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
  if (diff >= 1 + mlen) return true;
  if (!s.same_length) return false;
  const std::int64_t mask_len = klen - static_cast<std::int64_t>(s.mem_len);
  const std::int64_t mask_shift_len = mask_len > 0 ? qlen - mask_len : qlen;
  return diff <= -mask_shift_len;
}

// ---- exact arithmetic -------------------------------------------------------------------------------------------

Num from_double(double x) {
  Num t(53);
  mpfr_set_d(t.get(), x, MPFR_RNDN);  // exact
  return t;
}

// x + y of two doubles, exactly.
Num exact_add(double x, double y) {
  std::vector<Num> t;
  t.push_back(from_double(x));
  t.push_back(from_double(y));
  return exact_sum(t);
}

// a * y exactly (a exact, y a double or a number of precision py).
Num exact_mul(const Num& a, mpfr_srcptr y) {
  Num p(a.prec() + mpfr_get_prec(y));
  if (mpfr_mul(p.get(), a.get(), y, MPFR_RNDN) != 0)
    throw std::logic_error("transformer_xl reference: an exact product was rounded");
  return p;
}

Num exact_mul_d(const Num& a, double y) {
  const Num yy = from_double(y);
  return exact_mul(a, yy.get());
}

// ---- the table R ------------------------------------------------------------------------------------------------

// a = RN_W(p RN_W(10000^-RN_W(2k/d))) at out's precision W: |a - p w_k| < 2^4 u p (header).
void exact_angle(mpfr_ptr out, std::int64_t p, std::size_t k, std::size_t d) {
  const mpfr_prec_t w = mpfr_get_prec(out);
  Num x(w), freq(w);
  mpfr_set_ui(x.get(), static_cast<unsigned long>(2 * k), MPFR_RNDN);  // exact: 2k < 2^15
  mpfr_div_ui(x.get(), x.get(), static_cast<unsigned long>(d), MPFR_RNDN);
  mpfr_neg(x.get(), x.get(), MPFR_RNDN);
  mpfr_ui_pow(freq.get(), 10000UL, x.get(), MPFR_RNDN);
  mpfr_mul_si(out, freq.get(), static_cast<long>(p), MPFR_RNDN);
}

// sin (cos when want_cos) of p w_k correctly rounded to `bits` (header's Ziv loop); p = 0 exactly.
Real exact_entry(std::int64_t p, std::size_t k, bool want_cos, std::size_t d, unsigned bits) {
  Real out = make_real(bits);
  if (p == 0) {
    if (want_cos)
      mpfr_set_ui(raw(out), 1, MPFR_RNDN);
    else
      mpfr_set_zero(raw(out), 1);
    return out;
  }
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits) + kTxlWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("transformer_xl reference: sin/cos did not round within 2^20 bits");
    Num a(w), t(w);
    exact_angle(a.get(), p, k, d);
    if (want_cos)
      mpfr_cos(t.get(), a.get(), MPFR_RNDN);
    else
      mpfr_sin(t.get(), a.get(), MPFR_RNDN);
    if (mpfr_zero_p(t.get())) continue;
    // |t - R| <= 2^(35 - W) + 2^(EXP(t) - W - 1) <= 2^(max(35 - W, EXP(t) - W - 1) + 1).
    const mpfr_exp_t et = mpfr_get_exp(t.get());
    const mpfr_exp_t bound = std::max<mpfr_exp_t>(35 - w, et - w - 1) + 1;
    if (mpfr_can_round(t.get(), et - bound, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), t.get(), MPFR_RNDN);
      return out;
    }
  }
}

// inv_freq[k] = RN32(1 / RN32(10000 ** RN32(RN32(2k) / d))) as a Real of 64 bits.
Real emulated_inv_freq(std::size_t k, std::size_t d) {
  const Real two_k = rn(F32, make_real(static_cast<std::int64_t>(2 * k), kEmu), kEmu);
  const Real x = rn_div(F32, two_k, make_real(static_cast<std::int64_t>(d), kEmu), kEmu);
  const Real p = rn_pow(F32, make_real(10000.0, kEmu), x, kEmu);
  return rn_div(F32, make_real(1.0, kEmu), p, kEmu);
}

// RN32(sin | cos (RN32(RN32(p) inv))).
Real emulated_entry(std::int64_t p, const Real& inv, bool want_cos) {
  const Real pos = rn(F32, make_real(p, kEmu), kEmu);
  const Real a = rn_mul(F32, pos, inv, kEmu);
  return want_cos ? rn_cos(F32, a, kEmu) : rn_sin(F32, a, kEmu);
}

Real table_entry(const TransformerXlSpec& s, std::int64_t p, std::size_t m, unsigned bits) {
  const std::size_t half = s.d_model / 2;
  const std::size_t k = m % half;
  const bool want_cos = m >= half;
  if (s.regime == Regime::exact) return exact_entry(p, k, want_cos, s.d_model, bits);
  return with_bits(emulated_entry(p, emulated_inv_freq(k, s.d_model), want_cos), bits);
}

// ---- scores -----------------------------------------------------------------------------------------------------

// The last step of the score's Ziv loops at W = t's precision: t = RN_W(sigma S_W) (a given scale sigma != 0) or
// RN_W(S_W RN_W(d_head^-1/2)) (sigma = 0: the default), where |S_W - S| <= g_eps + h_S. Returns err with
// |t - e| < 2^(EXP(t) - err) (header: E = sbar (g_eps + h_S [+ |S_W| u]) + h_t evaluated upward, E < 2^EXP(E));
// S_W != 0.
mpfr_exp_t scale_step(mpfr_ptr t, mpfr_srcptr sw, double sigma, std::size_t d_head, mpfr_srcptr g_eps) {
  const mpfr_prec_t w = mpfr_get_prec(t);
  if (sigma != 0.0) {
    mpfr_mul_d(t, sw, sigma, MPFR_RNDN);
  } else {
    Num r(w), dh(64);
    mpfr_set_ui(dh.get(), static_cast<unsigned long>(d_head), MPFR_RNDN);
    mpfr_rec_sqrt(r.get(), dh.get(), MPFR_RNDN);
    mpfr_mul(t, sw, r.get(), MPFR_RNDN);
  }
  Num bound(64), tmp(64);
  mpfr_set(bound.get(), g_eps, MPFR_RNDU);
  mpfr_set_ui_2exp(tmp.get(), 1, mpfr_get_exp(sw) - w - 1, MPFR_RNDU);
  mpfr_add(bound.get(), bound.get(), tmp.get(), MPFR_RNDU);  // + h_S
  if (sigma != 0.0) {
    mpfr_mul_d(bound.get(), bound.get(), std::fabs(sigma), MPFR_RNDU);
  } else {
    mpfr_abs(tmp.get(), sw, MPFR_RNDU);
    mpfr_mul_2si(tmp.get(), tmp.get(), -w, MPFR_RNDU);
    mpfr_add(bound.get(), bound.get(), tmp.get(), MPFR_RNDU);  // + |S_W| u
  }
  mpfr_set_ui_2exp(tmp.get(), 1, mpfr_get_exp(t) - w - 1, MPFR_RNDU);
  mpfr_add(bound.get(), bound.get(), tmp.get(), MPFR_RNDU);  // + h_t
  return mpfr_get_exp(t) - mpfr_get_exp(bound.get());
}

// out = RN(S scale) at out's precision for an exact S: a given scale or d_head = m^2 in one rounding (a Ziv loop
// could not decide a midpoint such as S / 3 at a tie), else (S / sqrt(d_head) irrational) the Ziv loop with g_eps = 0.
void round_exact_score(mpfr_ptr out, const Num& s, std::optional<double> scale, std::size_t d_head) {
  if (scale) {
    mpfr_mul_d(out, s.get(), *scale, MPFR_RNDN);
    return;
  }
  if (const unsigned long m = exact_root(d_head); m != 0) {
    mpfr_div_ui(out, s.get(), m, MPFR_RNDN);
    return;
  }
  if (mpfr_zero_p(s.get())) {
    mpfr_set_zero(out, 1);
    return;
  }
  const mpfr_prec_t bits = mpfr_get_prec(out);
  Num zero(2);
  mpfr_set_zero(zero.get(), 1);
  for (mpfr_prec_t w = bits + kTxlWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("transformer_xl reference: S/sqrt(d_head) did not round within 2^20 bits");
    Num sw(w), t(w);
    mpfr_set(sw.get(), s.get(), MPFR_RNDN);
    const mpfr_exp_t err = scale_step(t.get(), sw.get(), 0.0, d_head, zero.get());
    if (mpfr_can_round(t.get(), err, MPFR_RNDN, MPFR_RNDZ, bits + 1)) {
      mpfr_set(out, t.get(), MPFR_RNDN);
      return;
    }
  }
}

}  // namespace

// ---- free functions ---------------------------------------------------------------------------------------------

Real transformer_xl_table_value(const TransformerXlSpec& spec, std::int64_t position, std::size_t m, unsigned bits) {
  validate(spec);
  check_bits(bits);
  check_position(spec, position);
  check_column(spec, m);
  return table_entry(spec, position, m, bits);
}

std::vector<double> transformer_xl_table_f64(const TransformerXlSpec& spec, std::size_t key_length) {
  validate(spec);
  check_transformer_xl_lengths(1, key_length);
  if (key_length > kTxlMaxTableEntries / spec.d_model)
    throw Error(kTransformerXlWhere, "key_length", std::to_string(key_length),
                "1 .. 2^26 / d_model = " + std::to_string(kTxlMaxTableEntries / spec.d_model) +
                    " (the oracle's table holds at most 2^26 entries)");
  const std::size_t d = spec.d_model, half = d / 2;
  std::vector<Real> inv;
  if (spec.regime == Regime::emulated)
    for (std::size_t k = 0; k < half; ++k) inv.push_back(emulated_inv_freq(k, d));
  std::vector<double> out(key_length * d);
  std::int64_t last = -1;
  for (std::size_t c = 0; c < key_length; ++c) {
    // pos_seq[c] = klen - 1 - c, clamped: the clamped rows at the top repeat one row.
    const std::int64_t p = clamped(spec, static_cast<std::int64_t>(key_length - 1 - c));
    double* row = out.data() + c * d;
    if (p == last) {
      std::copy(row - d, row, row);
      continue;
    }
    for (std::size_t m = 0; m < d; ++m) {
      const std::size_t k = m % half;
      const bool want_cos = m >= half;
      row[m] = spec.regime == Regime::exact ? round_to_double(exact_entry(p, k, want_cos, d, 53))
                                            : round_to_double(emulated_entry(p, inv[k], want_cos));
    }
    last = p;
  }
  return out;
}

// ---- TransformerXlOracle ----------------------------------------------------------------------------------------

TransformerXlOracle::TransformerXlOracle(const TransformerXlSpec& spec, const TransformerXlWeights& weights,
                                         unsigned bits)
    : spec_(spec), bits_(bits) {
  validate(spec_);
  check_transformer_xl_weights(spec_, weights);
  check_bits(bits);
  r_w_bias_ = weights.r_w_bias;
  r_r_bias_ = weights.r_r_bias;
  r_net_ = weights.r_net;
}

bool TransformerXlOracle::defined(std::size_t i, std::size_t j, std::size_t query_length,
                                  std::size_t key_length) const {
  check_transformer_xl_site(i, j, query_length, key_length);
  return static_cast<std::int64_t>(j) <= query_position(i, query_length, key_length);
}

bool TransformerXlOracle::visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j,
                                  std::size_t query_length, std::size_t key_length) const {
  check_transformer_xl_site(i, j, query_length, key_length);
  check_key_mask(kTransformerXlWhere, key_mask, key_length);
  if (hidden_by_code_mask(spec_, i, j, query_length, key_length)) return false;
  return key_mask.empty() || key_mask[j] != 0;
}

Real TransformerXlOracle::score(std::span<const double> q, std::span<const double> k, std::size_t head,
                                std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                                std::optional<double> scale) const {
  check_transformer_xl_site(i, j, query_length, key_length);
  const std::int64_t qi = query_position(i, query_length, key_length);
  if (static_cast<std::int64_t>(j) > qi)
    throw Error(kTransformerXlWhere, "j", std::to_string(j),
                "a key 0 <= j <= q_i = key_length - query_length + i = " + std::to_string(qi),
                "is an undefined entry (j > q_i: the key is after the query; _rel_shift leaves junk there)");
  if (head >= spec_.heads)
    throw Error(kTransformerXlWhere, "head", std::to_string(head), "a head 0 .. heads - 1 = " + std::to_string(spec_.heads - 1));
  const std::size_t dh = spec_.d_head, d = spec_.d_model, half = d / 2;
  check_transformer_xl_vector("q", q, dh);
  check_transformer_xl_vector("k", k, dh);
  if (scale && !std::isfinite(*scale))
    throw Error(kTransformerXlWhere, "scale", format_real(*scale), "a finite number, or none for 1/sqrt(d_head)", "is not finite");

  const std::int64_t p = clamped(spec_, qi - static_cast<std::int64_t>(j));
  const double* u = r_w_bias_.data() + head * dh;
  const double* v = r_r_bias_.data() + head * dh;
  const double* wr = r_net_.data() + head * dh * d;  // W_R[h d_head + e][m] = wr[e d + m]

  // A = <q + u, k> and g_m = sum_e (q_e + v_e) W_R[h d_head + e][m], exactly.
  std::vector<Num> a_terms;
  std::vector<Num> qv;
  a_terms.reserve(dh);
  qv.reserve(dh);
  for (std::size_t e = 0; e < dh; ++e) {
    a_terms.push_back(exact_mul_d(exact_add(q[e], u[e]), k[e]));
    qv.push_back(exact_add(q[e], v[e]));
  }
  const Num acc = exact_sum(a_terms);
  std::vector<Num> g;
  g.reserve(d);
  bool any_g = false;
  for (std::size_t m = 0; m < d; ++m) {
    std::vector<Num> t;
    t.reserve(dh);
    for (std::size_t e = 0; e < dh; ++e) t.push_back(exact_mul_d(qv[e], wr[e * d + m]));
    g.push_back(exact_sum(t));
    any_g = any_g || !mpfr_zero_p(g.back().get());
  }

  Real out = make_real(bits_);
  if (spec_.regime == Regime::emulated || p == 0 || !any_g) {
    // R_m exact binary numbers (float32, or 0 / 1 at p = 0): S exact.
    std::vector<Num> terms;
    terms.reserve(d + 1);
    {
      Num a0(acc.prec());
      mpfr_set(a0.get(), acc.get(), MPFR_RNDN);
      terms.push_back(std::move(a0));
    }
    if (any_g) {
      for (std::size_t kk = 0; kk < half; ++kk) {
        if (mpfr_zero_p(g[kk].get()) && mpfr_zero_p(g[half + kk].get())) continue;
        // p = 0 (either regime): sin 0 = 0, cos 0 = 1 exactly; else the emulated float32 numbers.
        const Real inv = p == 0 ? make_real(kEmu) : emulated_inv_freq(kk, d);
        const Real sn = p == 0 ? make_real(kEmu) : emulated_entry(p, inv, false);
        const Real cs = p == 0 ? make_real(1.0, kEmu) : emulated_entry(p, inv, true);
        terms.push_back(exact_mul(g[kk], raw(sn)));
        terms.push_back(exact_mul(g[half + kk], raw(cs)));
      }
    }
    const Num s = exact_sum(terms);
    round_exact_score(raw(out), s, scale, dh);
    return out;
  }

  // Exact regime, p >= 1, some g_m != 0: S transcendental, Ziv loop (header).
  Num gsum(64);  // G = sum |g_m|, rounded up
  mpfr_set_zero(gsum.get(), 1);
  for (const Num& gm : g) {
    Num ab(gm.prec());
    mpfr_abs(ab.get(), gm.get(), MPFR_RNDN);
    mpfr_add(gsum.get(), gsum.get(), ab.get(), MPFR_RNDU);
  }
  const double sigma = scale ? (*scale == 0.0 ? 1.0 : *scale) : 0.0;  // 0.0: the default 1/sqrt(d_head)
  const mpfr_prec_t bits = static_cast<mpfr_prec_t>(bits_);
  for (mpfr_prec_t w = bits + kTxlWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("transformer_xl reference: a score did not round within 2^20 bits");
    std::vector<Num> terms;
    terms.reserve(d + 1);
    {
      Num a0(acc.prec());
      mpfr_set(a0.get(), acc.get(), MPFR_RNDN);
      terms.push_back(std::move(a0));
    }
    for (std::size_t kk = 0; kk < half; ++kk) {
      if (mpfr_zero_p(g[kk].get()) && mpfr_zero_p(g[half + kk].get())) continue;
      Num ang(w), sn(w), cs(w);
      exact_angle(ang.get(), p, kk, d);
      mpfr_sin_cos(sn.get(), cs.get(), ang.get(), MPFR_RNDN);
      terms.push_back(exact_mul(g[kk], sn.get()));
      terms.push_back(exact_mul(g[half + kk], cs.get()));
    }
    std::vector<mpfr_ptr> ptrs;
    ptrs.reserve(terms.size());
    for (Num& t : terms) ptrs.push_back(t.get());
    Num sw(w), t(w), g_eps(64);
    mpfr_sum(sw.get(), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
    if (mpfr_zero_p(sw.get())) continue;
    mpfr_mul_2si(g_eps.get(), gsum.get(), 36 - w, MPFR_RNDU);  // G eps, eps = 2^(36 - W)
    const mpfr_exp_t err = scale_step(t.get(), sw.get(), sigma, dh, g_eps.get());
    if (mpfr_can_round(t.get(), err, MPFR_RNDN, MPFR_RNDZ, bits + 1)) {
      mpfr_set(raw(out), t.get(), MPFR_RNDN);
      if (scale && *scale == 0.0) mpfr_mul_d(raw(out), raw(out), *scale, MPFR_RNDN);  // the signed zero 0 * S
      return out;
    }
  }
}

}  // namespace posenc::reference
