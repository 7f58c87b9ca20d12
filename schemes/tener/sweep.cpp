// The TENER part of the accuracy sweep (support/sweep.hpp):
//  * for every preset, in both regimes, the table rows of t = 0 .. 64, then 4 per octave up to 2^30 - 1, of both
//    signs, every column, against the oracle, f32 and f64; series: the largest error per |t|;
//  * the scores of a call of L = 2048, both forms, f32 and f64, the preset's sizes (one head), sampled entries against
//    the oracle, series: the largest ratio to B per octave of the distance.
//   default: 24 query rows x 24 keys per form; --long: 64 x 64; --smoke: 3 x 4 and the table at 1 point per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "posenc/reference/tener.hpp"
#include "posenc/tener.hpp"
#include "support/bias_measure.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "support/relative_sweep.hpp"
#include "support/sweep.hpp"
#include "schemes/tener/budget.hpp"
#include "schemes/tener/measure.hpp"

namespace sweep_tener {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using nlohmann::json;
namespace rf = posenc::reference;
using R = TenerRow;

void measure_table(SweepContext& ctx, const TenerSpec& s, const std::string& name, int steps) {
  const bool emu = s.regime == Regime::emulated;
  std::vector<std::int64_t> grid;
  for (std::int64_t a : distance_grid(steps, 64))
    if (a < (std::int64_t{1} << 30) - 1) grid.push_back(a);
  // A call's row of t is the sinusoidal plan's row of t (TENER-REPRO-1; the zero row aside): both signs of the grid.
  // L = 2^30 - 1 puts every grid point inside one call (only t = -L would be its zero row: not on the grid).
  const std::size_t L = (std::size_t{1} << 30) - 1;
  const SinusoidalPlan plan(tener_sinusoidal_spec(s, 1));
  relative::RowErrors forward;
  for (const std::int64_t sign : {1, -1}) {
    std::vector<std::int64_t> pos;
    for (std::int64_t a : grid) pos.push_back(sign * a);
    relative::RowErrors e = relative::measure_plan_rows(
        ctx, plan, pos, s.d_head, budget(emu ? R::table_emulated : R::table_exact_f32),
        budget(emu ? R::table_emulated : R::table_exact_f64),
        [&](std::size_t n, std::size_t m) { return rf::tener_table_value(s, pos[n], m, L); },
        [&](std::size_t n, std::size_t m) { return describe(s) + " t=" + std::to_string(pos[n]) + " m=" + std::to_string(m); });
    if (sign > 0) forward = std::move(e);  // the series: distances >= 0 (the negative ones are held to the rows too)
  }
  relative::push_table_series(ctx, "tener", name, s.regime, s.d_head, "get_embedding", grid, forward);
}

void measure_scores(SweepContext& ctx, const TenerSpec& base, const std::string& name, std::size_t rows,
                    std::size_t cols) {
  TenerSpec s = base;
  s.heads = 1;
  std::mt19937_64 rng(0x7e4eull + s.d_head);
  const std::size_t d = s.d_head, L = 2048;
  const TenerWeights w{random_floats(rng, d), random_floats(rng, d)};
  const TenerPlan plan(s, w);
  const rf::TenerOracle o(s, w);
  const std::vector<double> q = random_floats(rng, L * d), k = random_floats(rng, L * d);
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  std::vector<double> table(2 * L * d);
  plan.table(L, std::span<double>(table));  // |R| for B's magnitudes (TENER-TABLE-1 holds it to the oracle)
  const bool emu = s.regime == Regime::emulated;
  const double sc = s.scale ? 1 / std::sqrt(static_cast<double>(d)) : 1.0;
  const relative::Call call{.Lq = L, .Lk = L, .key_mask = {}, .types = {}};
  const relative::EntryFn entry = tener_measure::entry_fn(o, w, call, table, q, k, std::nullopt);
  for (RelativeScoresForm form : {RelativeScoresForm::blas, RelativeScoresForm::direct}) {
    std::vector<float> s32(L * L);
    std::vector<double> s64(L * L);
    plan.scores(std::span<const float>(q32), std::span<const float>(k32), {L, L}, std::nullopt, std::span<float>(s32), {}, form);
    plan.scores(std::span<const double>(q), std::span<const double>(k), {L, L}, std::nullopt, std::span<double>(s64), {}, form);
    const relative::BoundParams b{.d = d, .dm = 0, .terms = 3, .abs_scale = sc, .form = form,
                                  .rho32 = relative_table_rho(DType::f32, emu), .rho64 = relative_table_rho(DType::f64, emu)};
    BandMaxima bands;
    relative::sweep_scores(
        ctx, budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), L, L, entry, b, s32, s64, rows, cols,
        [&](std::size_t i) { return std::vector<std::size_t>{i, i + 1, 0, L - 1}; },
        [&](std::size_t i, std::size_t j) { return static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i); },
        [&](std::size_t i, std::size_t j) {
          return describe(s) + " " + std::string(to_string(form)) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        },
        bands);
    bands.push(ctx.series, {{"scheme", "tener"}, {"preset", name + " (" + std::string(to_string(form)) + ")"},
                            {"regime", to_string(s.regime)}, {"dim", d}, {"metric", "|score - exact| / B"}});
  }
  std::fprintf(stderr, "%-24s scores L=%zu d_head=%zu: %zu x %zu entries, both forms  (%.0f s)\n", name.c_str(), L, d,
               rows, cols, ctx.elapsed_seconds());
}


POSENC_SWEEP(tener) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const int steps = smoke ? 1 : long_mode ? 16 : 4;
  const std::size_t rows = smoke ? 3 : long_mode ? 64 : 24, cols = smoke ? 4 : long_mode ? 64 : 24;
  for (const auto& info : SpecTraits<TenerSpec>::presets())
    for (Regime regime : {Regime::exact, Regime::emulated}) {
      TenerSpec s = info.spec;
      s.regime = regime;
      measure_table(ctx, s, std::string(info.name), steps);
      measure_scores(ctx, s, std::string(info.name), rows, cols);
    }
}

}  // namespace sweep_tener
