// reference/src/mpfr_util.hpp — what the oracles' Ziv loops share: raw access to a Real's mpfr_t, an mpfr_t of any
// precision cleared on scope exit (working values may exceed kMaxBits, which make_real refuses), and exact sums and
// products of terms (the relative-score oracles). Internal to reference/src.
#pragma once

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "posenc/reference/mp.hpp"

namespace posenc::reference::detail {

inline mpfr_ptr raw(Real& x) { return x.backend().data(); }
inline mpfr_srcptr raw(const Real& x) { return x.backend().data(); }

// The formats the emulating oracles round to, by their short names.
inline constexpr Binary F = Binary::f32;
inline constexpr Binary D = Binary::f64;
// Precision of the Reals that hold emulated float32 / float64 intermediates: every such value exactly.
inline constexpr unsigned kEmu = 64;
// The Ziv loops' last working precision: a value still undecided there is reported, never guessed.
inline constexpr mpfr_prec_t kZivLimit = mpfr_prec_t{1} << 20;

// -x, exactly, at x's precision.
inline Real neg(const Real& x) {
  Real r = make_real(bits_of(x));
  mpfr_neg(raw(r), raw(x), MPFR_RNDN);
  return r;
}

// An mpz_t cleared on scope exit.
class Z {
 public:
  Z() { mpz_init(v_); }
  explicit Z(unsigned long x) { mpz_init_set_ui(v_, x); }
  ~Z() { mpz_clear(v_); }
  Z(const Z&) = delete;
  Z& operator=(const Z&) = delete;
  mpz_ptr get() { return v_; }
  mpz_srcptr get() const { return v_; }

 private:
  mpz_t v_;
};

// An mpfr_t of the given precision (at least MPFR_PREC_MIN), cleared on scope exit; movable, so the oracles keep
// vectors of them (a moved-from Mp holds the other's old value and stays valid).
class Mp {
 public:
  explicit Mp(mpfr_prec_t prec) { mpfr_init2(v_, std::max<mpfr_prec_t>(prec, MPFR_PREC_MIN)); }
  Mp(Mp&& o) noexcept {
    mpfr_init2(v_, MPFR_PREC_MIN);
    mpfr_swap(v_, o.v_);
  }
  Mp& operator=(Mp&& o) noexcept {
    mpfr_swap(v_, o.v_);
    return *this;
  }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  ~Mp() { mpfr_clear(v_); }
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  mpfr_prec_t prec() const { return mpfr_get_prec(v_); }

 private:
  mpfr_t v_;
};

}  // namespace posenc::reference::detail

// ---- exact arithmetic on terms (the relative-score oracles: Shaw, Transformer-XL, XLNet, TENER) -----------------
namespace posenc::reference::detail {

// x y for doubles, exactly (106 bits), appended to terms unless zero.
inline void push_product(std::vector<Mp>& terms, double x, double y) {
  if (x == 0.0 || y == 0.0) return;
  Mp t(106);
  mpfr_set_d(t.get(), x, MPFR_RNDN);  // exact
  if (mpfr_mul_d(t.get(), t.get(), y, MPFR_RNDN) != 0)
    throw std::logic_error("oracle: a product of two doubles was rounded");
  terms.push_back(std::move(t));
}

// a b exactly (precision of a + precision of b), appended to terms unless zero.
inline void push_product(std::vector<Mp>& terms, mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_zero_p(a) || mpfr_zero_p(b)) return;
  Mp t(mpfr_get_prec(a) + mpfr_get_prec(b));
  if (mpfr_mul(t.get(), a, b, MPFR_RNDN) != 0) throw std::logic_error("oracle: an exact product was rounded");
  terms.push_back(std::move(t));
}

// v x exactly (v any number, x a double), appended to terms unless zero.
inline void push_scaled(std::vector<Mp>& terms, mpfr_srcptr v, double x) {
  if (x == 0.0 || mpfr_zero_p(v)) return;
  Mp p(mpfr_get_prec(v) + 53);
  if (mpfr_mul_d(p.get(), v, x, MPFR_RNDN) != 0) throw std::logic_error("oracle: a product with a double was rounded");
  terms.push_back(std::move(p));
}

// The terms' mpfr pointers, for mpfr_sum.
inline std::vector<mpfr_ptr> pointers(std::vector<Mp>& terms) {
  std::vector<mpfr_ptr> p;
  p.reserve(terms.size());
  for (Mp& t : terms) p.push_back(t.get());
  return p;
}

// The exact sum of finite terms: |sum| < n 2^top and the sum is a multiple of 2^low, so top - low + bit_width(n) + 1
// bits hold it (checked: mpfr_sum's ternary value is 0). No terms, or only zeros: +0.
inline Mp exact_sum(std::vector<Mp>& terms) {
  mpfr_exp_t top = 0, low = 0;
  bool any = false;
  for (const Mp& t : terms) {
    if (mpfr_zero_p(t.get())) continue;
    const mpfr_exp_t e = mpfr_get_exp(t.get());
    const mpfr_exp_t lsb = e - static_cast<mpfr_exp_t>(t.prec());  // t is a multiple of 2^lsb
    top = any ? std::max(top, e) : e;
    low = any ? std::min(low, lsb) : lsb;
    any = true;
  }
  if (!any) {
    Mp z(2);
    mpfr_set_zero(z.get(), 1);
    return z;
  }
  const auto n = static_cast<unsigned long>(terms.size());
  Mp out(static_cast<mpfr_prec_t>(top - low) + static_cast<mpfr_prec_t>(std::bit_width(n)) + 1);
  std::vector<mpfr_ptr> ptrs = pointers(terms);
  if (mpfr_sum(out.get(), ptrs.data(), n, MPFR_RNDN) != 0) throw std::logic_error("oracle: an exact sum was rounded");
  return out;
}

// out = t / sqrt(d) correctly rounded to out's precision `bits`, where sqrt(d) is irrational and t != 0: the Ziv loop
// from precision bits + margin, |RN_W(t RN_W(1/sqrt d)) - e| <= (2u + u^2)|e| < 2^(EXP - W + 2), u = 2^-W. `who`
// names the oracle in the logic_error past 2^20 bits.
inline void divide_by_root(mpfr_ptr out, mpfr_srcptr t, std::size_t d, mpfr_prec_t margin, const char* who) {
  const mpfr_prec_t bits = mpfr_get_prec(out);
  Mp dd(64);
  mpfr_set_ui(dd.get(), static_cast<unsigned long>(d), MPFR_RNDN);
  for (mpfr_prec_t w = bits + margin;; w += w / 2) {
    if (w > kZivLimit) throw std::logic_error(std::string(who) + ": a value / sqrt(d_head) did not round within 2^20 bits");
    Mp r(w), e(w);
    mpfr_rec_sqrt(r.get(), dd.get(), MPFR_RNDN);
    mpfr_mul(e.get(), t, r.get(), MPFR_RNDN);
    if (mpfr_can_round(e.get(), w - 2, MPFR_RNDN, MPFR_RNDZ, bits + 1)) {
      mpfr_set(out, e.get(), MPFR_RNDN);
      return;
    }
  }
}

// m when d = m^2, else 0.
inline unsigned long exact_root(std::size_t d) {
  unsigned long m = 0;
  while ((m + 1) * (m + 1) <= d) ++m;
  return m * m == d ? m : 0;
}

}  // namespace posenc::reference::detail
