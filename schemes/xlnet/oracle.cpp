#include "posenc/reference/xlnet.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "mpfr_util.hpp"
#include "score_checks.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::kZivLimit;

constexpr const char* kXlnetWhere = "xlnet oracle";

using detail::raw;

using Num = detail::Mp;  // an mpfr_t of a working precision (mpfr_util.hpp)
using detail::exact_root;
using detail::exact_sum;
using detail::pointers;
using detail::push_product;

// ---- validation ----------------------------------------------------------------------------------------------

void check_position(std::int64_t p) {
  if (p < -kXlnetMaxLength || p > kXlnetMaxLength)
    throw Error(kXlnetWhere, "position", std::to_string(p),
                "a pos_seq value -(2^30 - 1) .. 2^30 - 1 (|p| <= max(key_length, query_length - 1))");
}

void check_column(const XlnetSpec& s, std::size_t m) {
  if (m >= s.d_model)
    throw Error(kXlnetWhere, "m", std::to_string(m), "a column 0 .. d_model - 1 = " + std::to_string(s.d_model - 1));
}

void check_xlnet_site(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_xlnet_lengths(query_length, key_length);
  if (i >= query_length)
    throw Error(kXlnetWhere, "i", std::to_string(i), "a query row 0 <= i < query_length = " + std::to_string(query_length));
  if (j >= key_length)
    throw Error(kXlnetWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_xlnet_vector(const char* name, std::span<const double> v, std::size_t want) {
  if (v.size() != want)
    throw Error(kXlnetWhere, name, "a vector of " + std::to_string(v.size()) + " values",
                "exactly d_head = " + std::to_string(want) + " finite values", "has the wrong length");
  for (std::size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]))
      throw Error(kXlnetWhere, name, format_real(v[c]) + " at entry " + std::to_string(c), "finite numbers",
                  "is not finite");
}

void check_xlnet_scale(std::optional<double> scale) {
  if (scale && !std::isfinite(*scale))
    throw Error(kXlnetWhere, "scale", format_real(*scale), "a finite number, or none for 1/sqrt(d_head)", "is not finite");
}

// ---- the definition, transcribed -----------------------------------------------------------------------------

std::int64_t memory_of(std::size_t query_length, std::size_t key_length) {
  return static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(query_length);
}

// q_i = M + i.
// arange(klen, -qlen, -1) (bi) or arange(klen, -1, -1) (uni): rows and the value of row c.
std::size_t rows_of(const XlnetSpec& s, std::size_t query_length, std::size_t key_length) {
  return s.attn_type == XlnetAttnType::bi ? key_length + query_length : key_length + 1;
}

std::int64_t pos_seq_of(const XlnetSpec& s, std::size_t c, std::size_t key_length) {
  std::int64_t p = static_cast<std::int64_t>(key_length) - static_cast<std::int64_t>(c);
  if (s.direction == XlnetDirection::backward) p = -p;  // bwd_pos_seq = arange(-beg, -end, 1)
  if (s.clamp_len > 0) p = std::clamp(p, -s.clamp_len, s.clamp_len);
  return p;
}

// rel_shift_bnij leaves (i, j) at column Lq - i + j of the unshifted [Lq][rlen] matrix.
std::size_t row_of(std::size_t i, std::size_t j, std::size_t query_length) { return query_length - i + j; }

bool defined_of(const XlnetSpec& s, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  return s.attn_type == XlnetAttnType::bi ||
         static_cast<std::int64_t>(j) <= query_position(i, query_length, key_length);
}

// create_mask: cat(zeros[Lq][M], triu(ones[Lq][Lq], 1)) hides j > q_i; same_length adds tril(ones[Lq][Lq], -1) to
// the first Lq columns, hiding j < Lq with j < i.
bool hidden_of(const XlnetSpec& s, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  if (s.attn_type == XlnetAttnType::bi) return false;
  if (!defined_of(s, i, j, query_length, key_length)) return true;
  return s.same_length && j < query_length && j < i;
}

// ---- the table -----------------------------------------------------------------------------------------------

// k of column m and whether it is a sin column ([sin | cos] halves).
std::pair<std::size_t, bool> pair_of(const XlnetSpec& s, std::size_t m) {
  const std::size_t h = s.d_model / 2;
  return m < h ? std::pair{m, true} : std::pair{m - h, false};
}

// |p| < 2^b.
int bit_width_of(std::int64_t p) {
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(p < 0 ? -p : p)));
}

// out (its own precision W) = R~: within eps_W(p) = 2^(b + 5 - W) of R[p][m] (header), p != 0.
void approx_entry(mpfr_ptr out, const XlnetSpec& s, std::int64_t p, std::size_t m) {
  const mpfr_prec_t w = mpfr_get_prec(out);
  const auto [k, is_sin] = pair_of(s, m);
  Num x(w), freq(w), angle(w);
  mpfr_set_ui(x.get(), static_cast<unsigned long>(2 * k), MPFR_RNDN);                  // exact
  mpfr_div_ui(x.get(), x.get(), static_cast<unsigned long>(s.d_model), MPFR_RNDN);    // 2k/d
  mpfr_neg(x.get(), x.get(), MPFR_RNDN);
  mpfr_ui_pow(freq.get(), 10000UL, x.get(), MPFR_RNDN);                               // 10000^(-2k/d)
  mpfr_mul_si(angle.get(), freq.get(), static_cast<long>(p), MPFR_RNDN);              // p w_k
  if (is_sin)
    mpfr_sin(out, angle.get(), MPFR_RNDN);
  else
    mpfr_cos(out, angle.get(), MPFR_RNDN);
}

// R at p = 0: sin 0 = 0, cos 0 = 1, exactly.
void zero_row_entry(mpfr_ptr out, const XlnetSpec& s, std::size_t m) {
  if (pair_of(s, m).second)
    mpfr_set_zero(out, 1);
  else
    mpfr_set_ui(out, 1, MPFR_RNDN);
}

Real exact_value(const XlnetSpec& s, std::int64_t p, std::size_t m, unsigned bits) {
  Real out = make_real(bits);
  if (p == 0) {
    zero_row_entry(raw(out), s, m);
    return out;
  }
  const int b = bit_width_of(p);
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits) + kXlnetWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("xlnet oracle: a table entry did not round within 2^20 bits");
    Num t(w);
    approx_entry(t.get(), s, p, m);
    if (mpfr_zero_p(t.get())) continue;
    // |t - R| <= 2^(b + 5 - w) = 2^(EXP(t) - err)
    const mpfr_exp_t err = mpfr_get_exp(t.get()) + w - b - 5;
    if (err > static_cast<mpfr_exp_t>(bits) + 1 &&
        mpfr_can_round(t.get(), err, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), t.get(), MPFR_RNDN);
      return out;
    }
  }
}

// relative_positional_encoding's float32 steps, each correctly rounded (header).
Real emulated_value(const XlnetSpec& s, std::int64_t p, std::size_t m, unsigned bits) {
  constexpr Binary F = Binary::f32;
  constexpr unsigned b = 64;
  const auto [k, is_sin] = pair_of(s, m);
  const Real freq_seq = rn(F, make_real(static_cast<std::int64_t>(2 * k), b), b);          // arange(0, d, 2.0)
  const Real x = rn_div(F, freq_seq, make_real(static_cast<std::int64_t>(s.d_model), b), b);  // freq_seq / d_model
  const Real pw = rn_pow(F, make_real(10000.0, b), x, b);                                    // torch.pow(10000, x)
  const Real inv = rn_div(F, make_real(1.0, b), pw, b);                                      // 1 / pw
  const Real pos = rn(F, make_real(p, b), b);                                                // float32 pos_seq
  const Real a = rn_mul(F, pos, inv, b);                                                     // einsum('i,d->id')
  return with_bits(is_sin ? rn_sin(F, a, b) : rn_cos(F, a, b), bits);
}

Real table_value(const XlnetSpec& s, std::int64_t p, std::size_t m, unsigned bits) {
  return s.regime == Regime::exact ? exact_value(s, p, m, bits) : emulated_value(s, p, m, bits);
}

// ---- exact arithmetic ----------------------------------------------------------------------------------------

// ---- the score -----------------------------------------------------------------------------------------------

// T dyadic: RN_bits(scale T) (header).
Real scale_exact(const Num& t, std::optional<double> scale, std::size_t d_head, unsigned bits) {
  Real out = make_real(bits);
  if (scale) {
    mpfr_mul_d(raw(out), t.get(), *scale, MPFR_RNDN);
    return out;
  }
  if (const unsigned long n = exact_root(d_head); n != 0) {
    mpfr_div_ui(raw(out), t.get(), n, MPFR_RNDN);
    return out;
  }
  if (mpfr_zero_p(t.get())) {
    mpfr_set_zero(raw(out), 1);
    return out;
  }
  detail::divide_by_root(raw(out), t.get(), d_head, kXlnetWorkingMargin, "xlnet oracle");  // irrational sqrt(d_head)
  return out;
}

// 2^e as an upper-bound term, added upward into acc.
void add_pow2_up(mpfr_ptr acc, mpfr_exp_t e) {
  Num t(8);
  mpfr_set_ui_2exp(t.get(), 1, e, MPFR_RNDN);
  mpfr_add(acc, acc, t.get(), MPFR_RNDU);
}

// ---- the score, in steps ---------------------------------------------------------------------------------------

// The checks of score and score_magnitude, in their order.
void check_score_args(const XlnetSpec& s, std::span<const double> q, std::span<const double> k, std::size_t head,
                      std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                      std::span<const std::int64_t> token_types, std::optional<double> scale) {
  check_xlnet_site(i, j, query_length, key_length);
  if (head >= s.heads)
    throw Error(kXlnetWhere, "head", std::to_string(head), "a head 0 .. heads - 1 = " + std::to_string(s.heads - 1));
  if (!defined_of(s, i, j, query_length, key_length))
    throw Error(kXlnetWhere, "j", std::to_string(j),
                "a key j <= q_i = " + std::to_string(query_position(i, query_length, key_length)) +
                    " (uni: rel_shift_bnij leaves junk past the query; the entry is masked, its score -inf)",
                "is not a defined entry");
  check_xlnet_vector("q", q, s.d_head);
  check_xlnet_vector("k", k, s.d_head);
  check_xlnet_token_types(token_types, query_length);
  check_xlnet_scale(scale);
}

// seg_embed's row of the entry's head for (same, different) segment of query i and key j (one_hot index 1 = not the
// same segment; memory keys are type 0, mem_pad), or nullptr without token types.
const double* segment_row(const XlnetSpec& s, const XlnetWeights& w, std::size_t head, std::size_t i, std::size_t j,
                          std::size_t query_length, std::size_t key_length, std::span<const std::int64_t> token_types) {
  if (token_types.empty()) return nullptr;
  const std::int64_t mem = memory_of(query_length, key_length);
  const auto jj = static_cast<std::int64_t>(j);
  const std::int64_t type_j = jj < mem ? 0 : token_types[static_cast<std::size_t>(jj - mem)];
  const std::size_t diff = token_types[i] != type_j ? 1 : 0;
  return w.seg_embed.data() + diff * s.heads * s.d_head + head * s.d_head;
}

// One entry's inputs: its head's u = r_w_bias, v = r_r_bias, s = r_s_bias, the segment row g (or nullptr) and the
// pos_seq value p of its table row.
struct XlnetTerms {
  const XlnetSpec& spec;
  const XlnetWeights& w;
  std::span<const double> q, k;
  std::size_t head;
  const double* g;
  std::int64_t p;
  const double* u() const { return w.r_w_bias.data() + head * spec.d_head; }
  const double* v() const { return w.r_r_bias.data() + head * spec.d_head; }
  const double* sb() const { return w.r_s_bias.data() + head * spec.d_head; }
};

// The dyadic terms (q + u).k and (q + s).g as exact products, and C_m = (q + v).r[m] for every table column m,
// exactly; all_zero: every C_m is 0.
struct XlnetExpansion {
  std::vector<Num> dyadic, cm;
  bool all_zero = true;
};

XlnetExpansion expand(const XlnetTerms& st) {
  const std::size_t dh = st.spec.d_head, dm = st.spec.d_model, hd = st.spec.heads * dh;
  const double *u = st.u(), *v = st.v(), *sb = st.sb();
  XlnetExpansion x;
  x.dyadic.reserve(4 * dh);
  for (std::size_t e = 0; e < dh; ++e) {
    push_product(x.dyadic, st.q[e], st.k[e]);
    push_product(x.dyadic, u[e], st.k[e]);
    if (st.g != nullptr) {
      push_product(x.dyadic, st.q[e], st.g[e]);
      push_product(x.dyadic, sb[e], st.g[e]);
    }
  }
  x.cm.reserve(dm);
  for (std::size_t m = 0; m < dm; ++m) {
    std::vector<Num> terms;
    terms.reserve(2 * dh);
    const double* rm = st.w.r.data() + m * hd + st.head * dh;
    for (std::size_t e = 0; e < dh; ++e) {
      push_product(terms, st.q[e], rm[e]);
      push_product(terms, v[e], rm[e]);
    }
    x.cm.push_back(exact_sum(terms));
    x.all_zero = x.all_zero && mpfr_zero_p(x.cm.back().get());
  }
  return x;
}

// T dyadic: R_m exact (binary32 numbers, or 0 / 1 at p = 0), every term exact.
Real dyadic_score(const XlnetTerms& st, XlnetExpansion x, std::optional<double> scale, unsigned bits) {
  std::vector<Num> terms = std::move(x.dyadic);
  if (!x.all_zero) {
    for (std::size_t m = 0; m < st.spec.d_model; ++m) {
      if (mpfr_zero_p(x.cm[m].get())) continue;
      Num rv(64);
      if (st.p == 0) {
        zero_row_entry(rv.get(), st.spec, m);
      } else {
        const Real r32 = emulated_value(st.spec, st.p, m, 64);  // mpfr_set is a macro: no temporaries in it
        mpfr_set(rv.get(), raw(r32), MPFR_RNDN);                // a binary32 number: exact
      }
      push_product(terms, x.cm[m].get(), rv.get());
    }
  }
  const Num t = exact_sum(terms);
  return scale_exact(t, scale, st.spec.d_head, bits);
}

// T~ at working precision w: the dyadic terms and R~_m C_m (exact products), summed with one rounding.
void approximate_sum(mpfr_ptr t, const XlnetTerms& st, XlnetExpansion& x, mpfr_prec_t w) {
  std::vector<Num> rt;
  rt.reserve(st.spec.d_model);
  for (std::size_t m = 0; m < st.spec.d_model; ++m) {
    if (mpfr_zero_p(x.cm[m].get())) continue;
    Num rv(w);
    approx_entry(rv.get(), st.spec, st.p, m);
    push_product(rt, x.cm[m].get(), rv.get());
  }
  std::vector<mpfr_ptr> ptrs = pointers(x.dyadic);
  for (Num& r : rt) ptrs.push_back(r.get());
  mpfr_sum(t, ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
}

// e~ = scale T~ (given scale, exact root, or RN_W(1/sqrt d_head)) and its error bound err from E_T (upward).
void scale_approx(mpfr_ptr e, mpfr_ptr err, mpfr_srcptr t, mpfr_srcptr et, std::optional<double> scale,
                  std::size_t dh, mpfr_prec_t w) {
  const unsigned long root = scale ? 0 : exact_root(dh);
  if (scale) {
    mpfr_mul_d(e, t, *scale, MPFR_RNDN);
    mpfr_mul_d(err, et, std::fabs(*scale), MPFR_RNDU);
  } else if (root != 0) {
    mpfr_div_ui(e, t, root, MPFR_RNDN);
    mpfr_div_ui(err, et, root, MPFR_RNDU);
  } else {
    Num d(64), r(w);
    mpfr_set_ui(d.get(), static_cast<unsigned long>(dh), MPFR_RNDN);
    mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDN);
    mpfr_mul(e, t, r.get(), MPFR_RNDN);
    Num tail(64);  // 2^-W |T~|
    mpfr_abs(tail.get(), t, MPFR_RNDU);
    mpfr_mul_2si(tail.get(), tail.get(), -static_cast<long>(w), MPFR_RNDU);
    mpfr_add(err, et, tail.get(), MPFR_RNDU);
  }
}

// Exact regime, p != 0, some C_m != 0: T transcendental, Ziv loop (header).
Real transcendental_score(const XlnetTerms& st, XlnetExpansion& x, std::optional<double> scale, unsigned bits) {
  const int b = bit_width_of(st.p);
  Num sum_c(64);  // sum_m |C_m|, rounded up
  mpfr_set_zero(sum_c.get(), 1);
  for (const Num& c : x.cm) {
    Num a(64);
    mpfr_abs(a.get(), c.get(), MPFR_RNDU);
    mpfr_add(sum_c.get(), sum_c.get(), a.get(), MPFR_RNDU);
  }
  Real out = make_real(bits);
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits) + kXlnetWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("xlnet oracle: a score did not round within 2^20 bits");
    Num t(w);
    approximate_sum(t.get(), st, x, w);
    // E_T = 2^(b + 5 - W) sum |C_m| + ulp_W(T~)/2, upward.
    Num et(64);
    mpfr_mul_2si(et.get(), sum_c.get(), static_cast<long>(b + 5 - w), MPFR_RNDU);
    if (!mpfr_zero_p(t.get())) add_pow2_up(et.get(), mpfr_get_exp(t.get()) - w - 1);
    if (scale && *scale == 0.0) {
      // e = T * (+-0): a zero whose sign is that of T scale, once |T~| > E_T decides the sign of T.
      if (mpfr_cmpabs(t.get(), et.get()) > 0) {
        mpfr_mul_d(raw(out), t.get(), *scale, MPFR_RNDN);
        return out;
      }
      continue;
    }
    Num e(w), err(64);
    scale_approx(e.get(), err.get(), t.get(), et.get(), scale, st.spec.d_head, w);
    if (mpfr_zero_p(e.get())) continue;
    add_pow2_up(err.get(), mpfr_get_exp(e.get()) - w - 1);
    // err < 2^EXP(err) = 2^(EXP(e~) - bound)
    const mpfr_exp_t bound = mpfr_get_exp(e.get()) - mpfr_get_exp(err.get());
    if (bound > static_cast<mpfr_exp_t>(bits) + 1 &&
        mpfr_can_round(e.get(), bound, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits) + 1)) {
      mpfr_set(raw(out), e.get(), MPFR_RNDN);
      return out;
    }
  }
}

}  // namespace

// ---- free functions --------------------------------------------------------------------------------------------

Real xlnet_table_value(const XlnetSpec& spec, std::int64_t position, std::size_t m, unsigned bits) {
  validate(spec);
  check_bits(bits);
  check_position(position);
  check_column(spec, m);
  return table_value(spec, position, m, bits);
}

std::int64_t xlnet_pos_seq(const XlnetSpec& spec, std::size_t c, std::size_t query_length, std::size_t key_length) {
  validate(spec);
  check_xlnet_lengths(query_length, key_length);
  const std::size_t rows = rows_of(spec, query_length, key_length);
  if (c >= rows) throw Error(kXlnetWhere, "c", std::to_string(c), "a table row 0 .. rows - 1 = " + std::to_string(rows - 1));
  return pos_seq_of(spec, c, key_length);
}

std::vector<double> xlnet_table_f64(const XlnetSpec& spec, std::size_t query_length, std::size_t key_length) {
  validate(spec);
  check_xlnet_lengths(query_length, key_length);
  const std::size_t rows = rows_of(spec, query_length, key_length);
  std::vector<double> t(rows * spec.d_model);
  for (std::size_t c = 0; c < rows; ++c) {
    const std::int64_t p = pos_seq_of(spec, c, key_length);
    for (std::size_t m = 0; m < spec.d_model; ++m)
      t[c * spec.d_model + m] = round_to_double(table_value(spec, p, m, 53));  // |R| > 2^-1022: exact
  }
  return t;
}

// ---- XlnetOracle -----------------------------------------------------------------------------------------------

XlnetOracle::XlnetOracle(const XlnetSpec& spec, const XlnetWeights& weights, unsigned bits)
    : spec_(spec), weights_(weights), bits_(bits) {
  validate(spec_);
  check_xlnet_weights(spec_, weights_);
  check_bits(bits_);
}

bool XlnetOracle::defined(std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) const {
  check_xlnet_site(i, j, query_length, key_length);
  return defined_of(spec_, i, j, query_length, key_length);
}

bool XlnetOracle::visible(std::span<const std::uint8_t> key_mask, std::size_t i, std::size_t j,
                          std::size_t query_length, std::size_t key_length) const {
  check_xlnet_site(i, j, query_length, key_length);
  check_key_mask(kXlnetWhere, key_mask, key_length);
  if (hidden_of(spec_, i, j, query_length, key_length)) return false;
  return key_mask.empty() || key_mask[j] != 0;
}

Real XlnetOracle::score(std::span<const double> q, std::span<const double> k, std::size_t head, std::size_t i,
                        std::size_t j, std::size_t query_length, std::size_t key_length,
                        std::span<const std::int64_t> token_types, std::optional<double> scale) const {
  check_score_args(spec_, q, k, head, i, j, query_length, key_length, token_types, scale);
  const XlnetTerms st{spec_,
                      weights_,
                      q,
                      k,
                      head,
                      segment_row(spec_, weights_, head, i, j, query_length, key_length, token_types),
                      pos_seq_of(spec_, row_of(i, j, query_length), key_length)};
  XlnetExpansion x = expand(st);
  if (spec_.regime == Regime::emulated || st.p == 0 || x.all_zero) return dyadic_score(st, std::move(x), scale, bits_);
  return transcendental_score(st, x, scale, bits_);
}

double XlnetOracle::score_magnitude(std::span<const double> q, std::span<const double> k, std::size_t head,
                                    std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length,
                                    std::span<const std::int64_t> token_types, std::optional<double> scale) const {
  const std::size_t dh = spec_.d_head, dm = spec_.d_model, hd = spec_.heads * dh;
  check_score_args(spec_, q, k, head, i, j, query_length, key_length, token_types, scale);  // score's checks
  const std::int64_t p = pos_seq_of(spec_, row_of(i, j, query_length), key_length);
  const double* u = weights_.r_w_bias.data() + head * dh;
  const double* v = weights_.r_r_bias.data() + head * dh;
  const double* sb = weights_.r_s_bias.data() + head * dh;
  const double* g = segment_row(spec_, weights_, head, i, j, query_length, key_length, token_types);

  constexpr mpfr_prec_t P = 128;
  // |x + y| rounded up.
  auto abs_sum_up = [](mpfr_ptr out, double x, double y) {
    Num a(P);
    mpfr_set_d(a.get(), x, MPFR_RNDN);  // exact
    mpfr_add_d(out, a.get(), y, MPFR_RNDU);
    if (mpfr_sgn(out) < 0) {
      mpfr_set_d(a.get(), x, MPFR_RNDN);
      mpfr_add_d(out, a.get(), y, MPFR_RNDD);
      mpfr_neg(out, out, MPFR_RNDN);
    }
  };
  // |R_m| rounded up: exact values, or |R~_m| + eps_W(p) at W = P.
  std::vector<Num> rabs;
  rabs.reserve(dm);
  for (std::size_t m = 0; m < dm; ++m) {
    Num rv(P);
    if (p == 0) {
      zero_row_entry(rv.get(), spec_, m);
    } else if (spec_.regime == Regime::emulated) {
      const Real r32 = emulated_value(spec_, p, m, 64);
      mpfr_set(rv.get(), raw(r32), MPFR_RNDN);  // exact
    } else {
      approx_entry(rv.get(), spec_, p, m);
      mpfr_abs(rv.get(), rv.get(), MPFR_RNDN);
      add_pow2_up(rv.get(), bit_width_of(p) + 5 - P);
    }
    mpfr_abs(rv.get(), rv.get(), MPFR_RNDN);
    rabs.push_back(std::move(rv));
  }
  Num acc(P), x(P), y(P);
  mpfr_set_zero(acc.get(), 1);
  for (std::size_t e = 0; e < dh; ++e) {
    abs_sum_up(x.get(), q[e], u[e]);
    mpfr_mul_d(y.get(), x.get(), std::fabs(k[e]), MPFR_RNDU);
    mpfr_add(acc.get(), acc.get(), y.get(), MPFR_RNDU);
    if (g != nullptr) {
      abs_sum_up(x.get(), q[e], sb[e]);
      mpfr_mul_d(y.get(), x.get(), std::fabs(g[e]), MPFR_RNDU);
      mpfr_add(acc.get(), acc.get(), y.get(), MPFR_RNDU);
    }
    abs_sum_up(x.get(), q[e], v[e]);
    for (std::size_t m = 0; m < dm; ++m) {
      const double r = std::fabs(weights_.r[m * hd + head * dh + e]);
      if (r == 0.0) continue;
      mpfr_mul(y.get(), x.get(), rabs[m].get(), MPFR_RNDU);
      mpfr_mul_d(y.get(), y.get(), r, MPFR_RNDU);
      mpfr_add(acc.get(), acc.get(), y.get(), MPFR_RNDU);
    }
  }
  Num sc(P);
  if (scale) {
    mpfr_set_d(sc.get(), std::fabs(*scale), MPFR_RNDN);  // exact
  } else {
    Num d(64);
    mpfr_set_ui(d.get(), static_cast<unsigned long>(dh), MPFR_RNDN);
    mpfr_rec_sqrt(sc.get(), d.get(), MPFR_RNDU);
  }
  mpfr_mul(acc.get(), acc.get(), sc.get(), MPFR_RNDU);
  return mpfr_get_d(acc.get(), MPFR_RNDU);
}

}  // namespace posenc::reference
