// The Shaw part of the accuracy sweep (support/sweep.hpp), for every preset (t2t, bert-relative-key(-query)):
//  * the fast path's index against the oracle's at offsets u = j - q_i over a grid to 2^31 - 1 (both signs; BERT's
//    unclipped table to its 511), series |index - oracle index| vs distance (0 everywhere is the claim);
//  * scores of one head (head_dim 64, float32 inputs, random tables) at L = 4096 against the oracle, sampled rows and
//    keys, series: the largest ratio to the shaw.scores bound per distance band (f32, f64);
//  * attention outputs of sampled rows at L = 1024 (--long: 4096), ratio to the shaw.output bound.
//   default: 8 points per octave; --long: 32; --smoke: 1 and L = 256.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "posenc/reference/shaw.hpp"
#include "posenc/shaw.hpp"
#include "schemes/shaw/budget.hpp"
#include "support/harness.hpp"
#include "support/sweep.hpp"

namespace sweep_shaw {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;
namespace rf = posenc::reference;

std::vector<std::int64_t> grid(int steps_per_octave, std::int64_t top) {
  std::set<std::int64_t> g;
  for (std::int64_t a = 0; a <= std::min<std::int64_t>(top, 64); ++a) g.insert(a);
  for (int i = 0; i <= 31 * steps_per_octave; ++i) {
    const auto a = static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave)));
    if (a <= top) g.insert(a);
  }
  g.insert(top);
  return {g.begin(), g.end()};
}


POSENC_SWEEP(shaw) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  std::mt19937_64 rng(20181);
  for (const auto& info : SpecTraits<ShawSpec>::presets()) {
    const ShawSpec& s = info.spec;
    const std::size_t d = s.head_dim, rows = shaw_table_rows(s);
    ShawWeights w{random_floats(rng, rows * d), {}};
    if (s.values) w.values = random_floats(rng, rows * d);
    const ShawPlan plan(s, w);
    const rf::ShawOracle o(s, w);
    const std::string name(info.name);

    // indices over offsets: u = j - q_i realised by a 1-query call is -(Lk - 1) .. 0; the oracle is asked at a cell
    // of that offset in a geometry that has it
    const std::int64_t top = s.clip ? (std::int64_t{1} << 31) - 1 : static_cast<std::int64_t>(s.max_relative_position);
    json points = json::array();
    for (std::int64_t a : grid(smoke ? 1 : long_mode ? 32 : 8, top)) {
      double worst = 0;
      for (std::int64_t u : {-a, a}) {
        // a two-key-length geometry holding offset u: Lk = |u| + 1 keys, the query first or last
        const std::size_t Lk = static_cast<std::size_t>(a) + 1, Lq = u > 0 ? Lk : 1;
        const std::size_t i = 0, j = u > 0 ? static_cast<std::size_t>(Lk - Lq + static_cast<std::size_t>(u)) : 0;
        if (u > 0 && j >= Lk) continue;  // u > 0 needs a query before the last key: Lq = Lk puts row 0 at key 0
        const std::int64_t want = rf::shaw_index(s, i, j, Lq, Lk), got = plan.index(u);
        worst = std::max(worst, static_cast<double>(std::llabs(got - want)));
        emit(ctx.aggregate, ShawRow::index, static_cast<double>(got), Real(static_cast<double>(want)),
             [&] { return describe(s) + " u=" + std::to_string(u); });
      }
      points.push_back({{"distance", a}, {"max_error", worst}});
    }
    ctx.series.push_back({{"scheme", "shaw"}, {"preset", name}, {"regime", "exact"}, {"dtype", "int"},
                          {"dim", d}, {"metric", "|index - oracle index|"}, {"x", "distance"}, {"points", points}});

    // scores of one head: ratio to the bound, per distance band
    const std::size_t L = smoke ? 256 : std::min<std::size_t>(4096, s.clip ? 4096 : s.max_relative_position + 1);
    const std::vector<double> q = random_floats(rng, L * d), k = random_floats(rng, L * d), v = random_floats(rng, L * d);
    const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end()), v32(v.begin(), v.end());
    const BiasGeometry g{.query_length = L, .key_length = L};
    std::vector<float> s32(L * L);
    std::vector<double> s64(L * L);
    plan.scores(std::span<const float>(q32), std::span<const float>(k32), 1, g, std::nullopt, std::span<float>(s32));
    plan.scores(std::span<const double>(q), std::span<const double>(k), 1, g, std::nullopt, std::span<double>(s64));
    const double sc = 1 / std::sqrt(static_cast<double>(d));
    BandMaxima bands;
    const std::size_t step = smoke ? 64 : long_mode ? 8 : 32;
    for (std::size_t i = 0; i < L; i += step)
      for (std::size_t j = 0; j < L; j += (j + 1 < i + 40 && j + 40 > i) ? 1 : step) {
        const auto qi = std::span<const double>(q).subspan(i * d, d), kj = std::span<const double>(k).subspan(j * d, d);
        const Real e = o.score(qi, kj, i, j, L, L);
        const auto [qk, rel] = shaw_score_sums(s, w, qi, kj, static_cast<std::size_t>(rf::shaw_index(s, i, j, L, L)));
        auto what = [&] { return describe(s) + " L=" + std::to_string(L) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
        const double b32 = shaw_scores_bound(DType::f32, d, sc, qk, rel), b64 = shaw_scores_bound(DType::f64, d, sc, qk, rel);
        emit(ctx.aggregate, ShawRow::scores_f32, s32[i * L + j], e, what, b32);
        emit(ctx.aggregate, ShawRow::scores_f64, s64[i * L + j], e, what, b64);
        bands.add(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i),
                  std::fabs(static_cast<double>(Real(Real(s32[i * L + j]) - e))) / b32,
                  std::fabs(static_cast<double>(Real(Real(s64[i * L + j]) - e))) / b64);
      }
    bands.push(ctx.series, {{"scheme", "shaw"}, {"preset", name}, {"regime", "exact"}, {"dim", d},
                            {"metric", "scores |error| / bound (L = " + std::to_string(L) + ")"}});

    // outputs: a few rows at a shorter length (the oracle's output is O(L d) MPFR work per row)
    const std::size_t Lo = smoke ? 128 : long_mode ? L : std::min<std::size_t>(L, 1024);
    const BiasGeometry go{.query_length = Lo, .key_length = Lo, .mask = BiasMask::causal};
    const auto Q = std::span<const double>(q).first(Lo * d), K = std::span<const double>(k).first(Lo * d),
               V = std::span<const double>(v).first(Lo * d);
    std::vector<float> z32(Lo * d);
    std::vector<double> z64(Lo * d);
    plan.attend(std::span<const float>(q32).first(Lo * d), std::span<const float>(k32).first(Lo * d),
                std::span<const float>(v32).first(Lo * d), 1, go, std::nullopt, std::span<float>(z32));
    plan.attend(Q, K, V, 1, go, std::nullopt, std::span<double>(z64));
    const rf::ShawMask mask{true, {}};
    for (std::size_t i : {std::size_t{0}, Lo / 3, Lo / 2, Lo - 1}) {
      const std::vector<Real> z = o.output(Q, K, V, i, Lo, Lo, mask);
      std::vector<double> e(i + 1);
      double m = -std::numeric_limits<double>::infinity(), d32 = 0, d64 = 0;
      for (std::size_t j = 0; j <= i; ++j) {
        const auto qi = Q.subspan(i * d, d), kj = K.subspan(j * d, d);
        e[j] = static_cast<double>(o.score(qi, kj, i, j, Lo, Lo));
        m = std::max(m, e[j]);
        const auto [qk, rel] = shaw_score_sums(s, w, qi, kj, static_cast<std::size_t>(rf::shaw_index(s, i, j, Lo, Lo)));
        d32 = std::max(d32, shaw_scores_bound(DType::f32, d, sc, qk, rel));
        d64 = std::max(d64, shaw_scores_bound(DType::f64, d, sc, qk, rel));
      }
      double sum = 0;
      for (double x : e) sum += std::exp(x - m);
      for (std::size_t c = 0; c < d; ++c) {
        double mag = 0, tmag = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          const double a = std::exp(e[j] - m) / sum;
          const auto idx = static_cast<std::size_t>(rf::shaw_index(s, i, j, Lo, Lo));
          const double wa = std::fabs(V[j * d + c]) + (s.values ? std::fabs(w.values[idx * d + c]) : 0.0);
          mag += a * wa;
          tmag += a * std::fabs(e[j] - m) * wa;
        }
        const std::size_t used = std::min(rows, 2 * Lo - 1);
        auto what = [&] { return describe(s) + " L=" + std::to_string(Lo) + " causal i=" + std::to_string(i) + " c=" + std::to_string(c); };
        emit(ctx.aggregate, ShawRow::output_f32, z32[i * d + c], z[c], what, shaw_output_bound(DType::f32, d32, Lo, used, mag * 1.001, tmag * 1.001));
        emit(ctx.aggregate, ShawRow::output_f64, z64[i * d + c], z[c], what, shaw_output_bound(DType::f64, d64, Lo, used, mag * 1.001, tmag * 1.001));
      }
    }
    std::fprintf(stderr, "%-24s indices, scores at L=%zu, outputs at L=%zu  (%.0f s)\n", name.c_str(), L, Lo,
                 ctx.elapsed_seconds());
  }
}

}  // namespace sweep_shaw
