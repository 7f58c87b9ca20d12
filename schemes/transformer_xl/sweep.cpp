// The Transformer-XL part of the accuracy sweep (support/sweep.hpp):
//  * for every preset, in both regimes, the table rows of distances 0 .. 64, then 4 per octave up to 2^31 - 1 (each
//    clamped as the preset clamps it; without the clamp too), every column, against the oracle, f32 and f64; series:
//    the largest error per distance;
//  * the scores of a call with L = 2048 queries after 512 memory keys (the size), both forms, f32 and f64,
//    with the preset's sizes (one head), sampled entries against the oracle, series: the largest ratio to B per
//    octave of the distance.
//   default: 24 query rows x 24 keys per form; --long: 64 x 64; --smoke: 3 x 4 and the table at 1 point per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "posenc/reference/transformer_xl.hpp"
#include "posenc/transformer_xl.hpp"
#include "support/bias_measure.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "support/relative_sweep.hpp"
#include "support/sweep.hpp"
#include "schemes/transformer_xl/budget.hpp"
#include "schemes/transformer_xl/measure.hpp"

namespace sweep_transformer_xl {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using nlohmann::json;
namespace rf = posenc::reference;
using R = TransformerXlRow;

void measure_table(SweepContext& ctx, const TransformerXlSpec& s, const std::string& name, int steps) {
  const bool emu = s.regime == Regime::emulated;
  const std::vector<std::int64_t> grid = distance_grid(steps, 64);
  // One call per distance would be klen = distance + 1 rows: the sinusoidal plan's rows at pos(distance) are the
  // same bytes (TXL-REPRO-1), so the rows of the grid come from it directly.
  std::vector<std::int64_t> pos;
  for (std::int64_t a : grid) pos.push_back(transformer_xl_position(s, a));
  const relative::RowErrors errors = relative::measure_plan_rows(
      ctx, SinusoidalPlan(transformer_xl_sinusoidal_spec(s)), pos, s.d_model,
      budget(emu ? R::table_emulated : R::table_exact_f32), budget(emu ? R::table_emulated : R::table_exact_f64),
      [&](std::size_t n, std::size_t m) { return rf::transformer_xl_table_value(s, pos[n], m); },
      [&](std::size_t n, std::size_t m) {
        return describe(s) + " distance=" + std::to_string(grid[n]) + " m=" + std::to_string(m);
      });
  relative::push_table_series(ctx, "transformer_xl", name, s.regime, s.d_model, "PositionalEmbedding", grid, errors);
}

void measure_scores(SweepContext& ctx, const TransformerXlSpec& base, const std::string& name, std::size_t rows,
                    std::size_t cols) {
  TransformerXlSpec s = base;
  s.heads = 1;
  std::mt19937_64 rng(0x7853ull + s.d_model);
  const std::size_t d = s.d_head, dm = s.d_model, Lq = 2048, Lk = Lq + 512;
  const TransformerXlWeights w{random_floats(rng, d), random_floats(rng, d), random_floats(rng, d * dm)};
  const TransformerXlPlan plan(s, w);
  const rf::TransformerXlOracle o(s, w);
  const std::vector<double> q = random_floats(rng, Lq * d), k = random_floats(rng, Lk * d);
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  // The magnitudes of B need |R| only to a part in 10^9: the plan's own double table (TXL-TABLE-1 holds it to the
  // oracle) instead of the oracle's Lk x d_model sin/cos at 300 bits.
  std::vector<double> table(Lk * dm);
  plan.table(Lk, std::span<double>(table));
  const bool emu = s.regime == Regime::emulated;
  const relative::Call call{.Lq = Lq, .Lk = Lk, .key_mask = {}, .types = {}};
  const relative::EntryFn entry = transformer_xl_measure::entry_fn(o, w, call, table, q, k, std::nullopt);
  for (RelativeScoresForm form : {RelativeScoresForm::blas, RelativeScoresForm::direct}) {
    std::vector<float> s32(Lq * Lk);
    std::vector<double> s64(Lq * Lk);
    plan.scores(std::span<const float>(q32), std::span<const float>(k32), {Lq, Lk}, std::nullopt, std::span<float>(s32), {}, form);
    plan.scores(std::span<const double>(q), std::span<const double>(k), {Lq, Lk}, std::nullopt, std::span<double>(s64), {}, form);
    const relative::BoundParams b{.d = d, .dm = dm, .terms = 2, .abs_scale = 1 / std::sqrt(static_cast<double>(d)),
                                  .form = form, .rho32 = relative_table_rho(DType::f32, emu),
                                  .rho64 = relative_table_rho(DType::f64, emu)};
    BandMaxima bands;
    relative::sweep_scores(
        ctx, budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), Lq, Lk, entry, b, s32, s64, rows, cols,
        [&](std::size_t i) { return std::vector<std::size_t>{Lk - Lq + i, Lk - Lq + i + 1}; },
        [&](std::size_t i, std::size_t j) { return static_cast<std::int64_t>(Lk - Lq + i - j); },
        [&](std::size_t i, std::size_t j) {
          return describe(s) + " " + std::string(to_string(form)) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        },
        bands);
    bands.push(ctx.series, {{"scheme", "transformer_xl"}, {"preset", name + " (" + std::string(to_string(form)) + ")"},
                            {"regime", to_string(s.regime)}, {"dim", d}, {"metric", "|score - exact| / B"}});
  }
  std::fprintf(stderr, "%-24s scores L=%zu M=512 d_model=%zu d_head=%zu: %zu x %zu entries, both forms  (%.0f s)\n",
               name.c_str(), Lq, dm, d, rows, cols, ctx.elapsed_seconds());
}


POSENC_SWEEP(transformer_xl) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const int steps = smoke ? 1 : long_mode ? 16 : 4;
  const std::size_t rows = smoke ? 3 : long_mode ? 64 : 24, cols = smoke ? 4 : long_mode ? 64 : 24;
  for (const auto& info : SpecTraits<TransformerXlSpec>::presets())
    for (Regime regime : {Regime::exact, Regime::emulated}) {
      TransformerXlSpec s = info.spec;
      s.regime = regime;
      const std::string name(info.name);
      measure_table(ctx, s, name, steps);
      TransformerXlSpec unclamped = s;
      unclamped.clamp_len = -1;
      measure_table(ctx, unclamped, name + " without clamp_len", steps);
      measure_scores(ctx, s, name, rows, cols);
    }
}

}  // namespace sweep_transformer_xl
