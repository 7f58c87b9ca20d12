// The XLNet part of the accuracy sweep (support/sweep.hpp):
//  * for every preset, in both regimes, the table rows of pos_seq values 0 .. 64, then 4 per octave up to 2^30 - 1,
//    of both signs (the backward direction), every column, against the oracle, f32 and f64; series: the largest error
//    per |position|;
//  * the scores of a bi call with L = 2048 queries after 512 memory keys, token types of two segments, both forms,
//    f32 and f64, the preset's sizes (one head), sampled entries against the oracle, series: the largest ratio to B
//    per octave of the distance.
//   default: 24 query rows x 24 keys per form; --long: 64 x 64; --smoke: 3 x 4 and the table at 1 point per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "posenc/reference/xlnet.hpp"
#include "posenc/xlnet.hpp"
#include "support/bias_measure.hpp"
#include "support/harness.hpp"
#include "support/relative_measure.hpp"
#include "support/relative_sweep.hpp"
#include "support/sweep.hpp"
#include "schemes/xlnet/budget.hpp"
#include "schemes/xlnet/measure.hpp"

namespace sweep_xlnet {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace relative = posenc::test::relative;  // the measuring harness (the checker is verify::relative)
using nlohmann::json;
namespace rf = posenc::reference;
using R = XlnetRow;

void measure_table(SweepContext& ctx, const XlnetSpec& s, const std::string& name, int steps) {
  const bool emu = s.regime == Regime::emulated;
  std::vector<std::int64_t> grid;
  for (std::int64_t a : distance_grid(steps, 64))
    if (a < (std::int64_t{1} << 30)) grid.push_back(a);
  // A call's row of pos_seq value p is the sinusoidal plan's row of p (XLNET-REPRO-1): the grid's rows, both signs.
  std::vector<std::int64_t> pos;
  for (std::int64_t a : grid) pos.push_back(s.direction == XlnetDirection::backward ? -a : a);
  const relative::RowErrors errors = relative::measure_plan_rows(
      ctx, SinusoidalPlan(xlnet_sinusoidal_spec(s)), pos, s.d_model,
      budget(emu ? R::table_emulated : R::table_exact_f32), budget(emu ? R::table_emulated : R::table_exact_f64),
      [&](std::size_t n, std::size_t m) { return rf::xlnet_table_value(s, pos[n], m); },
      [&](std::size_t n, std::size_t m) {
        return describe(s) + " position=" + std::to_string(pos[n]) + " m=" + std::to_string(m);
      });
  relative::push_table_series(ctx, "xlnet", name, s.regime, s.d_model, "relative_positional_encoding", grid, errors);
}

void measure_scores(SweepContext& ctx, const XlnetSpec& base, const std::string& name, std::size_t rows,
                    std::size_t cols) {
  XlnetSpec s = base;
  s.heads = 1;
  std::mt19937_64 rng(0x71e7ull + s.d_model);
  const std::size_t d = s.d_head, dm = s.d_model, Lq = 2048, Lk = Lq + 512;
  const XlnetWeights w{random_floats(rng, d), random_floats(rng, d), random_floats(rng, d), random_floats(rng, 2 * d),
                       random_floats(rng, dm * d)};
  const XlnetPlan plan(s, w);
  const rf::XlnetOracle o(s, w);
  const std::vector<double> q = random_floats(rng, Lq * d), k = random_floats(rng, Lk * d);
  const std::vector<float> q32(q.begin(), q.end()), k32(k.begin(), k.end());
  std::vector<std::int64_t> types(Lq, 0);
  for (std::size_t i = Lq / 2; i < Lq; ++i) types[i] = 1;  // two segments
  const std::size_t trows = xlnet_table_rows(s, Lq, Lk);
  // The magnitudes of B need |R| only to a part in 10^9: the plan's own double table (XLNET-TABLE-1 holds it).
  std::vector<double> table(trows * dm);
  plan.table(Lq, Lk, std::span<double>(table));
  const bool emu = s.regime == Regime::emulated;
  const relative::Call call{.Lq = Lq, .Lk = Lk, .key_mask = {}, .types = types};
  const relative::EntryFn entry = xlnet_measure::entry_fn(o, w, call, table, q, k, std::nullopt);
  for (RelativeScoresForm form : {RelativeScoresForm::blas, RelativeScoresForm::direct}) {
    std::vector<float> s32(Lq * Lk);
    std::vector<double> s64(Lq * Lk);
    plan.scores(std::span<const float>(q32), std::span<const float>(k32), {Lq, Lk}, types, std::nullopt, std::span<float>(s32), {}, form);
    plan.scores(std::span<const double>(q), std::span<const double>(k), {Lq, Lk}, types, std::nullopt, std::span<double>(s64), {}, form);
    const relative::BoundParams b{.d = d, .dm = dm, .terms = 3, .abs_scale = 1 / std::sqrt(static_cast<double>(d)),
                                  .form = form, .rho32 = relative_table_rho(DType::f32, emu),
                                  .rho64 = relative_table_rho(DType::f64, emu)};
    BandMaxima bands;
    relative::sweep_scores(
        ctx, budget(R::scores_f32), budget(R::scores_f64), budget(R::masked), Lq, Lk, entry, b, s32, s64, rows, cols,
        [&](std::size_t i) { return std::vector<std::size_t>{Lk - Lq + i, Lk - Lq + i + 1}; },
        [&](std::size_t i, std::size_t j) { return static_cast<std::int64_t>(Lk - Lq + i) - static_cast<std::int64_t>(j); },
        [&](std::size_t i, std::size_t j) {
          return describe(s) + " " + std::string(to_string(form)) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        },
        bands);
    bands.push(ctx.series, {{"scheme", "xlnet"}, {"preset", name + " (" + std::string(to_string(form)) + ")"},
                            {"regime", to_string(s.regime)}, {"dim", d}, {"metric", "|score - exact| / B"}});
  }
  std::fprintf(stderr, "%-24s scores L=%zu M=512 d_model=%zu d_head=%zu: %zu x %zu entries, both forms  (%.0f s)\n",
               name.c_str(), Lq, dm, d, rows, cols, ctx.elapsed_seconds());
}


POSENC_SWEEP(xlnet) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const int steps = smoke ? 1 : long_mode ? 16 : 4;
  const std::size_t rows = smoke ? 3 : long_mode ? 64 : 24, cols = smoke ? 4 : long_mode ? 64 : 24;
  for (const auto& info : SpecTraits<XlnetSpec>::presets())
    for (Regime regime : {Regime::exact, Regime::emulated}) {
      XlnetSpec s = info.spec;
      s.regime = regime;
      const std::string name(info.name);
      measure_table(ctx, s, name, steps);
      XlnetSpec backward = s;
      backward.direction = XlnetDirection::backward;
      measure_table(ctx, backward, name + " backward", steps);
      measure_scores(ctx, s, name, rows, cols);
    }
}

}  // namespace sweep_xlnet
