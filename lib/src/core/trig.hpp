// lib/src/core/trig.hpp — sin and cos of an angle given in double-double, written so that loops over
// arrays of angles vectorise (no branches, no table look-ups, no errno).
//
// Error analysis (absolute errors; u = 2^-53):
//  1. Reduction. n = nearest(theta_hi * 2/pi) via the 1.5*2^52 trick (|theta| <= 2^48 here);
//     r = theta - n*pi/2 with pi/2 = P1 + P2 + P3 (three doubles, 159 bits). r0 = theta_hi - RN(n*P1) is
//     exact (Sterbenz: both are within a factor 2 for n >= 1; trivially for n = 0); the low part of
//     n*P1 and n*P2 come from exact FMA two-products; the remaining small terms are each below
//     2^-9 for |theta| <= 2^44, so their sum carries <= 4 * 2^-62. |r| <= pi/4 + 2^-40.
//  2. Polynomials on |x| <= pi/4: Taylor series to x^17 (sin) and x^18 (cos); the first omitted
//     terms are below 2^-62. sin = x + (x^3 P(x^2) + r_lo (1 - x^2/2)), cos = w + (((1 - w) - x^2/2)
//     + x^4 Q(x^2) - r_lo x) with w = RN(1 - x^2/2): the leading term is exact and the final addition
//     rounds once, so each result is within ~0.6 ulp of its value: <= 0.6 * 2^-53 for |value| < 1.
//  3. Quadrant: exact sign changes and swaps.
// So sin/cos of a double-double angle (|theta| <= 2^44) err by at most 2^-53 + 2^-58 absolute.
#pragma once

#include <cmath>
#include <cstdint>

namespace posenc::core {

struct DoubleDouble {
  double hi, lo;
};

inline DoubleDouble two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

inline DoubleDouble fast_two_sum(double a, double b) {  // requires |a| >= |b| or a == 0
  const double s = a + b;
  return {s, b - (s - a)};
}

inline DoubleDouble two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// theta = p * omega for an integer p (|p| <= 2^53, exact in double) and omega = omega_hi + omega_lo.
inline DoubleDouble scaled_angle(double p, double omega_hi, double omega_lo) {
  const DoubleDouble t = two_prod(p, omega_hi);
  return fast_two_sum(t.hi, t.lo + p * omega_lo);
}

// pi/2 split into three doubles: P1 = RN(pi/2), P2 = RN(pi/2 - P1), P3 = RN(pi/2 - P1 - P2).
inline constexpr double kPio2_1 = 0x1.921fb54442d18p+0;
inline constexpr double kPio2_2 = 0x1.1a62633145c07p-54;
inline constexpr double kPio2_3 = -0x1.f1976b7ed8fbcp-110;
inline constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
inline constexpr double kRoundMagic = 0x1.8p52;  // adding it rounds |t| < 2^51 to an integer

// Taylor coefficients 1/n! with alternating signs, as doubles (their rounding affects only the
// O(x^3) and O(x^4) tails, by at most 2^-55 relative of the tail).
inline constexpr double kS[] = {-1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
                                1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0};
inline constexpr double kC[] = {1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600,
                                -1.0 / 87178291200.0, 1.0 / 20922789888000.0, -1.0 / 6402373705728000.0};

// sin and cos of theta_hi + theta_lo, |theta| <= 2^44.
inline void sincos_dd(double theta_hi, double theta_lo, double& s_out, double& c_out) {
  const double shifted = std::fma(theta_hi, kTwoOverPi, kRoundMagic);
  const double n = shifted - kRoundMagic;
  const std::int64_t q = static_cast<std::int64_t>(n) & 3;

  const DoubleDouble np1 = two_prod(n, kPio2_1);
  const DoubleDouble np2 = two_prod(n, kPio2_2);
  const double r0 = theta_hi - np1.hi;  // exact (Sterbenz)
  const DoubleDouble s0 = two_sum(r0, -np2.hi);
  const double small = ((theta_lo - np1.lo) - np2.lo) - n * kPio2_3;
  const DoubleDouble r = fast_two_sum(s0.hi, s0.lo + small);

  const double x = r.hi, x2 = x * x;
  double ps = kS[7];
  ps = std::fma(ps, x2, kS[6]);
  ps = std::fma(ps, x2, kS[5]);
  ps = std::fma(ps, x2, kS[4]);
  ps = std::fma(ps, x2, kS[3]);
  ps = std::fma(ps, x2, kS[2]);
  ps = std::fma(ps, x2, kS[1]);
  ps = std::fma(ps, x2, kS[0]);
  double pc = kC[7];
  pc = std::fma(pc, x2, kC[6]);
  pc = std::fma(pc, x2, kC[5]);
  pc = std::fma(pc, x2, kC[4]);
  pc = std::fma(pc, x2, kC[3]);
  pc = std::fma(pc, x2, kC[2]);
  pc = std::fma(pc, x2, kC[1]);
  pc = std::fma(pc, x2, kC[0]);

  const double hz = 0.5 * x2;
  const double w = 1.0 - hz;
  const double s = x + std::fma(x * x2, ps, r.lo * w);
  const double c = w + std::fma(x2 * x2, pc, ((1.0 - w) - hz) - r.lo * x);

  // quadrant q: (sin, cos)(r + q pi/2) = (s, c), (c, -s), (-s, -c), (-c, s)
  const bool swap = (q & 1) != 0;
  const double sin_mag = swap ? c : s;
  const double cos_mag = swap ? s : c;
  s_out = (q & 2) ? -sin_mag : sin_mag;
  c_out = ((q + 1) & 2) ? -cos_mag : cos_mag;
}

}  // namespace posenc::core
