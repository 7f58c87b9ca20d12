// The T5 part of the accuracy sweep (support/sweep.hpp): the fast path's bucket against the oracle's over a grid of
// relative positions -(2^31 - 1) .. 2^31 - 1 (both sides), for every preset in its own (hf) regime and in the exact
// regime, through the same rows as the properties. Series (x: the distance a = |r|, both sides at each point): the
// largest |bucket - oracle bucket| (0 everywhere is the claim), and, for the hf regime, how far HF's float32 bucket
// is from the exact one (the exact-vs-float32 differences a real T5 model carries).
//   default: 8 points per octave plus every a <= 4 max_distance; --long: 32 per octave; --smoke: 1 per octave.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "posenc/reference/t5.hpp"
#include "posenc/t5.hpp"
#include "support/harness.hpp"
#include "support/sweep.hpp"
#include "schemes/t5/budget.hpp"

namespace sweep_t5 {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;
namespace rf = posenc::reference;


POSENC_SWEEP(t5) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  for (const auto& info : SpecTraits<T5Spec>::presets()) {
    const T5Spec preset = t5_preset(info.name, 1);
    const std::vector<std::int64_t> xs = distance_grid(smoke ? 1 : long_mode ? 32 : 8, smoke ? 64 : 4 * preset.max_distance);
    for (T5Regime regime : {T5Regime::exact, preset.regime}) {
      T5Spec s = preset;
      s.regime = regime;
      T5Spec es = s;
      es.regime = T5Regime::exact;
      const T5Plan plan(s, T5Weights{std::vector<double>(s.num_buckets, 0.0)});
      const BudgetRow& row = budget(regime == T5Regime::exact ? T5Row::bucket_exact : T5Row::bucket_hf);
      json points = json::array(), vs_exact = json::array();
      for (std::int64_t a : xs) {
        double worst = 0.0, off = 0.0;
        for (std::int64_t r : {-a, a}) {
          const std::int64_t got = plan.bucket(r), want = rf::t5_bucket(s, r);
          worst = std::max(worst, static_cast<double>(std::llabs(got - want)));
          emit(ctx.aggregate, row, static_cast<double>(got), Real(static_cast<double>(want)),
               [&] { return describe(s) + " r=" + std::to_string(r); });
          if (regime != T5Regime::exact) off = std::max(off, static_cast<double>(std::llabs(got - rf::t5_bucket(es, r))));
        }
        points.push_back({{"distance", a}, {"max_error", worst}});
        if (regime != T5Regime::exact) vs_exact.push_back({{"distance", a}, {"max_error", off}});
      }
      ctx.series.push_back({{"scheme", "t5"}, {"preset", std::string(info.name)}, {"regime", std::string(to_string(regime))},
                            {"dtype", "int"}, {"dim", s.num_buckets}, {"metric", "|bucket - oracle bucket|"},
                            {"x", "distance"}, {"points", points}});
      if (regime != T5Regime::exact)
        ctx.series.push_back({{"scheme", "t5"}, {"preset", std::string(info.name)}, {"regime", std::string(to_string(regime))},
                              {"dtype", "int"}, {"dim", s.num_buckets}, {"reference", "exact"},
                              {"metric", "|HF float32 bucket - exact bucket|"}, {"x", "distance"}, {"points", vs_exact}});
      std::fprintf(stderr, "%-12s %-6s %4zu distances  (%.0f s)\n", std::string(info.name).c_str(),
                   std::string(to_string(regime)).c_str(), xs.size(), ctx.elapsed_seconds());
    }
  }
}

}  // namespace sweep_t5
