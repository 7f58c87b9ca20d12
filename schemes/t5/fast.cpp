// T5 relative attention bias fast path: per-side bucket thresholds found once per plan (exact regime: binary128
// with an exact GMP comparison where the real value is within 2^-80 of an integer; hf: the float32 steps), rows and
// scores through the shared bias machinery (core/bias_rows.hpp). Definition: posenc/t5_spec.hpp.
#include "posenc/t5.hpp"

#include <gmp.h>
#include "core/binary128.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/bias_rows.hpp"
#include "core/rn32.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "t5";
constexpr std::int64_t kMaxR = (std::int64_t{1} << 31) - 1;

// a^N me^t >= md^t me^N, in exact integers (v(a) >= t, with N = n - me).
bool reaches_exact(std::int64_t a, std::int64_t me, std::int64_t md, unsigned long N, unsigned long t) {
  mpz_t l, r, x;
  mpz_inits(l, r, x, nullptr);
  mpz_ui_pow_ui(l, static_cast<unsigned long>(a), N);
  mpz_ui_pow_ui(x, static_cast<unsigned long>(me), t);
  mpz_mul(l, l, x);
  mpz_ui_pow_ui(r, static_cast<unsigned long>(md), t);
  mpz_ui_pow_ui(x, static_cast<unsigned long>(me), N);
  mpz_mul(r, r, x);
  const bool ge = mpz_cmp(l, r) >= 0;
  mpz_clears(l, r, x, nullptr);
  return ge;
}

// L(a) = floor(ln(a / me) / ln(md / me) N) for a >= me, exactly (t5_spec.hpp, exact regime).
std::int64_t level_exact(std::int64_t a, std::int64_t me, std::int64_t md, std::int64_t N) {
  const quad v = logq(static_cast<quad>(a) / me) / logq(static_cast<quad>(md) / me) * N;
  const quad t = roundq(v);
  // |v - V| <= ~2^-100 (two logq within 2^-112 relative, |V| <= N <= 2^15); decide near integers exactly
  if (fabsq(v - t) > static_cast<quad>(0x1p-80)) return static_cast<std::int64_t>(floorq(v));
  const auto ti = static_cast<std::int64_t>(t);
  if (ti <= 0) return 0;  // v >= 0 for a >= me: floor(v) = 0 when v is near 0 (v = 0 at a = me)
  return reaches_exact(a, me, md, static_cast<unsigned long>(N), static_cast<unsigned long>(ti)) ? ti : ti - 1;
}

// L(a) in HF's float32 steps (t5_spec.hpp, hf regime).
std::int64_t level_hf(std::int64_t a, float me32, float den32, float N32) {
  const float x = static_cast<float>(a) / me32;
  const float l = core::rn32_log(x);
  const float y = l / den32;
  const float z = y * N32;
  return static_cast<std::int64_t>(z);  // .to(torch.long): truncation (z >= 0 here)
}

}  // namespace

struct T5Plan::Impl {
  T5Spec spec;
  T5Weights weights;
  std::int64_t n = 0, me = 0, md = 0;
  std::vector<std::int64_t> thresholds;  // thresholds[t - 1]: first a of bucket me + t within a side

  Impl(const T5Spec& s, const T5Weights& w) : spec(s), weights(w) {
    n = static_cast<std::int64_t>(t5_side_buckets(s));
    me = static_cast<std::int64_t>(t5_max_exact(s));
    md = s.max_distance;
    const std::int64_t N = n - me;
    // level(a) of the regime, non-decreasing in a; level(md) >= N - 1 in both regimes (exact: N; hf: z within a few
    // ulps of N), so every threshold lies in [me, md].
    const float me32 = static_cast<float>(me), N32 = static_cast<float>(N);
    const float den32 = static_cast<float>(std::log(static_cast<double>(md) / static_cast<double>(me)));
    auto level = [&](std::int64_t a) {
      return s.regime == T5Regime::exact ? level_exact(a, me, md, N) : level_hf(a, me32, den32, N32);
    };
    thresholds.resize(static_cast<std::size_t>(std::max<std::int64_t>(N - 1, 0)));
    const quad ln_ratio = logq(static_cast<quad>(md) / me);
    std::int64_t lo = me;
    for (std::int64_t t = 1; t < N; ++t) {
      // The least a in [lo, md] with level(a) >= t: near x_t = me (md / me)^(t / N), where the real value reaches
      // t; searched in a window around it when level confirms the window holds it, else in all of [lo, md].
      const auto x = static_cast<double>(me * expq(ln_ratio * t / N));
      std::int64_t a = std::clamp<std::int64_t>(static_cast<std::int64_t>(x * (1 - 0x1p-16)) - 2, lo, md);
      std::int64_t b = std::clamp<std::int64_t>(static_cast<std::int64_t>(x * (1 + 0x1p-16)) + 2, lo, md);
      if (!(level(b) >= t && (a == lo || level(a - 1) < t))) a = lo, b = md;
      while (a < b) {  // binary search: level is non-decreasing
        const std::int64_t mid = a + (b - a) / 2;
        if (level(mid) >= t) b = mid; else a = mid + 1;
      }
      thresholds[static_cast<std::size_t>(t - 1)] = a;
      lo = a;
    }
  }

  // The bucket within a side of distance a >= 0.
  std::int64_t side_bucket(std::int64_t a) const {
    if (a < me) return a;
    return me + (std::upper_bound(thresholds.begin(), thresholds.end(), a) - thresholds.begin());
  }
  std::int32_t bucket(std::int64_t r) const {
    if (spec.bidirectional) return static_cast<std::int32_t>((r > 0 ? n : 0) + side_bucket(r < 0 ? -r : r));
    return static_cast<std::int32_t>(side_bucket(r < 0 ? -r : 0));
  }
};

namespace {

// The Toeplitz vector of a call: E[t] for a key u = t - (Lk - 1) positions after the query (posenc/bias_rows.hpp),
// as the bucket of u (index) or the table entry of head h.
template <class T, class Value>
void write_rows(const T5Plan::Impl& P, std::size_t H, const BiasGeometry& g, std::span<T> out, const TableOptions& o,
                Value&& value) {
  const std::size_t Lk = g.key_length;
  auto build = [&](std::size_t h, T* E, std::size_t m) {
    for (std::size_t t = 0; t < m; ++t) E[t] = value(h, P.bucket(static_cast<std::int64_t>(t) - static_cast<std::int64_t>(Lk - 1)));
  };
  core::write_bias_rows(H, g, core::RowShape::toeplitz, build, out, o);
}

template <class T>
void bias_impl(const T5Plan::Impl& P, const BiasGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t total = core::check_bias_geometry(kWhere, P.spec.heads, g);
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  const std::size_t H = P.spec.heads;
  write_rows(P, H, g, out, o, [&](std::size_t h, std::int32_t b) {
    return static_cast<T>(P.weights.table[static_cast<std::size_t>(b) * H + h]);
  });
}

}  // namespace

T5Plan::T5Plan(const T5Spec& spec, const T5Weights& weights) {
  validate(spec);
  check_t5_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const T5Spec& T5Plan::spec() const noexcept { return impl_->spec; }
const T5Weights& T5Plan::weights() const noexcept { return impl_->weights; }
std::span<const std::int64_t> T5Plan::thresholds() const noexcept { return impl_->thresholds; }

std::int32_t T5Plan::bucket(std::int64_t r) const {
  if (r < -kMaxR || r > kMaxR)
    throw Error(kWhere, "r", std::to_string(r), "a relative position j - i with |r| <= 2^31 - 1");
  return impl_->bucket(r);
}

void T5Plan::buckets(const BiasGeometry& g, std::span<std::int32_t> out, const TableOptions& o) const {
  core::write_index_rows(kWhere, g, out, o, [&](std::int64_t u) { return impl_->bucket(u); });
}

void T5Plan::bias(const BiasGeometry& g, std::span<float> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }
void T5Plan::bias(const BiasGeometry& g, std::span<double> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }

void T5Plan::scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry& g,
                    double scale, std::span<float> out, const TableOptions& o) const {
  core::fused_scores(kWhere, impl_->spec.heads, q, k, head_dim, g, scale, out, [&](std::span<float> b) { bias(g, b, o); });
}
void T5Plan::scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry& g,
                    double scale, std::span<double> out, const TableOptions& o) const {
  core::fused_scores(kWhere, impl_->spec.heads, q, k, head_dim, g, scale, out, [&](std::span<double> b) { bias(g, b, o); });
}

std::size_t t5_bias_size(const T5Spec& s, const BiasGeometry& g) {
  validate(s);
  return core::check_bias_geometry(kWhere, s.heads, g);
}

std::int32_t t5_bucket(const T5Spec& s, std::int64_t r) {
  validate(s);
  T5Weights w{std::vector<double>(s.num_buckets * s.heads, 0.0)};
  return T5Plan(s, w).bucket(r);
}

}  // namespace posenc
