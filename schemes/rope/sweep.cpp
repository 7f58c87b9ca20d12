// The RoPE part of the accuracy sweep (support/sweep.hpp): the fast path against the MPFR oracle over a position
// grid 0 .. 2^40, for every preset in its own regime and in the exact regime, through the same measuring harness as
// the properties (measure.hpp). Series (error vs position, per preset, regime, head_dim):
//   exact regime:   max err_S (S = 1, ulp_f32) of the f32 cache;
//   hf/ggml regimes: max |c32 - cos(p theta_k)| over the sampled pairs (absolute): the long-context deviation of
//                   the implementation's float32 arithmetic from the mathematics, beside the exact regime's.
//   default: head_dim 64 and 128, 2 points per octave plus the hard positions; --long: 8 points per octave;
//   --smoke: head_dim 64, one point per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "posenc/rope.hpp"
#include "schemes/rope/cases.hpp"
#include "schemes/rope/measure.hpp"
#include "support/sweep.hpp"

namespace sweep_rope {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace rope = posenc::test::rope;  // the measuring harness (the checker is verify::rope)
using nlohmann::json;
namespace cr = posenc::cases::rope;

std::vector<std::int64_t> grid(int steps_per_octave) {
  std::set<std::int64_t> g{0};
  for (int i = 0; i <= 40 * steps_per_octave; ++i) g.insert(static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave))));
  for (std::int64_t p : cr::kHardPositions) g.insert(p);
  return {g.begin(), g.end()};
}

std::vector<std::size_t> pairs_of(std::size_t h, std::size_t n) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < std::min(h, n); ++i) out.push_back(h <= n ? i : i * (h - 1) / (n - 1));
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}


POSENC_SWEEP(rope) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const cr::SweepMode& m = smoke ? cr::kSweepSmoke : long_mode ? cr::kSweepLong : cr::kSweepDefault;
  const std::vector<std::int64_t> positions = grid(m.steps_per_octave);
  for (const auto& info : SpecTraits<RopeSpec>::presets()) {
    for (std::size_t i = 0; i < m.n_dims; ++i) {
      const RopeSpec preset = rope_preset(info.name, m.head_dims[i]);
      std::vector<RopeRegime> regimes{RopeRegime::exact};
      if (preset.regime != RopeRegime::exact) regimes.push_back(preset.regime);
      for (RopeRegime regime : regimes) {
        RopeSpec s = preset;
        s.regime = regime;
        rope::measure_frequencies(s, ctx.aggregate);
        const bool emu = regime != RopeRegime::exact;
        const auto pairs = pairs_of(pair_count(s), long_mode ? pair_count(s) : 32);
        json points = json::array();
        for (std::int64_t p : positions) {
          double worst = 0.0;
          auto sink = [&](const BudgetRow& row, const Measure& meas, double y, const Real* r, const Describe& in) {
            ctx.aggregate(row, meas, y, r, in);
            if (!meas.ok() || !r) return;
            if (emu && row.id == "rope.cache.emulated_vs_exact.ratio") worst = std::max(worst, abs_diff(y, *r));
            if (!emu && row.id == "rope.cache.exact.f32.scaled") worst = std::max(worst, meas.err);
          };
          const std::int64_t one[] = {p};
          rope::measure_cache(s, one, pairs, sink);
          if (p % 7 == 0 || p < 8) {  // rotations at a subset of the grid (both directions)
            std::vector<double> x(s.head_dim);
            for (std::size_t c = 0; c < x.size(); ++c) x[c] = std::sin(0.7 * static_cast<double>(c) + 0.3) * 2.0;
            rope::measure_apply(s, one, x, RopeDirection::forward, ctx.aggregate);
            rope::measure_apply(s, one, x, RopeDirection::inverse, ctx.aggregate);
          }
          points.push_back({{"position", p}, {"max_error", worst}});
        }
        // Series of the largest head_dim only (the smaller ones are measured, not plotted: their lines would
        // repeat the same curves).
        if (i + 1 == m.n_dims) {
          json series = {{"scheme", "rope"},
                         {"preset", std::string(info.name)},
                         {"regime", std::string(to_string(regime))},
                         {"dtype", "f32"},
                         {"dim", s.head_dim},
                         {"metric", emu ? "max |cos/sin - exact| (absolute), float32 steps of the preset"
                                        : "err_S (S=1), ulp_f32"},
                         {"points", points}};
          if (emu) series["reference"] = "exact";  // against the exact mathematics, not its own regime's oracle
          ctx.series.push_back(series);
        }
        std::fprintf(stderr, "%-12s head_dim=%-4zu %-6s %4zu positions  (%.0f s)\n", std::string(info.name).c_str(),
                     s.head_dim, std::string(to_string(regime)).c_str(), positions.size(), ctx.elapsed_seconds());
      }
    }
  }
}

}  // namespace sweep_rope
