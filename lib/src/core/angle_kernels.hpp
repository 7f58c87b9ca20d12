// lib/src/core/angle_kernels.hpp — the angle core's vector kernels (angle_kernels.cpp: Highway, one source for
// every target, dispatched to posenc's target, posenc/simd.hpp). Each gives the bits of the scalar code it stands
// for (trig.hpp, sincos32.cpp). On a target without vector kernels (posenc::simd_target() "scalar") each returns
// false at once and its caller runs its portable loop (compiled with the library's own flags).
#pragma once

#include <cstddef>

namespace posenc::core::kernels {

// (sin, cos)(p omega_k) for k < n, omega_k = hi[k] + lo[k]: sincos_dd(scaled_angle(p, hi[k], lo[k])), trig.hpp;
// false on a scalar target.
bool direct(double p, const double* hi, const double* lo, std::size_t n, double* s, double* c) noexcept;

// AngleTable::rotate over pairs k < n: s[k] = clamp(fma(sa, cj, ca sj)), c[k] = clamp(fma(ca, cj, -(sa sj))) to
// [-1, 1]; false on a scalar target.
bool rotate(const double* sa, const double* ca, const double* sj, const double* cj, std::size_t n, double* s,
            double* c) noexcept;

// sincos_rn32's vector pass (sincos32.hpp): s[k], c[k] = RN32(sin, cos angle[k]) as doubles for k < n when every
// entry settles (returns true); false when one does not (s, c then hold unspecified values) or on a scalar target.
bool sincos_settled(const float* angle, std::size_t n, double* s, double* c) noexcept;

// ProductSinCos32's pairs k < n of one column chunk (sincos32.hpp): (S, C) = anchor (x) J_j, corrected by
// d_k = RN32(pf w_k) - pf w_k with the polynomials of degree 5/6 (short_d: every |d| <= 2^-7) or 11/10, settled with
// the window 2^-50. True when every entry settled; false otherwise (s, c unspecified) or on a scalar target.
bool product_settled(bool short_d, float pf, const float* w, const double* sa, const double* ca, const double* sj,
                     const double* cj, std::size_t n, double* s, double* c) noexcept;

}  // namespace posenc::core::kernels
