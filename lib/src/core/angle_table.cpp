#include "angle_table.hpp"

#include <quadmath.h>

#include <algorithm>
#include <cmath>

#include "trig.hpp"

namespace posenc::core {
namespace {

// Rows of J that fit in ~256 KiB of a private L2 next to the rows being written: B = pow2 in [4, 64].
std::size_t block_rows(std::size_t h) {
  std::size_t b = 64;
  while (b > 4 && b * h * 2 * sizeof(double) > (std::size_t{256} << 10)) b /= 2;
  return b;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

DDFrequencies geometric_frequencies(std::size_t count, double scale, double base, double num_per_k, double den) {
  DDFrequencies f;
  f.hi.resize(count);
  f.lo.resize(count);
  const __float128 b = base, sc = scale, d = den;
  for (std::size_t k = 0; k < count; ++k) {
    const __float128 e = static_cast<__float128>(num_per_k) * static_cast<__float128>(k) / d;
    const __float128 w = sc * powq(b, -e);
    f.hi[k] = static_cast<double>(w);
    f.lo[k] = static_cast<double>(w - static_cast<__float128>(f.hi[k]));
  }
  return f;
}

AngleTable::AngleTable(DDFrequencies f)
    : f_(std::move(f)), B_(block_rows(f_.size())), js_(B_ * f_.size()), jc_(B_ * f_.size()) {
  const std::size_t h = f_.size();
  for (std::size_t j = 0; j < B_; ++j) direct(static_cast<std::int64_t>(j), js_.get() + j * h, jc_.get() + j * h);
}

std::int64_t AngleTable::anchor_of(std::int64_t p) const noexcept {
  const auto B = static_cast<std::int64_t>(B_);
  return floor_div(p, B) * B;
}

void AngleTable::direct(std::int64_t p, double* s, double* c) const noexcept {
  const std::size_t h = f_.size();
  const double pd = static_cast<double>(p);  // exact: |p| <= 2^41
  const double* hi = f_.hi.data();
  const double* lo = f_.lo.data();
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    const DoubleDouble t = scaled_angle(pd, hi[k], lo[k]);
    sincos_dd(t.hi, t.lo, s[k], c[k]);
  }
}

void AngleTable::rotate(const double* sa, const double* ca, std::size_t j, double* s, double* c) const noexcept {
  const std::size_t h = f_.size();
  const double* sj = js_.get() + j * h;
  const double* cj = jc_.get() + j * h;
#pragma omp simd
  for (std::size_t k = 0; k < h; ++k) {
    s[k] = std::clamp(std::fma(sa[k], cj[k], ca[k] * sj[k]), -1.0, 1.0);
    c[k] = std::clamp(std::fma(ca[k], cj[k], -(sa[k] * sj[k])), -1.0, 1.0);
  }
}

void AngleTable::at(std::int64_t p, double* s, double* c, double* sa, double* ca) const noexcept {
  const std::int64_t pa = anchor_of(p);
  direct(pa, sa, ca);
  rotate(sa, ca, static_cast<std::size_t>(p - pa), s, c);
}

}  // namespace posenc::core
