// lib/src/core/rn32.hpp — correctly rounded float32 results of elementary functions (the emulated regimes' RN32
// steps, DESIGN.md §2), and the test that decides when a double approximation already rounds like the real value.
#pragma once

#include "core/binary128.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

namespace posenc::core {

// Whether the double v (|v - V| <= tol for the real value V it approximates) might round to a different float than
// V: v lies within tol of a float rounding boundary (a midpoint between neighbours), or is 0, or at the largest float.
inline bool near_float_boundary_abs(double v, double tol) {
  const double m = std::fabs(v);
  const auto f = static_cast<float>(m);
  const auto bits = std::bit_cast<std::uint32_t>(f);
  if (bits == 0 || bits >= 0x7f7fffffu) return true;  // 0 (v tiny) or the largest float / inf: decide elsewhere
  const double fd = f;
  const double below = std::bit_cast<float>(bits - 1), above = std::bit_cast<float>(bits + 1);
  // The rounding boundaries next to f are the midpoints (below + f) / 2 and (f + above) / 2, exact in double.
  return std::fabs(m - (below + fd) / 2) <= tol || std::fabs(m - (fd + above) / 2) <= tol;
}

// The same with a relative error bound: |v - V| <= rel |v|.
inline bool near_float_boundary(double v, double rel) { return near_float_boundary_abs(v, rel * std::fabs(v)); }

// Error bound of glibc's double log / log1p / pow with the products around them, with a margin (libm-test-ulps:
// within 1 ulp).
inline constexpr double kDoubleLibmRel = 0x1p-48;

// RN32(ln u) for a float u > 0: the double log rounded to float unless it lies within 2^-48 relative of a float
// rounding boundary; then binary128's logq decides (a float32 log within 2^-108 relative of a midpoint does not
// occur for float arguments: the oracles' Ziv loops would disagree).
inline float rn32_log(float u) {
  if (u == 1.0f) return 0.0f;
  const double r = std::log(static_cast<double>(u));
  if (!near_float_boundary(r, kDoubleLibmRel)) return static_cast<float>(r);
  return static_cast<float>(logq(static_cast<quad>(u)));
}

// RN32(e^x) for a float x, likewise (glibc's double exp is within 1 ulp).
inline float rn32_exp(float x) {
  const double r = std::exp(static_cast<double>(x));
  if (!near_float_boundary(r, kDoubleLibmRel)) return static_cast<float>(r);
  return static_cast<float>(expq(static_cast<quad>(x)));
}

// RN32(x^y) for floats x >= 0, y > 0, likewise.
inline float rn32_pow(float x, float y) {
  if (x == 0.0f) return 0.0f;
  const double r = std::pow(static_cast<double>(x), static_cast<double>(y));
  if (!near_float_boundary(r, kDoubleLibmRel)) return static_cast<float>(r);
  return static_cast<float>(powq(static_cast<quad>(x), static_cast<quad>(y)));
}

}  // namespace posenc::core
