// The KERPLE part of the accuracy sweep (support/sweep.hpp): the fast path against the MPFR oracle over a distance
// grid 0 .. 2^31 - 1, for every preset in its own (megatron) regime and in the exact regime, with weights spread
// over the reference's initialisation range, through the same rows as the properties. Series (error vs distance d,
// the largest over the heads):
//   exact regime:    max kernel error (ulp_f32) of KerplePlan::bias_value_f32;
//   megatron:        max |e32 - X| / |X| (relative): how far the reference's float32 bias is from the mathematics
//                    (the float32 1 + a d of the log kernel, D = RN32(d) above 2^24).
// Bias matrices of two geometries are measured too (measure_bias), so the matrix path reaches the rows as well.
//   default: 16 heads, 2 points per octave plus the hard distances; --long: 8 per octave; --smoke: 4 heads, 1.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "schemes/kerple/cases.hpp"
#include "schemes/kerple/measure.hpp"
#include "posenc/kerple.hpp"
#include "posenc/reference/kerple.hpp"
#include "support/sweep.hpp"

namespace sweep_kerple {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace kerple = posenc::test::kerple;  // the measuring harness (the checker is verify::kerple)
using nlohmann::json;
namespace ca = posenc::cases::kerple;
namespace rf = posenc::reference;

std::vector<std::int64_t> grid(int steps_per_octave) {
  std::set<std::int64_t> g{0};
  for (int i = 0; i <= 31 * steps_per_octave; ++i)
    g.insert(std::min<std::int64_t>((std::int64_t{1} << 31) - 1,
                                    static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave)))));
  for (std::int64_t x : ca::kHardDistances) g.insert(x);
  return {g.begin(), g.end()};
}

// Weights spread over the reference's initialisation (p ~ U(0, 2), a ~ U(0, 1)), a few at the clamp, as float32.
KerpleWeights spread(std::size_t heads) {
  KerpleWeights w;
  for (std::size_t h = 0; h < heads; ++h) {
    const double t = (static_cast<double>(h) + 0.5) / static_cast<double>(heads);
    w.p.push_back(static_cast<float>(h == 0 ? 0.01 : 2.0 * t));
    w.a.push_back(static_cast<float>(h == 1 ? 0.01 : std::exp2(-7.0 * (1 - t))));
  }
  return w;
}


POSENC_SWEEP(kerple) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const std::vector<std::int64_t> xs = grid(smoke ? 1 : long_mode ? 8 : ca::kSweepStepsPerOctave);
  const std::size_t heads = smoke ? 4 : 16;
  const KerpleWeights w = spread(heads);
  for (const auto& info : SpecTraits<KerpleSpec>::presets()) {
    const KerpleSpec preset = kerple_preset(info.name, heads);
    for (KerpleRegime regime : {KerpleRegime::exact, preset.regime}) {
      KerpleSpec s = preset;
      s.regime = regime;
      const bool emu = regime != KerpleRegime::exact;
      const KerplePlan plan(s, w);
      KerpleSpec es = s;
      es.regime = KerpleRegime::exact;
      const rf::KerpleOracle ex(es, w);
      json points = json::array();
      for (std::int64_t d : xs) {
        kerple::measure_value(s, w, d, ctx.aggregate);
        double worst = 0.0;
        for (std::size_t h = 0; h < heads; ++h) {
          const double y = plan.bias_value_f32(h, d);
          const double x = static_cast<double>(ex.bias_at(h, d));
          if (x == 0) continue;
          if (emu) {
            worst = std::max(worst, std::fabs(y - x) / std::fabs(x));
          } else {
            int e = 0;
            std::frexp(std::fabs(y), &e);
            worst = std::max(worst, std::fabs(y - x) / std::ldexp(1.0, e - 24));
          }
        }
        points.push_back({{"distance", d}, {"max_error", worst}});
      }
      ctx.series.push_back({{"scheme", "kerple"},
                            {"preset", std::string(info.name)},
                            {"regime", std::string(to_string(regime))},
                            {"dtype", "f32"},
                            {"dim", heads},
                            {"metric", emu ? "max |e32 - X| / |X| (relative), the reference's float32 steps"
                                           : "kernel error, ulp_f32"},
                            {"x", "distance"},
                            {"points", points}});
      if (emu) ctx.series.back()["reference"] = "exact";
      for (BiasMask mask : {BiasMask::none, BiasMask::causal}) {
        kerple::measure_bias(s, w, {.query_length = 257, .key_length = 300, .mask = mask}, ctx.aggregate, 4, 4, 24);
        kerple::measure_bias(s, w, {.query_length = 1, .key_length = 5000, .mask = mask}, ctx.aggregate, 4, 1, 40);
      }
      std::fprintf(stderr, "%-12s heads=%-4zu %-9s %4zu distances  (%.0f s)\n", std::string(info.name).c_str(), heads,
                   std::string(to_string(regime)).c_str(), xs.size(), ctx.elapsed_seconds());
    }
  }
}

}  // namespace sweep_kerple
