// The ALiBi part of the accuracy sweep (support/sweep.hpp): the fast path against the MPFR oracle over a distance grid
// 0 .. 2^31 - 1, for every preset in its own regime and in the exact regime, through the same rows as the properties.
// Series (error vs distance x, per preset and regime, the largest over the heads):
//   exact regime:    max kernel error (ulp_f32) of AlibiPlan::bias_value_f32;
//   emulated regimes: max |b32 - m_h x| / |m_h x| (relative): how far the implementation's float32 bias is from the
//                    mathematics (the slope's rounding times x; above 2^24 the distance's rounding too).
// Bias matrices of a few geometries are measured too (measure_bias), so the matrix path reaches the rows as well.
//   default: 32 heads, 2 points per octave plus the hard distances; --long: 8 per octave; --smoke: 8 heads, 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "schemes/alibi/cases.hpp"
#include "schemes/alibi/measure.hpp"
#include "posenc/alibi.hpp"
#include "posenc/reference/alibi.hpp"
#include "support/sweep.hpp"

namespace sweep_alibi {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace alibi = posenc::test::alibi;  // the measuring harness (the checker is verify::alibi)
using nlohmann::json;
namespace ca = posenc::cases::alibi;
namespace rf = posenc::reference;

std::vector<std::int64_t> grid(int steps_per_octave) {
  std::set<std::int64_t> g{0};
  for (int i = 0; i <= 31 * steps_per_octave; ++i)
    g.insert(std::min<std::int64_t>(kAlibiMaxLength - 2,
                                    static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave)))));
  for (std::int64_t x : ca::kHardDistances) g.insert(x);
  return {g.begin(), g.end()};
}


POSENC_SWEEP(alibi) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const std::vector<std::int64_t> xs = grid(smoke ? 1 : long_mode ? ca::kSweepStepsPerOctaveLong : ca::kSweepStepsPerOctave);
  const std::size_t heads = smoke ? 8 : 32;
  for (const auto& info : SpecTraits<AlibiSpec>::presets()) {
    const AlibiSpec preset = alibi_preset(info.name, heads);
    std::vector<AlibiRegime> regimes{AlibiRegime::exact};
    if (preset.regime != AlibiRegime::exact) regimes.push_back(preset.regime);
    for (AlibiRegime regime : regimes) {
      AlibiSpec s = preset;
      s.regime = regime;
      s.variant = AlibiVariant::key;  // x = j: the oracle's bias(h, 0, x, 1, x + 1) is m_h x for any x
      const bool emu = regime != AlibiRegime::exact;
      alibi::measure_slopes(s, ctx.aggregate);
      const AlibiPlan plan(s);
      AlibiSpec es = s;
      es.regime = AlibiRegime::exact;
      const rf::AlibiOracle o(s), ex(es);
      const BudgetRow& row = budget(emu ? AlibiRow::bias_emulated : AlibiRow::bias_exact_f32);
      const BudgetRow& dev = budget(AlibiRow::emulated_vs_exact);
      json points = json::array();
      for (std::int64_t x : xs) {
        double worst = 0.0;
        const auto Lk = static_cast<std::size_t>(x) + 1, j = static_cast<std::size_t>(x);
        for (std::size_t h = 0; h < heads; ++h) {
          const float y = plan.bias_value_f32(h, x);
          const Real r = o.bias(h, 0, j, 1, Lk);
          auto what = [&] { return alibi::spec_label(s) + " h=" + std::to_string(h) + " x=" + std::to_string(x); };
          const Measure m = measure(row, static_cast<double>(y), r);
          ctx.aggregate(row, m, y, &r, what);
          const double yd = plan.bias_value_f64(h, x);
          const BudgetRow& row64 = budget(emu ? AlibiRow::bias_emulated : AlibiRow::bias_exact_f64);
          ctx.aggregate(row64, measure(row64, yd, r), yd, &r, what);
          if (emu) {
            const Real e = ex.bias(h, 0, j, 1, Lk);
            const double scale = alibi::emulated_vs_exact_scale(static_cast<double>(x), plan.slopes()[h],
                                                                static_cast<double>(ex.slope(h)), y);
            ctx.aggregate(dev, measure(dev, static_cast<double>(y), e, scale), y, &e, what);
            const double ed = static_cast<double>(e);
            if (ed != 0) worst = std::max(worst, std::fabs(static_cast<double>(y) - ed) / std::fabs(ed));
          } else if (m.ok()) {
            worst = std::max(worst, m.err);
          }
        }
        points.push_back({{"distance", x}, {"max_error", worst}});
      }
      ctx.series.push_back({{"scheme", "alibi"},
                            {"preset", std::string(info.name)},
                            {"regime", std::string(to_string(regime))},
                            {"dtype", "f32"},
                            {"dim", heads},
                            {"metric", emu ? "max |b32 - m x| / |m x| (relative), float32 steps of the preset"
                                           : "kernel error, ulp_f32"},
                            {"x", "distance"},
                            {"points", points}});
      if (emu) ctx.series.back()["reference"] = "exact";
      // Matrices: every variant's rows through the matrix path, two geometries.
      for (AlibiVariant v : {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                             AlibiVariant::key_counted, AlibiVariant::symmetric}) {
        AlibiSpec ms = s;
        ms.variant = v;
        for (BiasMask mask : {BiasMask::none, BiasMask::causal}) {
          alibi::measure_bias(ms, {.query_length = 257, .key_length = 300, .mask = mask}, ctx.aggregate, 4, 4, 24);
          alibi::measure_bias(ms, {.query_length = 1, .key_length = 5000, .mask = mask}, ctx.aggregate, 4, 1, 40);
        }
      }
      std::fprintf(stderr, "%-12s heads=%-4zu %-9s %4zu distances  (%.0f s)\n", std::string(info.name).c_str(), heads,
                   std::string(to_string(regime)).c_str(), xs.size(), ctx.elapsed_seconds());
    }
  }
}

}  // namespace sweep_alibi
