// posenc/half.hpp — 16-bit storage types (bfloat16 and IEEE binary16) and their correctly rounded conversions.
//
// bf16 and f16 are plain 16-bit patterns (what a tensor of torch.bfloat16 / torch.float16 holds in memory); posenc
// never does arithmetic in them: kernels convert to float or double, compute, and round once back.
//   to_double(x):      exact (every bf16 and f16 value is a double).
//   to_bf16(y), to_f16(y): y rounded once to nearest-even in the format, including its subnormals, overflow to
//                      +-inf and NaN (a quiet NaN); never through float first (no double rounding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace posenc {

struct bf16 {
  std::uint16_t bits = 0;
  friend bool operator==(bf16, bf16) = default;
};
struct f16 {
  std::uint16_t bits = 0;
  friend bool operator==(f16, f16) = default;
};

namespace half_detail {

// y rounded to nearest-even with p significand bits, smallest normal exponent emin, largest finite value max.
inline double round_format(double y, int p, int emin, double max) {
  if (!std::isfinite(y) || y == 0.0) return y;
  const int e = std::max(std::ilogb(y), emin);
  const double q = std::ldexp(1.0, e - p + 1);  // the ulp at y (the subnormal spacing below emin)
  const double r = std::nearbyint(y / q) * q;     // y / q is exact (a power-of-two scaling); nearbyint: ties to even
  if (std::fabs(r) > max) return std::copysign(INFINITY, y);
  return r;
}

}  // namespace half_detail

inline double to_double(bf16 x) {
  const std::uint32_t u = static_cast<std::uint32_t>(x.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline double to_double(f16 x) {
  const int sign = x.bits >> 15, exp = (x.bits >> 10) & 0x1f, mant = x.bits & 0x3ff;
  double v;
  if (exp == 0x1f) v = mant ? NAN : INFINITY;
  else if (exp == 0) v = std::ldexp(static_cast<double>(mant), -24);
  else v = std::ldexp(static_cast<double>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

inline bf16 to_bf16(double y) {
  if (std::isnan(y)) return bf16{0x7fc0};
  // bf16 max finite = (2 - 2^-7) 2^127
  const auto r = static_cast<float>(half_detail::round_format(y, 8, -126, 0x1.fep127));  // exact: r is a bf16 value
  std::uint32_t u;
  std::memcpy(&u, &r, sizeof u);
  return bf16{static_cast<std::uint16_t>(u >> 16)};
}

inline f16 to_f16(double y) {
  if (std::isnan(y)) return f16{0x7e00};
  const double r = half_detail::round_format(y, 11, -14, 65504.0);
  const std::uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::fabs(r);
  if (std::isinf(a)) return f16{static_cast<std::uint16_t>(sign | 0x7c00)};
  if (a == 0.0) return f16{sign};
  const int e = std::ilogb(a);
  if (e < -14) return f16{static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::ldexp(a, 24)))};
  const auto mant = static_cast<std::uint16_t>(std::ldexp(a, 10 - e)) & 0x3ff;
  return f16{static_cast<std::uint16_t>(sign | ((e + 15) << 10) | mant)};
}

}  // namespace posenc
