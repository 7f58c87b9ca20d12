// FIRE fast path. Per call: the numerators l(d) = ln(|c| d + 1) once per distance, the denominators once per row, the
// rows at or below the threshold (one function of d) once per head; then per entry x = l / den and the MLP, in chunks
// the compiler vectorises (k outer, keys inner; the same operations in the same order as the scalar value, so a
// matrix entry and bias_value agree bit for bit). Exact float outputs re-evaluate in binary128 where the double lies
// near a float rounding boundary. Rows and scores through the shared bias machinery (core/bias_rows.hpp).
// Definition: posenc/fire_spec.hpp.
#include "posenc/fire.hpp"

#include "core/binary128.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "core/bias_rows.hpp"
#include "core/rn32.hpp"

namespace posenc {
namespace {

constexpr const char* kWhere = "fire";
constexpr std::size_t kChunk = 256;  // entries per MLP chunk (stack buffers; keys inner, vectorised)

// Relative error of the double x (two log1p within 1 ulp, the products |c| d and |c| N, the sum + eps and the
// quotient) is below 10 u; the MLP in double then stays within (w + 16) u S (budget.cpp, row fire.bias.exact.f64).
constexpr double kU64 = 0x1p-53;

}  // namespace

struct FirePlan::Impl {
  FireSpec spec;
  FireWeights weights;
  std::size_t H = 0, w = 0;
  bool cramming = false;
  // cramming: float32 weights, |c32|, the threshold and eps as float32.
  float c32 = 0, thr32 = 0, e32 = 0;
  bool unfused = false;  // cramming: mlp_sum unfused (each product rounded, then added) instead of an fma chain
  std::vector<float> w1f, b1f, w2f, b2f;
  // exact: |c|, the threshold |L_multiplier init_L| = thr_hi + thr_lo exactly, and the error scale of head h:
  // S(x) = P[h] + x Q[h] with P = |b2| + sum |W2 b1|, Q = sum |W2 W1| (exact regime's bound (w + 16) u S).
  double abs_c = 0, thr_hi = 0, thr_lo = 0;
  std::vector<double> P, Q;

  Impl(const FireSpec& s, const FireWeights& wt) : spec(s), weights(wt), H(s.heads), w(s.mlp_width) {
    cramming = s.regime == FireRegime::cramming;
    unfused = s.mlp_sum == FireMlpSum::unfused;
    auto f32 = [](const std::vector<double>& v) {
      std::vector<float> r(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) r[i] = static_cast<float>(v[i]);
      return r;
    };
    w1f = f32(wt.w1);
    b1f = f32(wt.b1);
    w2f = f32(wt.w2);
    b2f = f32(wt.b2);
    c32 = std::fabs(static_cast<float>(wt.c));  // |RN32(c32 D)| = RN32(|c32| |D|): rounding is symmetric
    thr32 = std::fabs(static_cast<float>(wt.L_multiplier) * static_cast<float>(wt.init_L));
    e32 = static_cast<float>(s.eps);
    abs_c = std::fabs(wt.c);
    const double lm = std::fabs(wt.L_multiplier), il = std::fabs(wt.init_L);
    thr_hi = lm * il;
    thr_lo = std::fma(lm, il, -thr_hi);  // exact remainder (both |v| <= 1e6: no underflow issue that matters)
    P.assign(H, 0.0);
    Q.assign(H, 0.0);
    for (std::size_t h = 0; h < H; ++h) {
      double p = std::fabs(wt.b2[h]), q = 0;
      for (std::size_t k = 0; k < w; ++k) {
        p += std::fabs(wt.w2[h * w + k] * wt.b1[k]);
        q += std::fabs(wt.w2[h * w + k] * wt.w1[k]);
      }
      P[h] = p * (1 + 0x1p-40);  // rounded up (w + 1 terms, relative error < (w + 2) u << 2^-40)
      Q[h] = q * (1 + 0x1p-40);
    }
  }

  // ---- the normalized distance ---------------------------------------------------------------------------------
  // Whether row q's normalizer is the threshold (max(q, L) = L).
  bool at_threshold(std::int64_t q) const {
    if (cramming) return static_cast<float>(q) <= thr32;
    const auto qd = static_cast<double>(q);
    return qd < thr_hi || (qd == thr_hi && thr_lo >= 0);
  }
  float l32(std::int64_t d) const {
    const float t = c32 * static_cast<float>(d);
    return core::rn32_log(t + 1.0f);
  }
  float den32(std::int64_t q) const {
    const float N = std::max(static_cast<float>(q), thr32);
    const float t = c32 * N;
    return core::rn32_log(t + 1.0f) + e32;
  }
  double l64(std::int64_t d) const { return std::log1p(abs_c * static_cast<double>(d)); }
  double den64(std::int64_t q) const {
    const double N = at_threshold(q) ? thr_hi : static_cast<double>(q);
    return std::log1p(abs_c * N) + spec.eps;
  }
  quad x128(std::int64_t q, std::int64_t d) const {
    const quad N = at_threshold(q) ? static_cast<quad>(thr_hi) + thr_lo : static_cast<quad>(q);
    const quad c = abs_c;
    return log1pq(c * static_cast<quad>(d)) / (log1pq(c * N) + static_cast<quad>(spec.eps));
  }

  // ---- the MLP ---------------------------------------------------------------------------------------------
  // ys[t] = MLP_h(xs[t]) for t < m (m <= kChunk), the regime's arithmetic: cramming float32 (h = x W1 + b1 rounded
  // twice, acc = fma(r, W2, acc) or, mlp_sum unfused, acc = acc + RN32(r W2), + b2); exact double (h = fma(W1, x,
  // b1), acc = fma(r, W2, acc), + b2). lib/ is built with -ffp-contract=off: acc + r * c stays two roundings.
  template <class F>
  void mlp(std::size_t h, const F* xs, F* ys, std::size_t m) const {
    alignas(64) F acc[kChunk];
    for (std::size_t t = 0; t < m; ++t) acc[t] = 0;
    for (std::size_t k = 0; k < w; ++k) {
      if constexpr (std::is_same_v<F, float>) {
        const float a = w1f[k], b = b1f[k], c = w2f[h * w + k];
        if (unfused) {
#pragma omp simd
          for (std::size_t t = 0; t < m; ++t) {
            float v = xs[t] * a;
            v = v + b;
            const float r = v > 0.0f ? v : 0.0f;
            const float p = r * c;
            acc[t] = acc[t] + p;
          }
          continue;
        }
#pragma omp simd
        for (std::size_t t = 0; t < m; ++t) {
          float v = xs[t] * a;
          v = v + b;
          const float r = v > 0.0f ? v : 0.0f;
          acc[t] = std::fma(r, c, acc[t]);
        }
      } else {
        const double a = weights.w1[k], b = weights.b1[k], c = weights.w2[h * w + k];
#pragma omp simd
        for (std::size_t t = 0; t < m; ++t) {
          const double v = std::fma(a, xs[t], b);
          const double r = v > 0.0 ? v : 0.0;
          acc[t] = std::fma(r, c, acc[t]);
        }
      }
    }
    const F b2 = std::is_same_v<F, float> ? static_cast<F>(b2f[h]) : static_cast<F>(weights.b2[h]);
    for (std::size_t t = 0; t < m; ++t) ys[t] = acc[t] + b2;
  }

  // The exact bias in binary128 (the fallback of exact float outputs).
  quad exact_q(std::size_t h, std::int64_t q, std::int64_t d) const {
    const quad x = x128(q, d);
    quad acc = 0;
    for (std::size_t k = 0; k < w; ++k) {
      const quad v = static_cast<quad>(weights.w1[k]) * x + static_cast<quad>(weights.b1[k]);
      if (v > 0) acc += static_cast<quad>(weights.w2[h * w + k]) * v;
    }
    return acc + static_cast<quad>(weights.b2[h]);
  }

  // The exact regime's float output from the double y (|y - b| <= tol) at (h, q, d): y - tol and y + tol rounding to
  // the same float (bit for bit) means every value between them does, b included (rounding is monotone); otherwise
  // binary128 decides. tol is widened by 2^-50 |y| for the roundings of y -+ tol themselves.
  float exact_f32(std::size_t h, std::int64_t q, std::int64_t d, double x, double y) const {
    const double tol = static_cast<double>(w + 16) * kU64 * (P[h] + x * Q[h]) + 0x1p-50 * std::fabs(y);
    const auto lo = static_cast<float>(y - tol), hi = static_cast<float>(y + tol);
    if (std::bit_cast<std::uint32_t>(lo) == std::bit_cast<std::uint32_t>(hi)) return lo;
    return static_cast<float>(exact_q(h, q, d));
  }

  // Values of head h for the query at q and keys j in [j0, j0 + m) (m <= kChunk) into out (T = output type),
  // given the numerators l[d - l0] (the regime's type) and the row's denominator.
  template <class T, class F>
  void values(std::size_t h, std::int64_t q, std::int64_t j0, std::size_t m, const F* l, std::int64_t l0, F den,
              T* out) const {
    alignas(64) F xs[kChunk];
    alignas(64) F ys[kChunk];
    for (std::size_t t = 0; t < m; ++t) {
      const std::int64_t j = j0 + static_cast<std::int64_t>(t), d = q >= j ? q - j : j - q;
      xs[t] = l[d - l0] / den;
    }
    mlp<F>(h, xs, ys, m);
    if constexpr (std::is_same_v<F, float> || std::is_same_v<T, double>) {
      for (std::size_t t = 0; t < m; ++t) out[t] = static_cast<T>(ys[t]);
    } else {
      // The rounding test of exact_f32, vectorised; the rare ambiguous entries then go through exact_f32 itself.
      const double Ph = P[h], Qh = Q[h], k = static_cast<double>(w + 16) * kU64;
      bool any = false;
#pragma omp simd reduction(|| : any)
      for (std::size_t t = 0; t < m; ++t) {
        const double tol = k * (Ph + xs[t] * Qh) + 0x1p-50 * std::fabs(ys[t]);
        const auto lo = static_cast<float>(ys[t] - tol), hi = static_cast<float>(ys[t] + tol);
        out[t] = lo;
        any = any || std::bit_cast<std::uint32_t>(lo) != std::bit_cast<std::uint32_t>(hi);
      }
      if (any)
        for (std::size_t t = 0; t < m; ++t) {
          const std::int64_t j = j0 + static_cast<std::int64_t>(t), d = q >= j ? q - j : j - q;
          out[t] = exact_f32(h, q, d, xs[t], ys[t]);
        }
    }
  }

  template <class T>
  T value(std::size_t h, std::int64_t q, std::int64_t j) const {
    const std::int64_t d = q >= j ? q - j : j - q;
    T out{};
    if (cramming) {
      const float l = l32(d);
      values<T, float>(h, q, j, 1, &l, d, den32(q), &out);
    } else {
      const double l = l64(d);
      values<T, double>(h, q, j, 1, &l, d, den64(q), &out);
    }
    return out;
  }

  double x_value(std::int64_t q, std::int64_t j) const {
    const std::int64_t d = q >= j ? q - j : j - q;
    if (cramming) return l32(d) / den32(q);
    return l64(d) / den64(q);
  }
};

namespace {

void check_position(const char* name, std::int64_t v) {
  if (v < 0 || v >= static_cast<std::int64_t>(kFireMaxKeyLength))
    throw Error(kWhere, name, std::to_string(v), "a position in [0, 2^24 - 1]");
}

template <class T, class F>
void bias_rows(const FirePlan::Impl& P, const BiasGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t Lk = g.key_length, Lq = g.query_length, H = P.H;
  const auto past = static_cast<std::int64_t>(Lk - Lq);
  const int threads = core::thread_count(o, H * Lq * Lk);
  // Numerators l(d), d < Lk.
  core::AlignedBuffer<F> l(Lk);
  const std::size_t lchunks = (Lk + 4095) / 4096;
  core::parallel_for(lchunks, threads, [&](int, std::size_t c) {
    for (std::size_t d = c * 4096; d < std::min(Lk, (c + 1) * 4096); ++d) {
      if constexpr (std::is_same_v<F, float>) l.get()[d] = P.l32(static_cast<std::int64_t>(d));
      else l.get()[d] = P.l64(static_cast<std::int64_t>(d));
    }
  });
  // Rows at or below the threshold: V[h][d] once per head (the farthest key any of them sees is < Lk).
  const bool shared = P.at_threshold(past);
  const F den_thr = shared ? (std::is_same_v<F, float> ? static_cast<F>(P.den32(past)) : static_cast<F>(P.den64(past)))
                           : F(0);
  core::AlignedBuffer<T> V(shared ? H * Lk : 0);
  if (shared) {
    const std::size_t chunks = (Lk + kChunk - 1) / kChunk;
    core::parallel_for(H * chunks, threads, [&](int, std::size_t it) {
      const std::size_t h = it / chunks, d0 = (it % chunks) * kChunk, m = std::min(kChunk, Lk - d0);
      // Keys j0 = 0.. of a query at position q = 0 have d = j: the values at distances d0 .. d0 + m - 1. Any row
      // at the threshold has the same denominator; q = past stands for it (at_threshold(past)).
      P.values<T, F>(h, 0, static_cast<std::int64_t>(d0), m, l.get(), 0, den_thr, V.get() + h * Lk + d0);
    });
  }
  auto build_row = [&](std::size_t h, std::size_t qi, T* E, std::size_t n) {
    const auto q = static_cast<std::int64_t>(qi);
    if (shared && P.at_threshold(q)) {
      const T* v = V.get() + h * Lk;
      for (std::size_t j = 0; j < n; ++j) E[j] = v[j <= qi ? qi - j : j - qi];
      return;
    }
    const F den = std::is_same_v<F, float> ? static_cast<F>(P.den32(q)) : static_cast<F>(P.den64(q));
    for (std::size_t j0 = 0; j0 < n; j0 += kChunk)
      P.values<T, F>(h, q, static_cast<std::int64_t>(j0), std::min(kChunk, n - j0), l.get(), 0, den, E + j0);
  };
  core::write_bias_rows_each(H, g, build_row, out, o);
}

template <class T>
void bias_impl(const FirePlan::Impl& P, const BiasGeometry& g, std::span<T> out, const TableOptions& o) {
  const std::size_t total = core::check_bias_geometry(kWhere, P.H, g);
  check_fire_key_length(g.key_length);
  if (out.size() != total)
    throw Error(kWhere, "out", std::to_string(out.size()) + " elements",
                "exactly heads * query_length * key_length = " + std::to_string(total) + " elements");
  if (P.cramming) bias_rows<T, float>(P, g, out, o);
  else bias_rows<T, double>(P, g, out, o);
}

}  // namespace

FirePlan::FirePlan(const FireSpec& spec, const FireWeights& weights) {
  validate(spec);
  check_fire_weights(spec, weights);
  impl_ = std::make_shared<const Impl>(spec, weights);
}
const FireSpec& FirePlan::spec() const noexcept { return impl_->spec; }
const FireWeights& FirePlan::weights() const noexcept { return impl_->weights; }
double FirePlan::threshold() const noexcept { return impl_->cramming ? impl_->thr32 : impl_->thr_hi; }

double FirePlan::normalized_distance(std::int64_t q, std::int64_t j) const {
  check_position("q", q);
  check_position("j", j);
  return impl_->x_value(q, j);
}

float FirePlan::bias_value_f32(std::size_t head, std::int64_t q, std::int64_t j) const {
  if (head >= impl_->H)
    throw Error(kWhere, "head", std::to_string(head), "an integer in [0, heads - 1 = " + std::to_string(impl_->H - 1) + "]");
  check_position("q", q);
  check_position("j", j);
  return impl_->value<float>(head, q, j);
}
double FirePlan::bias_value_f64(std::size_t head, std::int64_t q, std::int64_t j) const {
  if (head >= impl_->H)
    throw Error(kWhere, "head", std::to_string(head), "an integer in [0, heads - 1 = " + std::to_string(impl_->H - 1) + "]");
  check_position("q", q);
  check_position("j", j);
  return impl_->value<double>(head, q, j);
}

void FirePlan::bias(const BiasGeometry& g, std::span<float> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }
void FirePlan::bias(const BiasGeometry& g, std::span<double> out, const TableOptions& o) const { bias_impl(*impl_, g, out, o); }

void FirePlan::scores(std::span<const float> q, std::span<const float> k, std::size_t head_dim, const BiasGeometry& g,
                      double scale, std::span<float> out, const TableOptions& o) const {
  check_fire_key_length(g.key_length);
  core::fused_scores(kWhere, impl_->H, q, k, head_dim, g, scale, out, [&](std::span<float> b) { bias(g, b, o); });
}
void FirePlan::scores(std::span<const double> q, std::span<const double> k, std::size_t head_dim, const BiasGeometry& g,
                      double scale, std::span<double> out, const TableOptions& o) const {
  check_fire_key_length(g.key_length);
  core::fused_scores(kWhere, impl_->H, q, k, head_dim, g, scale, out, [&](std::span<double> b) { bias(g, b, o); });
}

std::size_t fire_bias_size(const FireSpec& s, const BiasGeometry& g) {
  validate(s);
  const std::size_t n = core::check_bias_geometry(kWhere, s.heads, g);
  check_fire_key_length(g.key_length);
  return n;
}

void fire_bias(const FireSpec& s, const FireWeights& w, const BiasGeometry& g, std::span<float> out,
               const TableOptions& o) {
  FirePlan(s, w).bias(g, out, o);
}
void fire_bias(const FireSpec& s, const FireWeights& w, const BiasGeometry& g, std::span<double> out,
               const TableOptions& o) {
  FirePlan(s, w).bias(g, out, o);
}

}  // namespace posenc
