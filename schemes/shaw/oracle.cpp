#include "posenc/reference/shaw.hpp"

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

constexpr const char* kShawWhere = "shaw reference";
constexpr mpfr_prec_t kDeltaExtra = 32;  // Delta_j is rounded at W + 32 bits (header)
constexpr double kDropBelow = -0x1p29;   // keys with Delta_j below this are dropped (header)

using detail::raw;

using Num = detail::Mp;  // an mpfr_t of a working precision (mpfr_util.hpp)
using detail::exact_root;
using detail::exact_sum;
using detail::push_product;

// ---- validation ----------------------------------------------------------------------------------------------

void check_row(std::size_t i, std::size_t query_length) {
  if (i >= query_length)
    throw Error(kShawWhere, "i", std::to_string(i),
                "a query row 0 <= i < query_length = " + std::to_string(query_length));
}

void check_key(std::size_t j, std::size_t key_length) {
  if (j >= key_length)
    throw Error(kShawWhere, "j", std::to_string(j), "a key 0 <= j < key_length = " + std::to_string(key_length));
}

void check_shaw_site(const ShawSpec& s, std::size_t i, std::size_t j, std::size_t query_length, std::size_t key_length) {
  check_shaw_lengths(s, query_length, key_length);
  check_row(i, query_length);
  check_key(j, key_length);
}

// `name` holds exactly `want` finite doubles (`shape` says what they are).
void check_values(const char* name, std::span<const double> v, std::size_t want, const std::string& shape) {
  if (v.size() != want)
    throw Error(kShawWhere, name, "a vector of " + std::to_string(v.size()) + " values",
                "exactly " + shape + " = " + std::to_string(want) + " finite values", "has the wrong length");
  for (std::size_t c = 0; c < v.size(); ++c)
    if (!std::isfinite(v[c]))
      throw Error(kShawWhere, name, format_real(v[c]) + " at entry " + std::to_string(c), "finite numbers",
                  "is not finite");
}

void check_shaw_scale(std::optional<double> scale) {
  if (scale && !std::isfinite(*scale))
    throw Error(kShawWhere, "scale", format_real(*scale), "a finite number, or none for 1/sqrt(head_dim)",
                "is not finite");
}

void check_mask(const ShawMask& mask, std::size_t key_length) {
  if (!mask.key_mask.empty() && mask.key_mask.size() != key_length)
    throw Error(kShawWhere, "key_mask", "a mask of " + std::to_string(mask.key_mask.size()) + " entries",
                "empty (every key real) or key_length = " + std::to_string(key_length) + " entries");
  for (std::size_t j = 0; j < mask.key_mask.size(); ++j)
    if (mask.key_mask[j] > 1)
      throw Error(kShawWhere, "key_mask", std::to_string(mask.key_mask[j]) + " at key " + std::to_string(j),
                  "0 (padding) or 1 (a real key)");
}

// ---- the definition, transcribed ---------------------------------------------------------------------------

// q_i = Lk - Lq + i: the queries are the last Lq keys (lengths < 2^31: no overflow).
// d(i, j) = j - q_i (key_minus_query) or q_i - j (query_minus_key).
std::int64_t distance_of(const ShawSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length) {
  const std::int64_t qi = query_position(i, query_length, key_length);
  const auto jj = static_cast<std::int64_t>(j);
  return s.sign == RelativeSign::key_minus_query ? jj - qi : qi - jj;
}

// idx(i, j) = clip(d, -k, k) + k.
std::int64_t index_of(const ShawSpec& s, std::size_t i, std::size_t j, std::size_t query_length,
                      std::size_t key_length) {
  const auto k = static_cast<std::int64_t>(s.max_relative_position);
  std::int64_t d = distance_of(s, i, j, query_length, key_length);
  if (s.clip) {
    d = std::clamp(d, -k, k);
  } else if (d < -k || d > k) {
    throw std::logic_error("shaw reference: |d| > k with clip = false (check_shaw_lengths should have refused)");
  }
  return d + k;
}

bool visible_of(const ShawMask& mask, std::size_t i, std::size_t j, std::size_t query_length,
                std::size_t key_length) {
  if (mask.causal && static_cast<std::int64_t>(j) > query_position(i, query_length, key_length)) return false;
  return mask.key_mask.empty() || mask.key_mask[j] != 0;
}

// ---- exact arithmetic ----------------------------------------------------------------------------------------

// a - b exactly.
Num exact_difference(const Num& a, const Num& b) {
  std::vector<Num> terms;
  Num x(mpfr_get_prec(a.get())), y(mpfr_get_prec(b.get()));
  mpfr_set(x.get(), a.get(), MPFR_RNDN);  // exact
  mpfr_neg(y.get(), b.get(), MPFR_RNDN);  // exact
  terms.push_back(std::move(x));
  terms.push_back(std::move(y));
  return exact_sum(terms);
}

// out (its own precision p) = scale * x: a given scale or a perfect-square head_dim with one rounding; else
// RN_p(x RN_p(1/sqrt(head_dim))), relative error <= 2^(1 - p) + 2^-2p.
void scale_into(mpfr_ptr out, mpfr_srcptr x, std::optional<double> scale, std::size_t head_dim) {
  if (scale) {
    mpfr_mul_d(out, x, *scale, MPFR_RNDN);
    return;
  }
  if (const unsigned long m = exact_root(head_dim); m != 0) {
    mpfr_div_ui(out, x, m, MPFR_RNDN);
    return;
  }
  Num r(mpfr_get_prec(out)), d(64);
  mpfr_set_ui(d.get(), static_cast<unsigned long>(head_dim), MPFR_RNDN);
  mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDN);
  mpfr_mul(out, x, r.get(), MPFR_RNDN);
}

}  // namespace

// ---- free functions --------------------------------------------------------------------------------------------

std::int64_t shaw_distance(const ShawSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                           std::size_t key_length) {
  validate(spec);
  check_shaw_site(spec, i, j, query_length, key_length);
  return distance_of(spec, i, j, query_length, key_length);
}

std::int64_t shaw_index(const ShawSpec& spec, std::size_t i, std::size_t j, std::size_t query_length,
                        std::size_t key_length) {
  validate(spec);
  check_shaw_site(spec, i, j, query_length, key_length);
  return index_of(spec, i, j, query_length, key_length);
}

// ---- ShawOracle ------------------------------------------------------------------------------------------------

ShawOracle::ShawOracle(const ShawSpec& spec, const ShawWeights& weights, unsigned bits) : spec_(spec), bits_(bits) {
  validate(spec_);
  check_shaw_weights(spec_, weights);
  check_bits(bits);
  keys_ = weights.keys;
  values_ = weights.values;
}

std::span<const double> ShawOracle::key_row(std::int64_t idx) const {
  return std::span<const double>(keys_).subspan(static_cast<std::size_t>(idx) * spec_.head_dim, spec_.head_dim);
}

std::span<const double> ShawOracle::value_row(std::int64_t idx) const {
  return std::span<const double>(values_).subspan(static_cast<std::size_t>(idx) * spec_.head_dim, spec_.head_dim);
}

bool ShawOracle::visible(const ShawMask& mask, std::size_t i, std::size_t j, std::size_t query_length,
                         std::size_t key_length) const {
  check_shaw_site(spec_, i, j, query_length, key_length);
  check_mask(mask, key_length);
  return visible_of(mask, i, j, query_length, key_length);
}

namespace {

// B = <q, k> + <q, a> + [key_query] <k, a>, exactly.
Num exact_bracket(bool key_query, std::span<const double> q, std::span<const double> k, std::span<const double> a) {
  std::vector<Num> terms;
  terms.reserve(3 * q.size());
  for (std::size_t c = 0; c < q.size(); ++c) {
    push_product(terms, q[c], k[c]);
    push_product(terms, q[c], a[c]);
    if (key_query) push_product(terms, k[c], a[c]);
  }
  return exact_sum(terms);
}

}  // namespace

Real ShawOracle::score(std::span<const double> q, std::span<const double> k, std::size_t i, std::size_t j,
                       std::size_t query_length, std::size_t key_length, std::optional<double> scale) const {
  check_shaw_site(spec_, i, j, query_length, key_length);
  check_values("q", q, spec_.head_dim, "head_dim");
  check_values("k", k, spec_.head_dim, "head_dim");
  check_shaw_scale(scale);
  const std::int64_t idx = index_of(spec_, i, j, query_length, key_length);
  const Num b = exact_bracket(spec_.key_query, q, k, key_row(idx));

  Real out = make_real(bits_);
  if (scale || exact_root(spec_.head_dim) != 0) {
    scale_into(raw(out), b.get(), scale, spec_.head_dim);  // one rounding
    return out;
  }
  if (mpfr_zero_p(b.get())) {
    mpfr_set_zero(raw(out), 1);
    return out;
  }
  // B / sqrt(head_dim), irrational: Ziv loop (header).
  Num d(64);
  mpfr_set_ui(d.get(), static_cast<unsigned long>(spec_.head_dim), MPFR_RNDN);
  for (mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kShawWorkingMargin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error("shaw reference: B/sqrt(head_dim) did not round within 2^20 bits");
    Num r(w), t(w);
    mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDN);
    mpfr_mul(t.get(), b.get(), r.get(), MPFR_RNDN);
    if (mpfr_can_round(t.get(), w - 2, MPFR_RNDN, MPFR_RNDZ, static_cast<mpfr_prec_t>(bits_) + 1)) {
      mpfr_set(raw(out), t.get(), MPFR_RNDN);
      return out;
    }
  }
}

std::vector<Real> ShawOracle::output(std::span<const double> Q, std::span<const double> K,
                                     std::span<const double> V, std::size_t i, std::size_t query_length,
                                     std::size_t key_length, const ShawMask& mask,
                                     std::optional<double> scale) const {
  const std::size_t hd = spec_.head_dim;
  check_shaw_lengths(spec_, query_length, key_length);
  check_row(i, query_length);
  check_values("Q", Q, query_length * hd, "query_length * head_dim");
  check_values("K", K, key_length * hd, "key_length * head_dim");
  check_values("V", V, key_length * hd, "key_length * head_dim");
  check_mask(mask, key_length);
  check_shaw_scale(scale);

  std::vector<std::size_t> keys;
  for (std::size_t j = 0; j < key_length; ++j)
    if (visible_of(mask, i, j, query_length, key_length)) keys.push_back(j);
  if (keys.empty())
    throw Error(kShawWhere, "key_mask", "a mask hiding every key of query row " + std::to_string(i),
                "a mask leaving every query row at least one visible key (a fully masked row has no softmax)");

  const std::span<const double> q = Q.subspan(i * hd, hd);
  std::vector<std::int64_t> idx;
  std::vector<Num> b;
  idx.reserve(keys.size());
  b.reserve(keys.size());
  for (std::size_t j : keys) {
    idx.push_back(index_of(spec_, i, j, query_length, key_length));
    b.push_back(exact_bracket(spec_.key_query, q, K.subspan(j * hd, hd), key_row(idx.back())));
  }

  // The reference key: the largest e = scale B, decided exactly on the B (scale 0: every e is 0).
  const int sign = scale ? (*scale > 0 ? 1 : (*scale < 0 ? -1 : 0)) : 1;
  std::size_t m = 0;
  for (std::size_t t = 1; t < b.size(); ++t)
    if (sign * mpfr_cmp(b[t].get(), b[m].get()) > 0) m = t;

  // E_t = RN_W(exp(Delta_t)), Delta_t = scale (B_t - B_m) <= 0 at W + 32 bits; tiny weights dropped (header).
  const mpfr_prec_t w = static_cast<mpfr_prec_t>(bits_) + kShawWorkingMargin;
  std::vector<Num> e;
  std::vector<std::size_t> kept;  // positions in keys
  e.reserve(keys.size());
  for (std::size_t t = 0; t < keys.size(); ++t) {
    Num et(w);
    if (t == m) {
      mpfr_set_ui(et.get(), 1, MPFR_RNDN);
    } else {
      const Num diff = exact_difference(b[t], b[m]);
      Num delta(w + kDeltaExtra);
      scale_into(delta.get(), diff.get(), scale, hd);
      if (mpfr_cmp_d(delta.get(), kDropBelow) < 0) continue;
      mpfr_exp(et.get(), delta.get(), MPFR_RNDN);
    }
    e.push_back(std::move(et));
    kept.push_back(t);
  }

  std::vector<mpfr_ptr> ptrs;
  ptrs.reserve(e.size());
  for (Num& et : e) ptrs.push_back(et.get());
  Num s(w);
  mpfr_sum(s.get(), ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);

  std::vector<Real> out;
  out.reserve(hd);
  for (std::size_t c = 0; c < hd; ++c) {
    std::vector<Num> terms;
    terms.reserve(2 * kept.size());
    for (std::size_t n = 0; n < kept.size(); ++n) {
      const std::size_t t = kept[n];
      const double vjc = V[keys[t] * hd + c];
      const double ajc = spec_.values ? value_row(idx[t])[c] : 0.0;
      for (double x : {vjc, ajc}) {
        if (x == 0.0) continue;
        Num p(w + 53);
        if (mpfr_mul_d(p.get(), e[n].get(), x, MPFR_RNDN) != 0)  // exact: W + 53 bits
          throw std::logic_error("shaw reference: E_j w_jc was rounded");
        terms.push_back(std::move(p));
      }
    }
    Num num(w), z(w);
    if (terms.empty()) {
      mpfr_set_zero(num.get(), 1);
    } else {
      std::vector<mpfr_ptr> tp;
      tp.reserve(terms.size());
      for (Num& p : terms) tp.push_back(p.get());
      mpfr_sum(num.get(), tp.data(), static_cast<unsigned long>(tp.size()), MPFR_RNDN);
    }
    mpfr_div(z.get(), num.get(), s.get(), MPFR_RNDN);
    Real zc = make_real(bits_);
    mpfr_set(raw(zc), z.get(), MPFR_RNDN);
    out.push_back(std::move(zc));
  }
  return out;
}

double ShawOracle::score_magnitude(std::span<const double> q, std::span<const double> k, std::size_t i,
                                   std::size_t j, std::size_t query_length, std::size_t key_length,
                                   std::optional<double> scale) const {
  check_shaw_site(spec_, i, j, query_length, key_length);
  check_values("q", q, spec_.head_dim, "head_dim");
  check_values("k", k, spec_.head_dim, "head_dim");
  check_shaw_scale(scale);
  const std::span<const double> a = key_row(index_of(spec_, i, j, query_length, key_length));
  std::vector<Num> terms;
  terms.reserve(3 * q.size());
  for (std::size_t c = 0; c < q.size(); ++c) {
    push_product(terms, std::fabs(q[c]), std::fabs(k[c]));
    push_product(terms, std::fabs(q[c]), std::fabs(a[c]));
    if (spec_.key_query) push_product(terms, std::fabs(k[c]), std::fabs(a[c]));
  }
  const Num sum = exact_sum(terms);
  Num r(128), out(128);
  if (scale) {
    mpfr_set_d(r.get(), std::fabs(*scale), MPFR_RNDN);  // exact
  } else {
    Num d(64);
    mpfr_set_ui(d.get(), static_cast<unsigned long>(spec_.head_dim), MPFR_RNDN);
    mpfr_rec_sqrt(r.get(), d.get(), MPFR_RNDU);
  }
  mpfr_mul(out.get(), sum.get(), r.get(), MPFR_RNDU);
  return mpfr_get_d(out.get(), MPFR_RNDU);
}

}  // namespace posenc::reference
