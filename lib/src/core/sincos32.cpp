#include "sincos32.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <cmath>

#include "angle_kernels.hpp"
#include "trig.hpp"

namespace posenc::core {
namespace {

constexpr double kSettle = 0x1p-52;  // > 2^-53 + 2^-58, the double values' error bound (trig.hpp)
constexpr float kTiny = 0x1p-12f;

inline bool settles(double v) { return static_cast<float>(v - kSettle) == static_cast<float>(v + kSettle); }

// Entry k, scalar, from the double values: the settled float, or binary128's.
inline void finish(float a, double& s, double& c) noexcept {
  if (std::fabs(a) < kTiny) {
    s = a, c = 1.0;
    return;
  }
  s = settles(s) ? static_cast<float>(s) : static_cast<float>(sinq(static_cast<quad>(a)));
  c = settles(c) ? static_cast<float>(c) : static_cast<float>(cosq(static_cast<quad>(a)));
}

void portable(const float* angle, std::size_t n, double* s, double* c) noexcept {
#pragma omp simd
  for (std::size_t k = 0; k < n; ++k) sincos_dd(static_cast<double>(angle[k]), 0.0, s[k], c[k]);
  for (std::size_t k = 0; k < n; ++k) finish(angle[k], s[k], c[k]);
}

// ---- ProductSinCos32 (sincos32.hpp gives the method and the error bound) ----------------------------------

constexpr double kReach = 0x1p22;        // |a| < 2^22: |d| <= ulp32(a) / 2 <= 2^-3
constexpr double kShortReach = 0x1p18;   // |a| < 2^18: |d| <= 2^-7, shorter polynomials

}  // namespace

// The vector kernel decides all n entries (angle_kernels.cpp); a call with an entry that does not settle, or on a
// scalar target, runs the portable loop (the same values).
void sincos_rn32(const float* angle, std::size_t n, double* s, double* c) noexcept {
  if (kernels::sincos_settled(angle, n, s, c)) return;
  portable(angle, n, s, c);
}

ProductSinCos32::ProductSinCos32(std::vector<float> w) : w_(std::move(w)) {
  for (float v : w_) w_max_ = std::isfinite(v) ? std::max(w_max_, static_cast<double>(std::fabs(v))) : HUGE_VAL;
  // J's angles j w_k (j < B <= 64) must stay in the core's range; beyond 2^16 no position has |a| < 2^22 anyway.
  if (w_max_ < 0x1p16)
    table_.emplace(DDFrequencies{std::vector<double>(w_.begin(), w_.end()), std::vector<double>(w_.size(), 0.0)});
}

// (|p| + B) max w_k: a bound on every angle of p's row and of its anchor's.
double ProductSinCos32::reach(std::int64_t p) const noexcept {
  return static_cast<double>((p < 0 ? -p : p) + static_cast<std::int64_t>(table_->block())) * w_max_;
}

bool ProductSinCos32::fast(std::int64_t p) const noexcept {
  if (!table_ || p <= -(std::int64_t{1} << 24) || p >= (std::int64_t{1} << 24)) return false;
  return reach(p) < kReach;  // every angle of the row, and its anchor's, below 2^22
}

void ProductSinCos32::row(std::int64_t p, double* sa, double* ca, std::int64_t& anchor, float* angle, double* s,
                          double* c) const noexcept {
  const std::size_t h = w_.size();
  const float pf = static_cast<float>(p);  // RN32(p): exact on the fast path
  if (fast(p)) {
    const std::int64_t pa = table_->anchor_of(p);
    if (pa != anchor) {
      table_->direct(pa, sa, ca);
      anchor = pa;
    }
    const auto j = static_cast<std::size_t>(p - pa);
    bool ok = true;  // a scalar target's kernel returns false at once: the angles' path below
    const bool short_d = reach(p) < kShortReach;
    for (std::size_t k0 = 0; k0 < h && ok; k0 += AngleTable::kChunk)
      ok = kernels::product_settled(short_d, pf, w_.data() + k0, sa + k0, ca + k0, table_->j_sin(j, k0),
                                    table_->j_cos(j, k0), std::min(AngleTable::kChunk, h - k0), s + k0, c + k0);
    if (ok) return;
  }
  for (std::size_t k = 0; k < h; ++k) angle[k] = pf * w_[k];
  sincos_rn32(angle, h, s, c);
}

}  // namespace posenc::core
