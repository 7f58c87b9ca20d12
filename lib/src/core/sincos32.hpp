// lib/src/core/sincos32.hpp — correctly rounded float32 sin and cos of float32 angles (the emulated regimes).
//
// What an emulated implementation computes as torch.sin / np.sin / sinf of a float32 angle, each value correctly
// rounded (DESIGN.md: emulation means the named float32 steps, each correctly rounded). Shared by every emulated
// table and cache (sinusoidal t2t/fairseq rows, RoPE hf/ggml caches and rotations).
//
// Method: sin/cos of the angle in double by the angle core's sincos_dd (within 2^-53 + 2^-58 absolute, trig.hpp);
// when both ends of that error interval round to the same float, that float is the correctly rounded value
// ("settled"). Otherwise (rare: near a float32 midpoint, or a value so small that 2^-52 spans several float32
// ulps) the value is recomputed with binary128 sinq/cosq (libquadmath or glibc reduce large arguments exactly), whose
// error ~2^-112 relative cannot straddle a float32 midpoint unless the value lies within that distance of it.
// |a| < 2^-12 (position 0, where every sine is 0 and would never settle): sin a = a - a^3/6 + ... lies within
// |a|^3 / 6 < |a| 2^-26 below a, less than half the float32 gap below |a| (>= |a| 2^-25), so RN32(sin a) = a;
// 1 - cos a <= a^2 / 2 < 2^-25, half the gap below 1, so RN32(cos a) = 1.
// The vector kernel (angle_kernels.cpp, every SIMD target) decides all n entries in vectors; only a call with an
// unsettled entry, or a scalar target, runs the scalar pass. Both give the same values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "angle_table.hpp"

namespace posenc::core {

// s[k], c[k] = RN32(sin angle[k]), RN32(cos angle[k]) as doubles, k < n; s and c need room for n values.
void sincos_rn32(const float* angle, std::size_t n, double* s, double* c) noexcept;

// The rows of an emulated implementation whose angles are float32 products, a_k = RN32(RN32(p) w_k) with float32
// frequencies w_k (tensor2tensor, fairseq, PyTorch's paper forms, HF RoPE's `position_ids.float() * inv_freq`):
// s[k], c[k] = RN32(sin a_k), RN32(cos a_k), the same values as sincos_rn32 of those angles (both are correctly
// rounded), ~1.5x faster (0.89 vs 1.33 ns per pair, d 512, this Zen 5 VM: the reduction and the long polynomials
// are replaced by the angle core's complex multiply and short ones; the settle test stays). Vector targets only
// (angle_kernels.cpp): on a scalar target every row takes the sincos_rn32 path. (The same correction applies to any float32
// angles near p omega_k, e.g. ggml's chained products: measured only ~15% faster there, not adopted.)
//
// Method. For |p| < 2^24, x_k = p w_k is exact in double (24 x 24 bits) and d_k = a_k - x_k is exact (Sterbenz: a_k
// = RN32(x_k) lies within a factor 2 of x_k) with |d_k| <= ulp32(a_k) / 2. (sin, cos)(x_k) comes from the angle core
// (angle_table.hpp) for the frequencies w_k held exactly: anchor (x) J_j, within E = 4.51 * 2^-53 absolute. Then
//     sin a = S + (S (cos d - 1) + C sin d),     cos a = C + (C (cos d - 1) - S sin d)
// with Taylor polynomials of d to d^11 (sin) and d^10 (cos - 1), valid for |d| <= 2^-3, i.e. |a| < 2^22 (the
// first omitted terms are below 2^-64); rows whose angles are all below 2^18 (|d| <= 2^-7) use d^5 and d^6 (first
// omitted terms below 2^-61). Error: E (cos d + |sin d|) <= 1.117 E = 5.04 * 2^-53 from S and C, the
// final addition 2^-54, the correction term's roundings <= 3 * 2^-57 (|S sin d|, |C sin d|, |cos d - 1| <= 2^-3):
// at most 5.8 * 2^-53 absolute. The value is settled when both ends of the interval +-2^-50 (> 5.8 * 2^-53) round
// to the same float, as in sincos_rn32; a row with an entry that does not settle (rare), with |p| >= 2^24 or with
// (|p| + B) max w_k >= 2^22 is computed by sincos_rn32 from the angles instead.
class ProductSinCos32 {
 public:
  // May throw std::bad_alloc (call it outside parallel regions).
  explicit ProductSinCos32(std::vector<float> w);
  std::size_t pairs() const noexcept { return w_.size(); }

  // Per-thread scratch: the angle core's anchor values, kept while consecutive rows share an anchor.
  class State {
   public:
    explicit State(std::size_t h) : sa_(h), ca_(h), angle_(h) {}

   private:
    friend class ProductSinCos32;
    AlignedBuffer<double> sa_, ca_;
    AlignedBuffer<float> angle_;
    std::int64_t anchor_ = std::numeric_limits<std::int64_t>::min();
  };

  // s[k], c[k] (k < pairs()) of position p, as doubles.
  void row(std::int64_t p, State& st, double* s, double* c) const noexcept {
    row(p, st.sa_.get(), st.ca_.get(), st.anchor_, st.angle_.get(), s, c);
  }
  // The same with the caller's scratch: sa, ca (pairs() doubles) hold the values of anchor `anchor` (updated when p
  // has another; start with INT64_MIN), angle (pairs() floats) is overwritten.
  void row(std::int64_t p, double* sa, double* ca, std::int64_t& anchor, float* angle, double* s, double* c) const noexcept;

 private:
  std::vector<float> w_;
  double w_max_ = 0;                  // max |w_k| (infinite or NaN: no fast path)
  std::optional<AngleTable> table_;   // only where some position can take the fast path
  double reach(std::int64_t p) const noexcept;
  bool fast(std::int64_t p) const noexcept;
};

}  // namespace posenc::core
