// posenc/reference/mp.hpp — the multiprecision number of the oracles and its rounding helpers.
//
// Real is Boost.Multiprecision's mpfr_float (MPFR backend, precision chosen at run time). The oracles
// never rely on Boost's *default* precision: every Real they return is created with an explicit MPFR
// precision in bits (make_real), and every operation that matters is an MPFR call on backend().data()
// into a destination whose precision was set explicitly. Callers that do Boost arithmetic on the
// results (a - b, abs, sqrt, ...) should hold a PrecisionGuard for the scope, see below.
//
// Boost 1.74 pitfalls this header exists to avoid (each is checked by reference/tests):
//   * Boost's precision is in *decimal digits*; digits10 -> bits is digits10*1000/301 + 2, so a
//     Real made "with 77 digits" has 257 bits, never exactly the 256 one asked for.
//   * The default precision is a plain static (not thread_local in 1.74): a PrecisionGuard changes it
//     for every thread. The oracle functions themselves do not read it, so they are safe to call from
//     several threads; guards are not.
//   * A Real constructed from a double or an integer gets the default precision, not the one you
//     meant: a silently low precision only shows up as a P-vs-2P disagreement.
//   * static_cast<float>(Real) converts through double, i.e. rounds twice; use round_to_float.
#pragma once

#include <boost/multiprecision/mpfr.hpp>

#include <cstdint>
#include <string>

namespace posenc::reference {

using Real = boost::multiprecision::mpfr_float;  // runtime precision, MPFR backend

inline constexpr unsigned kDefaultBits = 256;
inline constexpr unsigned kMinBits = 24;           // below this the emulated float32 values would not fit
inline constexpr unsigned kMaxBits = 1u << 16;

// MPFR keeps per-thread caches (pi, log 2, ...) that a thread leaks when it ends: a thread of the caller's that
// has used an oracle calls this before it ends (threads that live as long as the process need not).
void release_thread_caches() noexcept;

// Throws posenc::Error unless kMinBits <= bits <= kMaxBits.
void check_bits(unsigned bits);

// The smallest Boost digits10 whose MPFR precision is >= bits (Boost maps digits10 d to
// d*1000/301 + 2 bits, so the result is usually 1 or 2 bits more than asked).
unsigned digits10_for_bits(unsigned bits);

// RAII: sets Real's default precision (Boost digits10) so that new Reals in the scope, including
// temporaries of Boost expressions, have at least `bits` bits; restores the previous default on exit.
// Boost 1.74 keeps that default in a process-wide static: do not hold guards in concurrent threads.
class PrecisionGuard {
 public:
  explicit PrecisionGuard(unsigned bits);
  ~PrecisionGuard();
  PrecisionGuard(const PrecisionGuard&) = delete;
  PrecisionGuard& operator=(const PrecisionGuard&) = delete;

 private:
  unsigned saved_digits10_;
};

// The MPFR precision of x, in bits.
unsigned bits_of(const Real& x);

// A Real of exactly `bits` bits holding 0, the double x (exact when bits >= 53, else rounded to
// nearest-even), the integer n (exact when bits >= 64), or x re-rounded to `bits` (nearest-even).
Real make_real(unsigned bits);
Real make_real(double x, unsigned bits);
Real make_real(std::int64_t n, unsigned bits);
Real make_real(int n, unsigned bits);
Real with_bits(const Real& x, unsigned bits);
// Parses a decimal or hex-float literal ("0.1", "-0x1.8p-3"), rounded to nearest at `bits`.
Real parse_real(const std::string& text, unsigned bits);

// Correct rounding (to nearest, ties to even) of the exact value of x to IEEE binary32 / binary64,
// including gradual underflow (subnormals) and overflow to +-infinity. mpfr_get_flt / mpfr_get_d with
// MPFR_RNDN: one rounding, never through double.
float round_to_float(const Real& x);
double round_to_double(const Real& x);

// The same roundings, returned as a Real of precision max(bits_of(x), 24) (resp. 53): the value is
// exactly a binary32 (binary64) number, for use as one step of an emulated float32 computation.
// Subnormal results are rounded on the subnormal grid (2^-149 / 2^-1074); overflow gives +-inf.
Real round_to_float_precision(const Real& x);
Real round_to_double_precision(const Real& x);

// ---- correctly rounded IEEE operations (the steps of an emulated implementation) ----------------
// Each returns RN_fmt(op(exact inputs)): the exact real result rounded once to the binary format, with
// IEEE subnormals and overflow, computed by MPFR directly at 24 (53) bits in the format's exponent range
// (mpfr_set_emin/emax + mpfr_subnormalize), so there is no double rounding. Inputs must be finite.
// The result is a Real of `bits` bits (>= 53) holding that binary32/binary64 number exactly.
enum class Binary { f32, f64 };
Real rn_mul(Binary, const Real& a, const Real& b, unsigned bits = kDefaultBits);
Real rn_div(Binary, const Real& a, const Real& b, unsigned bits = kDefaultBits);
Real rn_exp(Binary, const Real& x, unsigned bits = kDefaultBits);
Real rn_exp2(Binary, const Real& x, unsigned bits = kDefaultBits);                    // 2^x
Real rn_pow_ui(Binary, const Real& x, unsigned long k, unsigned bits = kDefaultBits);  // x^k, k a non-negative integer
Real rn_log(Binary, const Real& x, unsigned bits = kDefaultBits);
// x^y for a real exponent y (MPFR pow: IEEE special values, 0^y = +0 for y > 0, exact cases returned exactly).
Real rn_pow(Binary, const Real& x, const Real& y, unsigned bits = kDefaultBits);
Real rn_sin(Binary, const Real& x, unsigned bits = kDefaultBits);
Real rn_cos(Binary, const Real& x, unsigned bits = kDefaultBits);
Real rn(Binary, const Real& x, unsigned bits = kDefaultBits);  // plain conversion (rounding) of x

// pi correctly rounded to `bits`.
Real pi(unsigned bits);

// Decimal scientific notation with `digits` significant digits ("-1.2345...e-05"); "nan", "inf".
std::string to_decimal(const Real& x, int digits = 40);
// Exact hexadecimal floating-point notation ("0x1.8p-3"), every bit of x.
std::string to_hexfloat(const Real& x);

}  // namespace posenc::reference
