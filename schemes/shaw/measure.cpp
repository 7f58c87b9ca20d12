#include "schemes/shaw/measure.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "schemes/shaw/budget.hpp"
#include "support/bias_measure.hpp"

namespace posenc::test::shaw {

using reference::Real;

std::vector<double> random_values(std::size_t n, int scale) {
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(*rc::gen::inRange(-scale, scale + 1) * (1.0 / scale));
  return v;
}

Inputs random_inputs(std::size_t d, const BiasGeometry& g, std::size_t H) {
  return {H, d, random_values(H * g.query_length * d), random_values(H * g.key_length * d),
          random_values(H * g.key_length * d)};
}

bool blind(const BiasGeometry& g) {
  if (g.mask != BiasMask::causal || g.key_mask.empty()) return false;
  for (std::size_t j = 0; j <= g.key_length - g.query_length; ++j)
    if (g.key_mask[j] != 0) return false;
  return true;
}

void measure_scores(const Claim& claim, const reference::ShawOracle& o, const ShawWeights& w, const std::string& label,
                    const BiasGeometry& g, const Inputs& in, std::optional<double> scale, std::span<const float> s32,
                    std::span<const double> s64, TableDrift tau) {
  const std::size_t H = in.H, Lq = g.query_length, Lk = g.key_length, d = in.d;
  const Sink sink = claim_sink(claim);
  const double sc = std::fabs(scale ? *scale : 1 / std::sqrt(static_cast<double>(d)));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i : sample_indices(Lq, 12, {63, 64, 127, 128, 255, 256}))
      for (std::size_t j : sample_indices(Lk, 24, {Lk - Lq + i, Lk - Lq + i + 1, Lk - Lq + i + o.spec().max_relative_position})) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return label + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) +
                 " j=" + std::to_string(j);
        };
        if (masked(g, i, j)) {
          masked_entry(sink, budget(ShawRow::masked), s32[at], what);
          masked_entry(sink, budget(ShawRow::masked), s64[at], what);
          continue;
        }
        const auto qi = std::span<const double>(in.q).subspan((h * Lq + i) * d, d);
        const auto kj = std::span<const double>(in.k).subspan((h * Lk + j) * d, d);
        const Real e = o.score(qi, kj, i, j, Lq, Lk, scale);
        const auto [qk, rel] = shaw_score_sums(o.spec(), w, qi, kj, static_cast<std::size_t>(reference::shaw_index(o.spec(), i, j, Lq, Lk)));
        const double qs = shaw_drift_sum(o.spec(), qi, kj);
        emit(sink, ShawRow::scores_f32, s32[at], e, what, shaw_scores_bound(DType::f32, d, sc, qk, rel, tau.f32 * qs));
        emit(sink, ShawRow::scores_f64, s64[at], e, what, shaw_scores_bound(DType::f64, d, sc, qk, rel, tau.f64 * qs));
      }
}

void measure_outputs(const Claim& claim, const reference::ShawOracle& o, const ShawWeights& w,
                     const std::string& label, const BiasGeometry& g, const Inputs& in, std::optional<double> scale,
                     std::span<const float> z32, std::span<const double> z64, std::size_t max_rows,
                     TableDrift tau) {
  const ShawSpec& s = o.spec();
  const std::size_t Lq = g.query_length, Lk = g.key_length, d = s.head_dim, H = in.H;
  const bool causal = g.mask == BiasMask::causal;
  const reference::ShawMask mask{causal, causal ? std::vector<std::uint8_t>(g.key_mask.begin(), g.key_mask.end())
                                         : std::vector<std::uint8_t>{}};
  const double sc = scale ? *scale : 1 / std::sqrt(static_cast<double>(d));
  const std::size_t rows_used = std::min(shaw_table_rows(s), Lk + Lq - 1);
  const Sink sink = claim_sink(claim);
  const reference::PrecisionGuard guard(320);
  for (std::size_t h = 0; h < H; ++h) {
    const auto Q = std::span<const double>(in.q).subspan(h * Lq * d, Lq * d);
    const auto K = std::span<const double>(in.k).subspan(h * Lk * d, Lk * d);
    const auto V = std::span<const double>(in.v).subspan(h * Lk * d, Lk * d);
    for (std::size_t i : sample_indices(Lq, max_rows, {127, 128})) {
      const std::vector<Real> z = o.output(Q, K, V, i, Lq, Lk, mask, scale);
      // weights and the bound's magnitudes from the oracle's scores (doubles suffice for a bound)
      std::vector<double> e(Lk, -std::numeric_limits<double>::infinity());
      double d32 = 0, d64 = 0, m = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < Lk; ++j) {
        if (!o.visible(mask, i, j, Lq, Lk)) continue;
        const auto qi = Q.subspan(i * d, d), kj = K.subspan(j * d, d);
        e[j] = static_cast<double>(o.score(qi, kj, i, j, Lq, Lk, scale));
        m = std::max(m, e[j]);
        const auto [qk, rel] = shaw_score_sums(s, w, qi, kj, static_cast<std::size_t>(reference::shaw_index(s, i, j, Lq, Lk)));
        const double qs = shaw_drift_sum(s, qi, kj);
        d32 = std::max(d32, shaw_scores_bound(DType::f32, d, std::fabs(sc), qk, rel, tau.f32 * qs));
        d64 = std::max(d64, shaw_scores_bound(DType::f64, d, std::fabs(sc), qk, rel, tau.f64 * qs));
      }
      double sum = 0;
      for (std::size_t j = 0; j < Lk; ++j) sum += std::exp(e[j] - m);
      for (std::size_t c = 0; c < d; ++c) {
        double mag = 0, tmag = 0;
        for (std::size_t j = 0; j < Lk; ++j) {
          if (e[j] == -std::numeric_limits<double>::infinity()) continue;
          const double a = std::exp(e[j] - m) / sum;
          const auto idx = static_cast<std::size_t>(reference::shaw_index(s, i, j, Lq, Lk));
          const double wa = std::fabs(V[j * d + c]) + (s.values ? std::fabs(w.values[idx * d + c]) : 0.0);
          mag += a * wa;
          tmag += a * std::fabs(e[j] - m) * wa;
        }
        mag *= 1.001, tmag *= 1.001;  // the weights in double: well within a part in 10^3
        auto what = [&] {
          return label + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) +
                 " c=" + std::to_string(c);
        };
        const std::size_t at = (h * Lq + i) * d + c;
        const double v32 = s.values ? tau.f32 : 0.0, v64 = s.values ? tau.f64 : 0.0;
        emit(sink, ShawRow::output_f32, z32[at], z[c], what, shaw_output_bound(DType::f32, d32, Lk, rows_used, mag, tmag, v32));
        emit(sink, ShawRow::output_f64, z64[at], z[c], what, shaw_output_bound(DType::f64, d64, Lk, rows_used, mag, tmag, v64));
      }
    }
  }
}

}  // namespace posenc::test::shaw
