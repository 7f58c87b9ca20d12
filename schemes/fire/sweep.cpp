// The FIRE part of the accuracy sweep (support/sweep.hpp): the fast path against the MPFR oracle over a grid of
// query positions 0 .. 2^24 - 1 (keys at 0, halfway, next to the query and at it), for every preset in its own
// regime and in the exact regime, with weights drawn like torch's default Linear init (a fixed seed; posenc's own
// generator, not torch's stream) and the reference's c = 0.1, L = 512, through the same rows as the properties.
// Series (error vs query position q, the largest over heads and keys):
//   exact regime:    max |y32 - b| / ulp32(b) (kernel error of FirePlan::bias_value_f32);
//   cramming:        max |e32 - b| / S: how far the reference's float32 bias is from the mathematics, relative to the
//                    MLP's condition scale S (budget.hpp).
// Bias matrices of two geometries are measured too (measure_bias), so the matrix path reaches the rows as well.
//   default: 12 heads, width 32, 2 points per octave plus the hard positions; --long: 8 per octave; --smoke: 2 heads,
//   width 8, 1 per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "schemes/fire/budget.hpp"
#include "schemes/fire/cases.hpp"
#include "schemes/fire/measure.hpp"
#include "posenc/fire.hpp"
#include "posenc/reference/fire.hpp"
#include "support/sweep.hpp"

namespace sweep_fire {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
namespace fire = posenc::test::fire;  // the measuring harness (the checker is verify::fire)
using nlohmann::json;
namespace ca = posenc::cases::fire;
namespace rf = posenc::reference;

std::vector<std::int64_t> grid(int steps_per_octave) {
  std::set<std::int64_t> g{0};
  for (int i = 0; i <= 24 * steps_per_octave; ++i)
    g.insert(std::min<std::int64_t>((std::int64_t{1} << 24) - 1,
                                    static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave)))));
  for (std::int64_t x : ca::kHardPositions) g.insert(x);
  return {g.begin(), g.end()};
}

// torch.nn.Linear's default init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as float32 numbers (a float32 checkpoint).
FireWeights torch_like(std::size_t heads, std::size_t width) {
  std::mt19937_64 rng(20231006);
  auto u = [&](double b) { return static_cast<double>(static_cast<float>(std::uniform_real_distribution<double>(-b, b)(rng))); };
  FireWeights w;  // c = 0.1, L_multiplier = 1, init_L = 512
  for (std::size_t k = 0; k < width; ++k) {
    w.w1.push_back(u(1.0));
    w.b1.push_back(u(1.0));
  }
  const double b2 = 1 / std::sqrt(static_cast<double>(width));
  for (std::size_t n = 0; n < heads * width; ++n) w.w2.push_back(u(b2));
  for (std::size_t h = 0; h < heads; ++h) w.b2.push_back(u(b2));
  return w;
}


POSENC_SWEEP(fire) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const std::vector<std::int64_t> qs = grid(smoke ? 1 : long_mode ? 8 : ca::kSweepStepsPerOctave);
  const std::size_t heads = smoke ? 2 : 12, width = smoke ? 8 : 32;
  const FireWeights w = torch_like(heads, width);
  for (const auto& info : SpecTraits<FireSpec>::presets()) {
    FireSpec preset = fire_preset(info.name, heads);
    preset.mlp_width = width;
    for (FireRegime regime : {FireRegime::exact, preset.regime}) {
      FireSpec s = preset;
      s.regime = regime;
      const bool emu = regime != FireRegime::exact;
      const FirePlan plan(s, w);
      FireSpec es = s;
      es.regime = FireRegime::exact;
      const rf::FireOracle ex(es, w);
      json points = json::array();
      for (std::int64_t q : qs) {
        double worst = 0.0;
        for (std::int64_t j : {std::int64_t{0}, q / 2, std::max<std::int64_t>(q - 1, 0), q}) {
          fire::measure_value(s, w, q, j, ctx.aggregate);
          for (std::size_t h = 0; h < heads; ++h) {
            const double y = plan.bias_value_f32(h, q, j);
            const double b = static_cast<double>(ex.bias_at(h, q, j));
            if (emu) {
              const double x = static_cast<double>(ex.x(q, j));
              worst = std::max(worst, std::fabs(y - b) / fire::condition_scale(s, w, h, x));
            } else if (b != 0) {
              worst = std::max(worst, std::fabs(y - b) / ulp(b, DType::f32));
            }
          }
        }
        points.push_back({{"position", q}, {"max_error", worst}});
      }
      ctx.series.push_back({{"scheme", "fire"},
                            {"preset", std::string(info.name)},
                            {"regime", std::string(to_string(regime))},
                            {"dtype", "f32"},
                            {"dim", heads},
                            {"metric", emu ? "max |e32 - b| / S (S: the MLP's condition scale), the reference's float32 steps"
                                           : "kernel error, ulp_f32"},
                            {"x", "query position"},
                            {"points", points}});
      if (emu) ctx.series.back()["reference"] = "exact";
      for (BiasMask mask : {BiasMask::none, BiasMask::causal}) {
        fire::measure_bias(s, w, {.query_length = 300, .key_length = 700, .mask = mask}, ctx.aggregate, 4, 6, 24);
        fire::measure_bias(s, w, {.query_length = 1, .key_length = 5000, .mask = mask}, ctx.aggregate, 4, 1, 40);
      }
      std::fprintf(stderr, "%-12s heads=%-4zu %-9s %4zu positions  (%.0f s)\n", std::string(info.name).c_str(), heads,
                   std::string(to_string(regime)).c_str(), qs.size(), ctx.elapsed_seconds());
      if (regime == preset.regime) break;  // fire-exact: its own regime is exact, measured once
    }
  }
}

}  // namespace sweep_fire
