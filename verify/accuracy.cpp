#include "verify/accuracy.hpp"

#include <mpfr.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>

namespace posenc::verify {
namespace {


// |y - r| at a precision that makes the subtraction's rounding irrelevant (relative 2^-(prec)).
struct Diff {
  mpfr_t v;
  explicit Diff(double y, const Real& r) {
    const mpfr_prec_t prec = std::max<mpfr_prec_t>(mpfr_get_prec(mpfr_of(r)), 53) + 64;
    mpfr_init2(v, prec);
    mpfr_t yy;
    mpfr_init2(yy, 53);
    mpfr_set_d(yy, y, MPFR_RNDN);  // exact
    mpfr_sub(v, yy, mpfr_of(r), MPFR_RNDN);
    mpfr_abs(v, v, MPFR_RNDN);
    mpfr_clear(yy);
  }
  ~Diff() { mpfr_clear(v); }
  Diff(const Diff&) = delete;
  Diff& operator=(const Diff&) = delete;
  double over(double scale) {  // |y - r| / scale, scale a power of two or any positive double
    mpfr_t q;
    mpfr_init2(q, mpfr_get_prec(v));
    mpfr_div_d(q, v, scale, MPFR_RNDN);
    const double out = mpfr_get_d(q, MPFR_RNDN);
    mpfr_clear(q);
    return out;
  }
};

std::optional<Class> nonfinite_class(double y) {
  if (std::isnan(y)) return Class::nan;
  if (std::isinf(y)) return Class::inf;
  return std::nullopt;
}

// floor(log2 |r|) for r != 0. MPFR stores r = 0.m * 2^E with 1/2 <= m < 1.
long floor_log2(const Real& r) { return static_cast<long>(mpfr_get_exp(mpfr_of(r))) - 1; }

}  // namespace

std::string_view to_string(Class c) {
  switch (c) {
    case Class::ok: return "ok";
    case Class::nan: return "NaN";
    case Class::inf: return "Inf";
    case Class::zero_vs_nonzero: return "zero-vs-nonzero";
    case Class::sign_mismatch: return "sign-mismatch";
  }
  return "?";
}

double ulp(const Real& r, DType t) {
  const int p = precision_bits(t), emin = min_exponent(t);
  long e = emin;
  if (!mpfr_zero_p(mpfr_of(r))) e = std::max<long>(floor_log2(r), emin);
  return std::ldexp(1.0, static_cast<int>(e) - p + 1);
}

double ulp(double r, DType t) {
  const int p = precision_bits(t), emin = min_exponent(t);
  int e = emin;
  if (r != 0.0) e = std::max(std::ilogb(r), emin);
  return std::ldexp(1.0, e - p + 1);
}

double abs_diff(double y, const Real& r) {
  Diff d(y, r);
  return d.over(1.0);
}

Measure kernel_error(double y, const Real& r, DType t) {
  if (auto c = nonfinite_class(y)) return {*c, std::numeric_limits<double>::infinity()};
  const bool rz = mpfr_zero_p(mpfr_of(r)) != 0, yz = (y == 0.0);
  if (rz != yz) return {Class::zero_vs_nonzero, std::numeric_limits<double>::infinity()};
  if (!rz && (std::signbit(y) != (mpfr_sgn(mpfr_of(r)) < 0)))
    return {Class::sign_mismatch, std::numeric_limits<double>::infinity()};
  Diff d(y, r);
  return {Class::ok, d.over(ulp(r, t))};
}

Measure scaled_error(double y, const Real& r, double S, DType t) {
  if (auto c = nonfinite_class(y)) return {*c, std::numeric_limits<double>::infinity()};
  Diff d(y, r);
  // ulp(max(|r|, S)): the exponent of the larger of the two.
  double u = ulp(S, t);
  if (!mpfr_zero_p(mpfr_of(r)) && mpfr_cmpabs_ui(mpfr_of(r), 0) > 0) {
    const double ur = ulp(r, t);
    u = std::max(u, ur);
  }
  return {Class::ok, d.over(u)};
}

Measure absolute_error(double y, const Real& r) {
  if (auto c = nonfinite_class(y)) return {*c, std::numeric_limits<double>::infinity()};
  Diff d(y, r);
  return {Class::ok, d.over(1.0)};
}

Measure ratio_error(double y, const Real& r, double scale) {
  if (auto c = nonfinite_class(y)) return {*c, std::numeric_limits<double>::infinity()};
  Diff d(y, r);
  return {Class::ok, d.over(scale)};
}

std::int32_t monotone_key(float x) noexcept {
  const auto b = std::bit_cast<std::int32_t>(x);
  // Negative numbers: sign-magnitude -> two's complement order; -0 maps to 0 like +0.
  return b >= 0 ? b : -(b & 0x7fffffff);
}

std::int64_t monotone_key(double x) noexcept {
  const auto b = std::bit_cast<std::int64_t>(x);
  return b >= 0 ? b : -(b & 0x7fffffffffffffffLL);
}

std::optional<std::uint64_t> ulp_distance(float a, float b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  const std::int64_t ka = monotone_key(a), kb = monotone_key(b);
  return static_cast<std::uint64_t>(ka > kb ? ka - kb : kb - ka);
}

std::optional<std::uint64_t> ulp_distance(double a, double b) noexcept {
  if (std::isnan(a) || std::isnan(b)) return std::nullopt;
  const std::int64_t ka = monotone_key(a), kb = monotone_key(b);
  // The difference can exceed INT64_MAX (-inf to +inf): subtract in unsigned arithmetic.
  return ka > kb ? static_cast<std::uint64_t>(ka) - static_cast<std::uint64_t>(kb)
                 : static_cast<std::uint64_t>(kb) - static_cast<std::uint64_t>(ka);
}

std::string hexfloat(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

std::string dec_hex(double x) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.17g (%a)", x, x);
  return buf;
}

std::string dec_hex(float x) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.9g (%a)", static_cast<double>(x), static_cast<double>(x));
  return buf;
}

std::string ref40(const Real& r) { return posenc::reference::to_decimal(r, 40); }

}  // namespace posenc::verify
