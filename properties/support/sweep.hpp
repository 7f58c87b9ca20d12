// properties/support/sweep.hpp — the accuracy sweep's registry. Each scheme's schemes/<scheme>/sweep.cpp
// registers one function with POSENC_SWEEP(<scheme>); posenc_accuracy_sweep (support/sweep_main.cpp) runs them all
// (or the ones named with --scheme), aggregates every emitted case per budget row and writes accuracy.json:
// every budget row with its bound and measured maximum (worst input, sample count), the error-vs-position series
// of each scheme, and the run's meta. It exits 1 when a measured maximum exceeds its row.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <set>
#include <string_view>
#include <vector>

#include "support/harness.hpp"

namespace posenc::test {

enum class SweepMode { smoke, standard, extended };  // --smoke (ctest), default, --long
std::string_view to_string(SweepMode);

struct SweepContext {
  SweepMode mode = SweepMode::standard;
  Sink aggregate;                  // every case: into the per-row maxima of accuracy.json
  nlohmann::json series;           // append {"scheme", "preset", "regime", "dtype", "dim", "metric", "points": [...]}
  double elapsed_seconds() const;  // since the sweep started (progress lines)
};

using verify::emit_measured;  // verify/harness.hpp

// Helpers the relative schemes' sweeps share.
// Every distance 0..dense_to, then steps_per_octave points per octave up to 2^31 - 1, ascending.
inline std::vector<std::int64_t> distance_grid(int steps_per_octave, std::int64_t dense_to) {
  std::set<std::int64_t> g;
  for (std::int64_t a = 0; a <= dense_to; ++a) g.insert(a);
  for (int i = 0; i <= 31 * steps_per_octave; ++i)
    g.insert(std::min<std::int64_t>((std::int64_t{1} << 31) - 1,
                                    static_cast<std::int64_t>(std::round(std::exp2(static_cast<double>(i) / steps_per_octave)))));
  return {g.begin(), g.end()};
}
// n float32 values uniform in [-1, 1) (activations, tables), as doubles.
inline std::vector<double> random_floats(std::mt19937_64& rng, std::size_t n) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(u(rng));
  return v;
}
// The octave band of a distance: 0 for 0, else floor(log2 a) + 1.
inline std::size_t octave_band(std::int64_t a) {
  return a == 0 ? 0 : static_cast<std::size_t>(std::floor(std::log2(static_cast<double>(a)))) + 1;
}

// The largest error ratio per octave band of the distance, for f32 and f64 (scores sweeps): add() per entry, then
// push() appends two series (dtype f32 and f64, x "distance" = the band's first distance) built from `base` (scheme,
// preset, regime, dim, metric).
struct BandMaxima {
  std::map<std::size_t, std::pair<double, double>> by_band;
  void add(std::int64_t distance, double ratio32, double ratio64) {
    auto& [w32, w64] = by_band[octave_band(distance < 0 ? -distance : distance)];
    w32 = std::max(w32, ratio32);
    w64 = std::max(w64, ratio64);
  }
  void push(nlohmann::json& series, const nlohmann::json& base) const {
    nlohmann::json p32 = nlohmann::json::array(), p64 = nlohmann::json::array();
    for (const auto& [b, r] : by_band) {
      const std::int64_t x = b == 0 ? 0 : std::int64_t{1} << (b - 1);
      p32.push_back({{"distance", x}, {"max_error", r.first}});
      p64.push_back({{"distance", x}, {"max_error", r.second}});
    }
    for (const auto& [dt, pts] : {std::pair<const char*, const nlohmann::json&>{"f32", p32}, {"f64", p64}}) {
      nlohmann::json sr = base;
      sr["dtype"] = dt;
      sr["x"] = "distance";
      sr["points"] = pts;
      series.push_back(std::move(sr));
    }
  }
};

using SweepFn = void (*)(SweepContext&);
bool register_sweep(std::string_view scheme, SweepFn);

}  // namespace posenc::test

#define POSENC_SWEEP(scheme)                                                                       \
  static void posenc_sweep_##scheme(::posenc::test::SweepContext&);                                \
  [[maybe_unused]] static const bool posenc_sweep_registered_##scheme =                            \
      ::posenc::test::register_sweep(#scheme, &posenc_sweep_##scheme);                             \
  static void posenc_sweep_##scheme(::posenc::test::SweepContext& ctx)
