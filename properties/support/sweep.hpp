// properties/support/sweep.hpp — the accuracy sweep's registry. Each scheme's properties/<scheme>/sweep.cpp
// registers one function with POSENC_SWEEP(<scheme>); posenc_accuracy_sweep (support/sweep_main.cpp) runs them all
// (or the ones named with --scheme), aggregates every emitted case per budget row and writes accuracy.json:
// every budget row with its bound and measured maximum (worst input, sample count), the error-vs-position series
// of each scheme, and the run's meta. It exits 1 when a measured maximum exceeds its row.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

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

using SweepFn = void (*)(SweepContext&);
bool register_sweep(std::string_view scheme, SweepFn);

}  // namespace posenc::test

#define POSENC_SWEEP(scheme)                                                                       \
  static void posenc_sweep_##scheme(::posenc::test::SweepContext&);                                \
  [[maybe_unused]] static const bool posenc_sweep_registered_##scheme =                            \
      ::posenc::test::register_sweep(#scheme, &posenc_sweep_##scheme);                             \
  static void posenc_sweep_##scheme(::posenc::test::SweepContext& ctx)
