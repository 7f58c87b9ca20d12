// lib/src/core/binary128.hpp — IEEE binary128 (113-bit significand) for the steps that need more than a double:
// frequency tables (angle_table.cpp), the correctly rounded float32 steps (rn32.hpp), sincos32's fallback, and the
// exact regimes of ALiBi, DeBERTa, FIRE, KERPLE, T5 and RoPE's scalings.
//
// posenc::quad is GCC's __float128 with libquadmath's functions on x86-64, and long double with <cmath>'s on a
// target whose long double is binary128 (AArch64 Linux): there the libquadmath names (logq, powq, ...) are defined
// here over the long double functions, glibc's ldbl-128 code, from which libquadmath itself was taken. Code writes
// `quad` and the q-suffixed names on every target.
#pragma once

#include <cfloat>
#include <cmath>

#if LDBL_MANT_DIG == 113
#define POSENC_QUAD_IS_LONG_DOUBLE 1
inline long double acosq(long double x) { return std::acos(x); }
inline long double ceilq(long double x) { return std::ceil(x); }
inline long double cosq(long double x) { return std::cos(x); }
inline long double exp2q(long double x) { return std::exp2(x); }
inline long double expq(long double x) { return std::exp(x); }
inline long double fabsq(long double x) { return std::fabs(x); }
inline long double floorq(long double x) { return std::floor(x); }
inline long double log1pq(long double x) { return std::log1p(x); }
inline long double logq(long double x) { return std::log(x); }
inline long double powq(long double x, long double y) { return std::pow(x, y); }
inline long double roundq(long double x) { return std::round(x); }
inline long double sinq(long double x) { return std::sin(x); }
inline long double sqrtq(long double x) { return std::sqrt(x); }
#elif defined(__SIZEOF_FLOAT128__)
#define POSENC_QUAD_IS_LONG_DOUBLE 0
#include <quadmath.h>
#else
#error "posenc needs IEEE binary128: GCC's __float128 (x86-64) or a binary128 long double (AArch64)"
#endif

namespace posenc {
#if POSENC_QUAD_IS_LONG_DOUBLE
using quad = long double;
#else
using quad = __float128;
#endif
static_assert(sizeof(quad) == 16, "posenc::quad is IEEE binary128");
}  // namespace posenc
