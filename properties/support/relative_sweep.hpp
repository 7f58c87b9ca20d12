// properties/support/relative_sweep.hpp — the accuracy sweep of the sinusoid-relative attentions (Transformer-XL,
// XLNet, TENER), written once. Tables: a call's row of position p is the sinusoidal plan's row of p (each scheme's
// *-REPRO-1 claim), so the rows of a grid of positions come from the plan directly, every entry held to the scheme's
// f32 and f64 table rows against its oracle, and the largest error per row becomes the series. Scores: sampled
// entries of one call against the entry function the scheme's claims use (schemes/<scheme>/measure.hpp), the largest
// ratio to the bound per octave of distance becomes the series.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "posenc/sinusoidal.hpp"
#include "support/bias_measure.hpp"
#include "support/relative_measure.hpp"
#include "support/sweep.hpp"

namespace posenc::test::relative {

// The largest error of each row (f32, f64) of the plan's rows at `positions`, [dim] each: entry m of row n against
// oracle(n, m) under row32 / row64, every entry emitted to ctx.aggregate (what(n, m) describes it).
struct RowErrors {
  std::vector<double> f32, f64;
};
inline RowErrors measure_plan_rows(SweepContext& ctx, const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                                   std::size_t dim, const BudgetRow& row32, const BudgetRow& row64,
                                   const std::function<Real(std::size_t n, std::size_t m)>& oracle,
                                   const std::function<std::string(std::size_t n, std::size_t m)>& what) {
  std::vector<float> t32(positions.size() * dim);
  std::vector<double> t64(positions.size() * dim);
  plan.rows(positions, std::span<float>(t32));
  plan.rows(positions, std::span<double>(t64));
  RowErrors out{std::vector<double>(positions.size()), std::vector<double>(positions.size())};
  for (std::size_t n = 0; n < positions.size(); ++n)
    for (std::size_t m = 0; m < dim; ++m) {
      const Real e = oracle(n, m);
      const Describe describe = [&] { return what(n, m); };
      out.f32[n] = std::max(out.f32[n], emit_measured(ctx.aggregate, row32, t32[n * dim + m], e, describe));
      out.f64[n] = std::max(out.f64[n], emit_measured(ctx.aggregate, row64, t64[n * dim + m], e, describe));
    }
  return out;
}

// The two series (f32, f64) of a table sweep: the largest error per grid distance, under the regime's metric.
inline void push_table_series(SweepContext& ctx, const std::string& scheme, const std::string& preset, Regime regime,
                              std::size_t dim, const std::string& emulated_steps, std::span<const std::int64_t> grid,
                              const RowErrors& errors) {
  const std::string metric = regime == Regime::emulated ? "ulp_f32 distance from " + emulated_steps + "'s float32 steps"
                                                        : "err_S (S = 1), ulp of the dtype";
  for (const auto& [dt, max] : {std::pair<const char*, const std::vector<double>&>{"f32", errors.f32}, {"f64", errors.f64}}) {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t n = 0; n < grid.size(); ++n) points.push_back({{"distance", grid[n]}, {"max_error", max[n]}});
    ctx.series.push_back({{"scheme", scheme}, {"preset", preset}, {"regime", to_string(regime)}, {"dtype", dt},
                          {"dim", dim}, {"metric", metric}, {"x", "distance"}, {"points", points}});
  }
}

// The scores of one call in one form, one head ([Lq][Lk], f32 and f64) at the sampled rows (0, Lq - 1, the block
// seams 255, 256, 1024; up to max_rows) and keys (keys_must(i); up to max_cols) against entry(0, i, j): hidden entries
// must be -inf (masked_row), visible ones are held to row32 / row64 under the bound b, and each pair of ratios goes
// into `bands` at distance(i, j). what(i, j) names an entry.
template <class Keys, class Distance, class What>
void sweep_scores(SweepContext& ctx, const BudgetRow& row32, const BudgetRow& row64, const BudgetRow& masked_row,
                  std::size_t Lq, std::size_t Lk, const EntryFn& entry, const BoundParams& b,
                  std::span<const float> s32, std::span<const double> s64, std::size_t max_rows, std::size_t max_cols,
                  Keys&& keys_must, Distance&& distance, What&& what, BandMaxima& bands) {
  for (std::size_t i : sample_indices(Lq, max_rows, {255, 256, 1024}))
    for (std::size_t j : sample_indices(Lk, max_cols, keys_must(i))) {
      const std::size_t at = i * Lk + j;
      const Describe named = [&] { return what(i, j); };
      const Entry e = entry(0, i, j);
      if (!e.visible) {
        masked_entry(ctx.aggregate, masked_row, s32[at], named);
        masked_entry(ctx.aggregate, masked_row, s64[at], named);
        continue;
      }
      const double r32 = emit_measured(ctx.aggregate, row32, s32[at], e.exact, named,
                                       relative_scores_bound(DType::f32, b.form, b.d, b.dm, b.terms, b.abs_scale,
                                                             e.magnitudes, b.rho32));
      const double r64 = emit_measured(ctx.aggregate, row64, s64[at], e.exact, named,
                                       relative_scores_bound(DType::f64, b.form, b.d, b.dm, b.terms, b.abs_scale,
                                                             e.magnitudes, b.rho64));
      bands.add(distance(i, j), r32, r64);
    }
}

}  // namespace posenc::test::relative
