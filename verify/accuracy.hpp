// verify/accuracy.hpp — the one accuracy metric of posenc (DESIGN.md §3), computed against
// the MPFR oracle's Real.
//
//   ulp(r)   = 2^(max(e, emin) - p + 1),  e = floor(log2 |r|),  p and emin of the type (posenc/vocabulary.hpp:
//              f16 11/-14, bf16 8/-126, f32 24/-126, f64 53/-1022); ulp(0) = 2^(emin - p + 1) (the subnormal
//              spacing).
//   kernel   err   = |y - r| / ulp(r)                 (<= 0.5: correctly rounded, < 1: faithful)
//   scaled   err_S = |y - r| / ulp(max(|r|, S))       (S = 1 for table entries, d/2 for dot products, ...)
//   absolute err   = |y - r|
// |y - r| is formed in MPFR (y is exact in binary, r is the oracle's Real) and only the quotient is
// rounded to double, so the metric itself adds no error worth naming (relative 2^-53 of the quotient).
//
// Failure classes are separate outcomes, never folded into a number (Measure::cls):
//   nan / inf         y is NaN / infinite (the oracle never is);
//   zero_vs_nonzero   kernel metric only: exactly one of y, r is zero (ULPs of r mean nothing there);
//   sign_mismatch     kernel metric only: y and r are non-zero with opposite signs.
// In the scaled and absolute metrics a zero or a sign change near r = 0 is an ordinary small error.
//
// Integer ULP distance (bit-reproducibility checks): a monotone key on the bit pattern, so that +0 and
// -0 are the same point and the distance counts representable numbers between a and b, across zero and
// up to the infinities; never the raw difference of bit patterns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "posenc/reference/mp.hpp"
#include "posenc/vocabulary.hpp"

namespace posenc::verify {

using Real = posenc::reference::Real;

// The MPFR number inside a Real (for mpfr_* calls that only read it).
inline mpfr_srcptr mpfr_of(const Real& x) { return x.backend().data(); }
using posenc::DType;
using posenc::min_exponent;
using posenc::precision_bits;

enum class Class { ok, nan, inf, zero_vs_nonzero, sign_mismatch };
std::string_view to_string(Class);

struct Measure {
  Class cls = Class::ok;
  double err = 0.0;  // meaningful when cls == ok
  bool ok() const noexcept { return cls == Class::ok; }
};

// ulp of the real number r in the format (a power of two, exact as a double).
double ulp(const Real& r, DType);
double ulp(double r, DType);

// |y - r| formed in MPFR and rounded once to double.
double abs_diff(double y, const Real& r);

Measure kernel_error(double y, const Real& r, DType);
Measure scaled_error(double y, const Real& r, double S, DType);
Measure absolute_error(double y, const Real& r);
// |y - r| / scale (scale > 0), for metrics normalised by an a-priori bound.
Measure ratio_error(double y, const Real& r, double scale);

// Monotone key and ULP distance; nullopt when a NaN is involved.
std::int32_t monotone_key(float) noexcept;
std::int64_t monotone_key(double) noexcept;
std::optional<std::uint64_t> ulp_distance(float a, float b) noexcept;
std::optional<std::uint64_t> ulp_distance(double a, double b) noexcept;

// Formatting for failure messages: "0.123 (0x1.f7ced9p-4)".
std::string dec_hex(double x);
std::string dec_hex(float x);
std::string hexfloat(double x);
// The reference to 40 significant digits.
std::string ref40(const Real& r);

}  // namespace posenc::verify
