// ALiBi fast path: slopes per regime (binary128, each emulated step rounded as the named code rounds it), bias rows
// as slices of one per-head vector, scores as bias rows plus a beta = 1 gemm. Definition: posenc/alibi_spec.hpp.
#include "posenc/alibi.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "core/bias_rows.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "alibi";

// ---- slopes ---------------------------------------------------------------------------------------------

// Exponent e of head h: m_h = 2^(-b e), e = (h+1)/c (h < c) or (2j+1)/(2c) (h = c + j).
struct Exponent {
  std::uint64_t num, den;
};
Exponent slope_exponent(std::size_t n, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(n);
  if (h < c) return {h + 1, c};
  return {2 * (h - c) + 1, 2 * c};
}

// RN64(2^(-8/c)) as Python's 2**(-(2**-(log2(c)-3))) computes it (the exponent is exact for a power of two c).
double python_start(std::size_t c) {
  return static_cast<double>(exp2q(static_cast<quad>(-8.0) / static_cast<quad>(c)));
}

// get_slopes(n)[h] in Python floats: start * start**i over the list of c' = c (h < c) or 2c (every other entry:
// i = 2j), c = 2**floor(log2(n)).
double get_slope(std::size_t n, std::size_t h) {
  const std::size_t c = alibi_power_of_two_floor(n);
  const bool extra = h >= c;
  const double start = python_start(extra ? 2 * c : c);
  const auto i = static_cast<quad>(extra ? 2 * (h - c) : h);
  const double power = static_cast<double>(powq(static_cast<quad>(start), i));
  return start * power;
}

struct Slope {
  double hi = 0, lo = 0;  // exact regime: m = hi + lo; emulated: hi = the float32 slope, lo = 0
  float f32 = 0;          // emulated regimes: the float32 slope
};

Slope exact_slope(const AlibiSpec& s, std::size_t h) {
  const Exponent e = slope_exponent(s.heads, h);
  const quad m = exp2q(-(static_cast<quad>(s.bias_max) * static_cast<quad>(e.num)) /
                             static_cast<quad>(e.den));
  Slope out;
  out.hi = static_cast<double>(m);
  out.lo = static_cast<double>(m - static_cast<quad>(out.hi));
  return out;
}

float emulated_slope(const AlibiSpec& s, std::size_t h) {
  const std::size_t n = s.heads, c = alibi_power_of_two_floor(n);
  switch (s.regime) {
    case AlibiRegime::ofirpress: return static_cast<float>(get_slope(n, h));  // torch.Tensor(get_slopes(n))
    case AlibiRegime::bloom: {
      // base = float32(2**(-8/c)), slopes torch.pow(base, 1..c); extra_base = float32(2**(-4/c)), powers 1, 3, ...
      const bool extra = h >= c;
      const auto base = static_cast<float>(python_start(extra ? 2 * c : c));
      const auto k = static_cast<quad>(extra ? 2 * (h - c) + 1 : h + 1);
      return static_cast<float>(powq(static_cast<quad>(base), k));
    }
    case AlibiRegime::mpt: {
      // P = 2^ceil(log2 n); base_t = float32(t) * float32(b / P); slopes 1 / 2^base_t; reordered (2, 4, ..., 1, 3, ...)
      // when n is not a power of two (then P = 2c).
      const std::size_t P = c == n ? n : 2 * c;
      const std::size_t t = c == n ? h + 1 : (h < c ? 2 * (h + 1) : 2 * (h - c) + 1);
      const auto step = static_cast<float>(s.bias_max / static_cast<double>(P));
      const float e = static_cast<float>(t) * step;
      const auto p = static_cast<float>(exp2q(static_cast<quad>(e)));
      return 1.0f / p;
    }
    case AlibiRegime::exact: break;
  }
  return 0.0f;
}

// ---- values ---------------------------------------------------------------------------------------------

// The bias at multiplier x (exact: m x rounded once; emulated: RN32(RN32(x) * slope32)).
template <class T>
inline T value(const Slope& m, bool exact, std::int64_t x) {
  if (exact) {
    const double xd = static_cast<double>(x);  // exact: |x| < 2^31
    const double p = m.hi * xd;
    const double e = std::fma(m.hi, xd, -p) + m.lo * xd;
    return static_cast<T>(p + e);
  }
  return static_cast<T>(static_cast<float>(x) * m.f32);
}

// v[t] = value(x0 + t), t < n (the branch on the regime is hoisted out of the loop by the compiler).
template <class T>
void fill_values(T* v, std::size_t n, const Slope& m, bool exact, std::int64_t x0) {
  for (std::size_t t = 0; t < n; ++t) v[t] = value<T>(m, exact, x0 + static_cast<std::int64_t>(t));
}

}  // namespace

// ---- plan -----------------------------------------------------------------------------------------------

struct AlibiPlan::Impl {
  AlibiSpec spec;
  bool exact = true;
  std::vector<Slope> slope;
  std::vector<double> slopes;  // what slopes() returns

  explicit Impl(const AlibiSpec& s) : spec(s), exact(s.regime == AlibiRegime::exact) {
    slope.resize(s.heads);
    slopes.resize(s.heads);
    for (std::size_t h = 0; h < s.heads; ++h) {
      if (exact) {
        slope[h] = exact_slope(s, h);
      } else {
        slope[h].f32 = emulated_slope(s, h);
        slope[h].hi = slope[h].f32;
      }
      slopes[h] = slope[h].hi;
    }
  }
};

namespace {

std::size_t checked_size(const AlibiSpec& s, const BiasGeometry& g) { return core::check_bias_geometry(kWhere, s.heads, g); }

template <class T>
void bias_impl(const AlibiPlan::Impl& P, const BiasGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t total = checked_size(P.spec, g);
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::size_t Lk = g.key_length;
  const AlibiVariant var = P.spec.variant;
  const bool per_key = var == AlibiVariant::key || var == AlibiVariant::key_shifted || var == AlibiVariant::key_counted;

  // key_counted's positions c_j (cumsum(mask) - 1) * mask.
  std::vector<std::int64_t> counted;
  if (var == AlibiVariant::key_counted) {
    counted.resize(Lk);
    std::int64_t run = 0;
    for (std::size_t j = 0; j < Lk; ++j) {
      const std::int64_t m = g.key_mask.empty() ? 1 : g.key_mask[j];
      run += m;
      counted[j] = (run - 1) * m;
    }
  }
  const auto last = -static_cast<std::int64_t>(Lk - 1);
  auto build = [&](std::size_t h, T* E, std::size_t n) {
    const Slope& m = P.slope[h];
    if (var == AlibiVariant::key) {
      fill_values(E, n, m, P.exact, 0);
    } else if (var == AlibiVariant::key_shifted) {
      fill_values(E, n, m, P.exact, last);
    } else if (var == AlibiVariant::key_counted) {
      for (std::size_t j = 0; j < n; ++j) E[j] = value<T>(m, P.exact, counted[j]);
    } else {
      // Toeplitz: E[t] = the bias of a key t - (Lk - 1) positions after the query: m (t - (Lk - 1)) up to the
      // query; beyond it relative 0, symmetric the mirror value E[2 (Lk - 1) - t].
      fill_values(E, std::min(n, Lk), m, P.exact, last);
      if (var == AlibiVariant::relative) std::fill(E + std::min(n, Lk), E + n, T(0));
      else
        for (std::size_t t = Lk; t < n; ++t) E[t] = E[2 * (Lk - 1) - t];
    }
  };
  core::write_bias_rows(P.spec.heads, g, per_key ? core::RowShape::per_key : core::RowShape::toeplitz, build, out, o);
}

template <class T>
void scores_impl(const AlibiPlan& plan, const AlibiPlan::Impl& P, std::span<const T> q, std::span<const T> k,
                 std::size_t d, const BiasGeometry& g, double scale, std::span<T> out, const TableOptions& o) {
  core::fused_scores(kWhere, P.spec.heads, q, k, d, g, scale, out, [&](std::span<T> o_) { plan.bias(g, o_, o); });
}

}  // namespace

AlibiPlan::AlibiPlan(const AlibiSpec& spec) {
  validate(spec);
  impl_ = std::make_shared<const Impl>(spec);
}
const AlibiSpec& AlibiPlan::spec() const noexcept { return impl_->spec; }
std::span<const double> AlibiPlan::slopes() const noexcept { return impl_->slopes; }

void AlibiPlan::bias(const BiasGeometry& g, std::span<float> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }
void AlibiPlan::bias(const BiasGeometry& g, std::span<double> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }

void AlibiPlan::scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry& g,
                       double scale, std::span<float> out, const TableOptions& o) const {
  scores_impl(*this, *impl_, q, k, head_dim, g, scale, out, o);
}
void AlibiPlan::scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim,
                       const BiasGeometry& g, double scale, std::span<double> out, const TableOptions& o) const {
  scores_impl(*this, *impl_, q, k, head_dim, g, scale, out, o);
}

namespace {
void check_value_args(const AlibiSpec& s, std::size_t head, std::int64_t x) {
  if (head >= s.heads)
    throw Error(kWhere, "head", std::to_string(head), "an integer in [0, heads - 1 = " + std::to_string(s.heads - 1) + "]");
  if (x <= -kAlibiMaxLength || x >= kAlibiMaxLength)
    throw Error(kWhere, "x", std::to_string(x), "an integer with |x| < 2^31 (key positions and distances)");
}
}  // namespace

float AlibiPlan::bias_value_f32(std::size_t head, std::int64_t x) const {
  check_value_args(impl_->spec, head, x);
  return value<float>(impl_->slope[head], impl_->exact, x);
}
double AlibiPlan::bias_value_f64(std::size_t head, std::int64_t x) const {
  check_value_args(impl_->spec, head, x);
  return value<double>(impl_->slope[head], impl_->exact, x);
}

std::size_t alibi_bias_size(const AlibiSpec& s, const BiasGeometry& g) {
  validate(s);
  return checked_size(s, g);
}

std::vector<double> alibi_get_slopes(std::size_t n) {
  if (n < 1 || n > kAlibiMaxHeads)
    throw Error(kWhere, "heads", std::to_string(n), "an integer in [1, " + std::to_string(kAlibiMaxHeads) + "]");
  std::vector<double> m(n);
  for (std::size_t h = 0; h < n; ++h) m[h] = get_slope(n, h);
  return m;
}

std::vector<double> alibi_slopes(const AlibiSpec& s) {
  const AlibiPlan p(s);
  return {p.slopes().begin(), p.slopes().end()};
}
void alibi_bias(const AlibiSpec& s, const BiasGeometry& g, std::span<float> out, const TableOptions& o) {
  AlibiPlan(s).bias(g, out, o);
}
void alibi_bias(const AlibiSpec& s, const BiasGeometry& g, std::span<double> out, const TableOptions& o) {
  AlibiPlan(s).bias(g, out, o);
}

}  // namespace posenc
