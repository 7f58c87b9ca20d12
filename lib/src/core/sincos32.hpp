// lib/src/core/sincos32.hpp — correctly rounded float32 sin and cos of float32 angles (the emulated regimes).
//
// What an emulated implementation computes as torch.sin / np.sin / sinf of a float32 angle, each value correctly
// rounded (DESIGN.md: emulation means the named float32 steps, each correctly rounded). Shared by every emulated
// table and cache (sinusoidal t2t/fairseq rows, RoPE hf/ggml caches and rotations).
//
// Method: sin/cos of the angle in double by the angle core's sincos_dd (within 2^-53 + 2^-58 absolute, trig.hpp);
// when both ends of that error interval round to the same float, that float is the correctly rounded value
// ("settled"). Otherwise (rare: near a float32 midpoint, or a value so small that 2^-52 spans several float32
// ulps) the value is recomputed with binary128 sinq/cosq (libquadmath reduces large arguments exactly), whose
// error ~2^-112 relative cannot straddle a float32 midpoint unless the value lies within that distance of it.
// |a| < 2^-12 (position 0, where every sine is 0 and would never settle): sin a = a - a^3/6 + ... lies within
// |a|^3 / 6 < |a| 2^-26 below a, less than half the float32 gap below |a| (>= |a| 2^-25), so RN32(sin a) = a;
// 1 - cos a <= a^2 / 2 < 2^-25, half the gap below 1, so RN32(cos a) = 1.
// The AVX-512 variant decides all n entries in vectors; only a call with an unsettled entry runs the scalar
// pass. Both give the same values.
#pragma once

#include <cstddef>

namespace posenc::core {

// s[k], c[k] = RN32(sin angle[k]), RN32(cos angle[k]) as doubles, k < n; s and c need room for n values.
void sincos_rn32(const float* angle, std::size_t n, double* s, double* c) noexcept;

}  // namespace posenc::core
