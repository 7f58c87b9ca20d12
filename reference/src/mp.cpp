#include "posenc/reference/mp.hpp"

#include <mpfr.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <string>

#include "mpfr_util.hpp"
#include "posenc/error.hpp"

namespace posenc::reference {
namespace {
using detail::raw;

constexpr const char* kWhere = "reference";


struct Format {
  mpfr_prec_t prec;
  // MPFR writes x = 0.m * 2^e with 1/2 <= m < 1: the smallest binary32 subnormal 2^-149 has e = -148,
  // the largest finite binary32 (1 - 2^-24) * 2^128 has e = 128 (binary64: -1073, 1024).
  mpfr_exp_t emin, emax;
};

constexpr Format format_of(Binary b) {
  return b == Binary::f32 ? Format{24, -148, 128} : Format{53, -1073, 1024};
}

// Scoped change of MPFR's (thread-local) exponent range.
class ExponentRange {
 public:
  ExponentRange(mpfr_exp_t emin, mpfr_exp_t emax) : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  ~ExponentRange() {
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
  }
  ExponentRange(const ExponentRange&) = delete;
  ExponentRange& operator=(const ExponentRange&) = delete;

 private:
  mpfr_exp_t emin_, emax_;
};

bool in_range(const Real& x, const Format& f) {
  if (!mpfr_number_p(raw(x))) return false;
  if (mpfr_zero_p(raw(x))) return true;
  const mpfr_exp_t e = mpfr_get_exp(raw(x));
  return e >= f.emin && e <= f.emax;
}

// RN_fmt(op(inputs)) as a Real of max(bits, 53) bits. `op(rop, rnd)` is an MPFR call returning its
// ternary value. MPFR computes op correctly rounded to fmt.prec bits in the format's exponent range,
// then mpfr_subnormalize re-rounds on the subnormal grid using the ternary value (no double rounding).
// MPFR requires the inputs to lie in the current exponent range; the emulation steps only feed it
// binary32/binary64 numbers, which do. Anything else (NaN, inf, huge or tiny high-precision inputs)
// takes the fallback: op at 2*bits + 128 bits in the full range, then one more rounding (a double
// rounding only if the exact result lies within 2^-(2 bits + 128) relative of a midpoint).
template <class Op>
Real rn_op(Binary b, unsigned bits, std::initializer_list<const Real*> inputs, Op op) {
  check_bits(bits);
  const Format f = format_of(b);
  Real out = make_real(std::max(bits, 53u));
  bool direct = true;
  for (const Real* in : inputs) direct = direct && in_range(*in, f);
  if (direct) {
    mpfr_t t;
    mpfr_init2(t, f.prec);
    {
      ExponentRange range(f.emin, f.emax);
      int ternary = op(t, MPFR_RNDN);
      mpfr_subnormalize(t, ternary, MPFR_RNDN);
    }
    mpfr_set(raw(out), t, MPFR_RNDN);  // exact: bits >= 53 >= fmt.prec
    mpfr_clear(t);
    return out;
  }
  Real wide = make_real(2 * bits + 128);
  op(raw(wide), MPFR_RNDN);
  return b == Binary::f32 ? with_bits(round_to_float_precision(wide), std::max(bits, 53u))
                          : with_bits(round_to_double_precision(wide), std::max(bits, 53u));
}

std::string mpfr_format(const char* fmt, int digits, const Real& x) {
  char* s = nullptr;
  const int n = digits >= 0 ? mpfr_asprintf(&s, fmt, digits, raw(x)) : mpfr_asprintf(&s, fmt, raw(x));
  if (n < 0 || s == nullptr) return "?";
  std::string out(s);
  mpfr_free_str(s);
  return out;
}

}  // namespace

void release_thread_caches() noexcept { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

void check_bits(unsigned bits) {
  if (bits < kMinBits || bits > kMaxBits)
    throw Error(kWhere, "bits", std::to_string(bits),
                std::to_string(kMinBits) + " <= bits <= " + std::to_string(kMaxBits));
}

unsigned digits10_for_bits(unsigned bits) {
  unsigned d = 1;
  while (boost::multiprecision::detail::digits10_2_2(d) < bits) ++d;
  return d;
}

PrecisionGuard::PrecisionGuard(unsigned bits) : saved_digits10_(Real::default_precision()) {
  check_bits(bits);
  Real::default_precision(digits10_for_bits(bits));
}

PrecisionGuard::~PrecisionGuard() { Real::default_precision(saved_digits10_); }

unsigned bits_of(const Real& x) { return static_cast<unsigned>(mpfr_get_prec(raw(x))); }

Real make_real(unsigned bits) {
  check_bits(bits);
  // Constructed from a raw mpfr_t, the Real takes that precision: Boost's default precision is never
  // read (a default-constructed Real would read it, racing with a PrecisionGuard in another thread).
  mpfr_t t;
  mpfr_init2(t, static_cast<mpfr_prec_t>(bits));
  mpfr_set_zero(t, +1);
  Real r(t);
  mpfr_clear(t);
  return r;
}

Real make_real(double x, unsigned bits) {
  Real r = make_real(bits);
  mpfr_set_d(raw(r), x, MPFR_RNDN);
  return r;
}

Real make_real(std::int64_t n, unsigned bits) {
  Real r = make_real(bits);
  mpfr_set_sj(raw(r), static_cast<intmax_t>(n), MPFR_RNDN);
  return r;
}

Real make_real(int n, unsigned bits) { return make_real(static_cast<std::int64_t>(n), bits); }

Real with_bits(const Real& x, unsigned bits) {
  Real r = make_real(bits);
  mpfr_set(raw(r), raw(x), MPFR_RNDN);
  return r;
}

Real parse_real(const std::string& text, unsigned bits) {
  Real r = make_real(bits);
  if (mpfr_set_str(raw(r), text.c_str(), 0, MPFR_RNDN) != 0)
    throw Error(kWhere, "text", "'" + text + "'", "a decimal or hex-float number");
  return r;
}

float round_to_float(const Real& x) { return mpfr_get_flt(raw(x), MPFR_RNDN); }
double round_to_double(const Real& x) { return mpfr_get_d(raw(x), MPFR_RNDN); }

Real round_to_float_precision(const Real& x) {
  Real r = make_real(std::max(bits_of(x), 24u));
  mpfr_set_flt(raw(r), round_to_float(x), MPFR_RNDN);  // exact
  return r;
}

Real round_to_double_precision(const Real& x) {
  Real r = make_real(std::max(bits_of(x), 53u));
  mpfr_set_d(raw(r), round_to_double(x), MPFR_RNDN);  // exact
  return r;
}

Real rn_mul(Binary b, const Real& x, const Real& y, unsigned bits) {
  return rn_op(b, bits, {&x, &y}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_mul(r, raw(x), raw(y), m); });
}
Real rn_div(Binary b, const Real& x, const Real& y, unsigned bits) {
  return rn_op(b, bits, {&x, &y}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_div(r, raw(x), raw(y), m); });
}
Real rn_exp(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_exp(r, raw(x), m); });
}
Real rn_exp2(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_exp2(r, raw(x), m); });
}
Real rn_pow_ui(Binary b, const Real& x, unsigned long k, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_pow_ui(r, raw(x), k, m); });
}
Real rn_log(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_log(r, raw(x), m); });
}
Real rn_pow(Binary b, const Real& x, const Real& y, unsigned bits) {
  return rn_op(b, bits, {&x, &y}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_pow(r, raw(x), raw(y), m); });
}
Real rn_sin(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_sin(r, raw(x), m); });
}
Real rn_cos(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_cos(r, raw(x), m); });
}
Real rn(Binary b, const Real& x, unsigned bits) {
  return rn_op(b, bits, {&x}, [&](mpfr_ptr r, mpfr_rnd_t m) { return mpfr_set(r, raw(x), m); });
}

Real pi(unsigned bits) {
  Real r = make_real(bits);
  mpfr_const_pi(raw(r), MPFR_RNDN);
  return r;
}

std::string to_decimal(const Real& x, int digits) {
  return mpfr_format("%.*Re", std::max(digits, 1) - 1, x);
}

std::string to_hexfloat(const Real& x) {
  // C99 style, normalized to a leading 1 ("0x1.8p-2"), every bit of x. (MPFR's %Ra is exact too but
  // not normalized: it prints 0.375 as "0x6p-4".)
  if (mpfr_nan_p(raw(x))) return "nan";
  if (mpfr_inf_p(raw(x))) return mpfr_signbit(raw(x)) ? "-inf" : "inf";
  const std::string sign = mpfr_signbit(raw(x)) ? "-" : "";
  if (mpfr_zero_p(raw(x))) return sign + "0x0p+0";
  const long e = mpfr_get_exp(raw(x)) - 1;  // |x| = 1.f * 2^e
  const long frac_bits = static_cast<long>(mpfr_get_prec(raw(x))) - 1;
  const long nibbles = (frac_bits + 3) / 4;
  // f * 16^nibbles is an integer: |x| * 2^(4 nibbles - e) - 16^nibbles
  mpfr_t t;
  mpfr_init2(t, mpfr_get_prec(raw(x)) + 8);
  mpfr_abs(t, raw(x), MPFR_RNDN);
  mpfr_mul_2si(t, t, 4 * nibbles - e, MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  mpfr_get_z(z, t, MPFR_RNDN);  // exact: t is an integer
  mpfr_clear(t);
  char* digits = mpz_get_str(nullptr, 16, z);  // "1" followed by `nibbles` hex digits
  mpz_clear(z);
  std::string d(digits);
  void (*free_fn)(void*, size_t);
  mp_get_memory_functions(nullptr, nullptr, &free_fn);
  free_fn(digits, std::strlen(digits) + 1);
  std::string frac = d.substr(1);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return sign + "0x1" + (frac.empty() ? "" : "." + frac) + "p" + (e >= 0 ? "+" : "") + std::to_string(e);
}

}  // namespace posenc::reference
