// The DeBERTa part of the accuracy sweep (support/sweep.hpp), for every preset:
//  * the fast path's bucket against the oracle's over a grid of relative positions to 2^31 - 1 (both signs), in the
//    preset's regime and in the exact one; series |bucket - oracle bucket| vs distance (0 everywhere is the claim)
//    and, for the hf regime, |HF float32 bucket - exact bucket| (the differences a real DeBERTa model carries);
//  * scores of one head (head_dim 64, float32 inputs, random tables) at L = 2048 (--long: 4096; --smoke: 256)
//    against the oracle, sampled rows and keys (every key near the diagonal), series: the largest ratio to the
//    deberta.scores bound per distance band (f32, f64).
//   default: 8 points per octave plus every a <= 4 max_relative_positions; --long: 32; --smoke: 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "schemes/deberta/budget.hpp"
#include "posenc/deberta.hpp"
#include "posenc/reference/deberta.hpp"
#include "support/harness.hpp"
#include "support/sweep.hpp"

namespace sweep_deberta {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;
namespace rf = posenc::reference;


POSENC_SWEEP(deberta) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  std::mt19937_64 rng(2021);
  for (const auto& info : SpecTraits<DebertaSpec>::presets()) {
    const std::string name(info.name);
    DebertaSpec preset = info.spec;
    preset.heads = 1;
    const std::vector<std::int64_t> xs =
        distance_grid(smoke ? 1 : long_mode ? 32 : 8, smoke ? 64 : 4 * static_cast<std::int64_t>(preset.max_relative_positions));
    for (DebertaRegime regime : {DebertaRegime::exact, preset.regime}) {
      DebertaSpec s = preset;
      s.regime = regime;
      DebertaSpec es = s;
      es.regime = DebertaRegime::exact;
      const BudgetRow& row = budget(regime == DebertaRegime::exact ? DebertaRow::bucket_exact : DebertaRow::bucket_hf);
      json points = json::array(), vs_exact = json::array();
      for (std::int64_t a : xs) {
        double worst = 0.0, off = 0.0;
        for (std::int64_t rel : {-a, a}) {
          const std::int64_t got = deberta_bucket(s, rel), want = rf::deberta_bucket(s, rel);
          worst = std::max(worst, static_cast<double>(std::llabs(got - want)));
          emit(ctx.aggregate, row, static_cast<double>(got), Real(static_cast<double>(want)),
               [&] { return describe(s) + " rel=" + std::to_string(rel); });
          if (regime != DebertaRegime::exact) off = std::max(off, static_cast<double>(std::llabs(got - rf::deberta_bucket(es, rel))));
        }
        points.push_back({{"distance", a}, {"max_error", worst}});
        if (regime != DebertaRegime::exact) vs_exact.push_back({{"distance", a}, {"max_error", off}});
      }
      ctx.series.push_back({{"scheme", "deberta"}, {"preset", name}, {"regime", std::string(to_string(regime))},
                            {"dtype", "int"}, {"dim", s.head_dim}, {"metric", "|bucket - oracle bucket|"},
                            {"x", "distance"}, {"points", points}});
      if (regime != DebertaRegime::exact)
        ctx.series.push_back({{"scheme", "deberta"}, {"preset", name}, {"regime", std::string(to_string(regime))},
                              {"dtype", "int"}, {"dim", s.head_dim}, {"reference", "exact"},
                              {"metric", "|HF float32 bucket - exact bucket|"}, {"x", "distance"}, {"points", vs_exact}});
      std::fprintf(stderr, "%-18s %-6s %4zu distances  (%.0f s)\n", name.c_str(), std::string(to_string(regime)).c_str(),
                   xs.size(), ctx.elapsed_seconds());
      if (regime == preset.regime) break;  // an exact preset has one regime
    }

    // scores of one head: ratio to the bound, per distance band
    const DebertaSpec& s = preset;
    const std::size_t d = s.head_dim, rows = deberta_table_rows(s);
    DebertaWeights w;
    if (s.c2p) w.pos_key = random_floats(rng, rows * d);
    if (s.p2c) w.pos_query = random_floats(rng, rows * d);
    const DebertaPlan plan(s, w);
    const rf::DebertaOracle o(s, w);
    const std::size_t L = smoke ? 256 : long_mode ? 4096 : 2048;
    const std::vector<double> q = random_floats(rng, L * d), k = random_floats(rng, L * d);
    const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
    std::vector<float> s32(L * L);
    std::vector<double> s64(L * L);
    plan.scores(std::span<const float>(q32), std::span<const float>(k32), L, L, {}, std::nullopt, std::span<float>(s32));
    plan.scores(std::span<const double>(q), std::span<const double>(k), L, L, {}, std::nullopt, std::span<double>(s64));
    const double sc = 1 / std::sqrt(static_cast<double>(d * deberta_scale_factor(s)));
    BandMaxima bands;
    const std::size_t step = smoke ? 64 : long_mode ? 16 : 32;
    for (std::size_t i = 0; i < L; i += step)
      for (std::size_t j = 0; j < L; j += (j + 1 < i + 40 && j + 40 > i) ? 1 : step) {
        const auto qi = std::span<const double>(q).subspan(i * d, d), kj = std::span<const double>(k).subspan(j * d, d);
        const Real e = o.score(0, qi, kj, i, j, L, L);
        const auto c = static_cast<std::size_t>(rf::deberta_position_index(s, i, j, L, L));
        const auto [qk, rel] = deberta_score_sums(s, w, 0, qi, kj, c);
        auto what = [&] { return describe(s) + " L=" + std::to_string(L) + " i=" + std::to_string(i) + " j=" + std::to_string(j); };
        const double b32 = deberta_scores_bound(DType::f32, d, sc, qk, rel), b64 = deberta_scores_bound(DType::f64, d, sc, qk, rel);
        emit(ctx.aggregate, DebertaRow::scores_f32, s32[i * L + j], e, what, b32);
        emit(ctx.aggregate, DebertaRow::scores_f64, s64[i * L + j], e, what, b64);
        bands.add(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i),
                  std::fabs(static_cast<double>(Real(Real(s32[i * L + j]) - e))) / b32,
                  std::fabs(static_cast<double>(Real(Real(s64[i * L + j]) - e))) / b64);
      }
    bands.push(ctx.series, {{"scheme", "deberta"}, {"preset", name}, {"regime", std::string(to_string(s.regime))}, {"dim", d},
                            {"metric", "scores |error| / bound (L = " + std::to_string(L) + ")"}});
    std::fprintf(stderr, "%-18s scores L=%zu  (%.0f s)\n", name.c_str(), L, ctx.elapsed_seconds());
  }
}

}  // namespace sweep_deberta
