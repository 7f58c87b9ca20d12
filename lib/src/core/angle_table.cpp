#include "angle_table.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "angle_kernels.hpp"
#include "trig.hpp"

namespace posenc::core {
namespace {

// B = 64 rows: an anchor (a full double-double sin/cos per pair) then costs 1/64 of a row. Writers read J in
// column chunks (table_writer.cpp), so its total size only matters as memory: B halves (down to 4) only for
// widths where J would exceed 64 MiB (h > 2^15 pairs).
std::size_t block_rows(std::size_t h) {
  std::size_t b = 64;
  while (b > 4 && b * h * 2 * sizeof(double) > (std::size_t{64} << 20)) b /= 2;
  return b;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

DDFrequencies geometric_frequencies(std::size_t count, double scale, double base, double num_per_k, double den) {
  // omega_k = (scale base^(-16 i num/den)) * base^(-j num/den) for k = 16 i + j: count/16 + 16 factors instead of
  // count, each expq(-(num k / den) ln base) with ln base = logq(base) computed once (expq ~0.7 us, powq ~1.6 us;
  // at d = 256 these calls were most of a plan's setup). A factor: ln base within 2^-112 relative, the quotient and
  // the product each rounded (2^-113), so the argument x is within |x| 2^-111 absolute and exp(x) within
  // |x| 2^-111 + 2^-112 (expq) <= 2^-107 relative for |x| <= 16.1 (base <= 10^7, exponent <= 1); the binary128
  // product of two factors within 2^-105.9.
  constexpr std::size_t kStep = 16;
  DDFrequencies f;
  f.hi.resize(count);
  f.lo.resize(count);
  const quad b = base, sc = scale, d = den, num = num_per_k;
  const quad ln_b = logq(b);
  auto power = [&](std::size_t k) { return expq(-(num * static_cast<quad>(k) / d) * ln_b); };
  std::array<quad, kStep> fine{};
  for (std::size_t j = 0; j < std::min(count, kStep); ++j) fine[j] = j == 0 ? 1 : power(j);
  quad coarse = sc;
  for (std::size_t k = 0; k < count; ++k) {
    if (k % kStep == 0 && k > 0) coarse = sc * power(k);
    const quad w = coarse * fine[k % kStep];
    f.hi[k] = static_cast<double>(w);
    f.lo[k] = static_cast<double>(w - static_cast<quad>(f.hi[k]));
  }
  return f;
}

AngleTable::AngleTable(DDFrequencies f)
    : f_(std::move(f)), B_(block_rows(f_.size())), j_(2 * B_ * ((f_.size() + kChunk - 1) / kChunk) * kChunk) {
  const std::size_t h = f_.size();
  AlignedBuffer<double> s(h), c(h);
  for (std::size_t j = 0; j < B_; ++j) {
    direct(static_cast<std::int64_t>(j), s.get(), c.get());
    for (std::size_t k0 = 0; k0 < h; k0 += kChunk) {
      const std::size_t n = std::min(kChunk, h - k0);
      std::copy_n(s.get() + k0, n, j_.get() + j_index(j, k0));
      std::copy_n(c.get() + k0, n, j_.get() + j_index(j, k0) + kChunk);
    }
  }
}

std::int64_t AngleTable::anchor_of(std::int64_t p) const noexcept {
  const auto B = static_cast<std::int64_t>(B_);
  return floor_div(p, B) * B;
}

// (sin, cos)(p omega_k) for k < h, vectorised by the compiler for the instruction set it is compiled for.
namespace {
inline void direct_loop(double pd, const double* hi, const double* lo, std::size_t h, double* s, double* c) noexcept {
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    const DoubleDouble t = scaled_angle(pd, hi[k], lo[k]);
    sincos_dd(t.hi, t.lo, s[k], c[k]);
  }
}
}  // namespace

void AngleTable::direct(std::int64_t p, std::size_t k0, std::size_t n, double* s, double* c) const noexcept {
  const double pd = static_cast<double>(p);  // exact: |p| <= 2^41
  if (kernels::direct(pd, f_.hi.data() + k0, f_.lo.data() + k0, n, s, c)) return;  // vector kernel (angle_kernels.cpp)
  direct_loop(pd, f_.hi.data() + k0, f_.lo.data() + k0, n, s, c);
}

void AngleTable::rotate(const double* sa, const double* ca, std::size_t j, double* s, double* c) const noexcept {
  const std::size_t h = f_.size();
  for (std::size_t k0 = 0; k0 < h; k0 += kChunk) {
    const double* sj = j_sin(j, k0) - k0;
    const double* cj = j_cos(j, k0) - k0;
    const std::size_t end = std::min(h, k0 + kChunk);
    // the vector kernel (angle_kernels.cpp), else the portable loop (a build without FMA calls fma per entry)
    if (kernels::rotate(sa + k0, ca + k0, sj + k0, cj + k0, end - k0, s + k0, c + k0)) continue;
#pragma omp simd
    for (std::size_t k = k0; k < end; ++k) {
      s[k] = std::clamp(std::fma(sa[k], cj[k], ca[k] * sj[k]), -1.0, 1.0);
      c[k] = std::clamp(std::fma(ca[k], cj[k], -(sa[k] * sj[k])), -1.0, 1.0);
    }
  }
}

}  // namespace posenc::core
