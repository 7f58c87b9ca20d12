// The sinusoidal part of the accuracy sweep (support/sweep.hpp): the fast path against the MPFR oracle over a
// position grid, for every preset, regime, output type and the case table's sweep dims (cases.hpp), through the
// same measuring harness as the properties (measure.hpp). Series: error vs position per (preset, regime, dtype, dim).
//   default: dims 64 and 512, log-spaced positions 0 .. 2^40 (2 points per octave) plus the hard positions
//   --long:  dims 7, 64, 512, 2048, 8 points per octave
//   --smoke: dim 64, one point per octave and a few hard positions (the ctest entry)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "posenc/linalg.hpp"
#include "posenc/sinusoidal.hpp"
#include "schemes/sinusoidal/cases.hpp"
#include "schemes/sinusoidal/generators.hpp"
#include "schemes/sinusoidal/measure.hpp"
#include "support/sweep.hpp"

namespace sweep_sinusoidal {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;

std::vector<std::int64_t> grid(const SinusoidalSpec& s, int steps_per_octave) {
  std::set<std::int64_t> g{0};
  const std::int64_t lim = max_abs_position(s);
  for (int i = 0; i <= 40 * steps_per_octave; ++i) {
    const double x = std::round(std::exp2(static_cast<double>(i) / steps_per_octave));
    if (x <= static_cast<double>(lim)) g.insert(static_cast<std::int64_t>(x));
  }
  g.insert(lim);
  return {g.begin(), g.end()};
}


POSENC_SWEEP(sinusoidal) {
  namespace cs = posenc::cases::sinusoidal;
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const cs::SweepMode& m = smoke ? cs::kSweepSmoke : long_mode ? cs::kSweepLong : cs::kSweepDefault;
  const std::vector<std::size_t> dims(m.dims.begin(), m.dims.begin() + static_cast<std::ptrdiff_t>(m.n_dims));
  const int steps = m.steps_per_octave;
  const DType both[] = {DType::f32, DType::f64};
  const Sink& aggregate = ctx.aggregate;

  for (const auto& info : SpecTraits<SinusoidalSpec>::presets()) {
    for (std::size_t d : dims) {
      for (Regime regime : {Regime::exact, Regime::emulated}) {
        SinusoidalSpec s = info.spec;
        s.dim = d;
        s.regime = regime;
        if (!is_valid(s)) continue;  // odd d for vaswani/marian
        measure_frequencies(s, aggregate);
        std::vector<std::int64_t> positions = grid(s, steps);
        std::vector<PositionCase> hard = hard_positions(s, smoke ? 1 : 2);
        if (smoke) hard.resize(std::min<std::size_t>(hard.size(), 12));
        for (const auto& h : hard) positions.push_back(h.p);
        std::sort(positions.begin(), positions.end());
        positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
        const auto cols = sample_columns(d, long_mode ? d : (d <= 64 ? d : 96));
        // Per dtype: per position max / mean of the row's table metric.
        std::map<DType, json> points;
        for (DType t : both) points[t] = json::array();
        std::size_t n = 0;
        for (std::int64_t p : positions) {
          std::map<DType, std::pair<double, double>> acc;  // max, sum
          std::map<DType, std::size_t> cnt;
          const std::string table_prefix = regime == Regime::exact ? "sinusoidal.table.exact." : "sinusoidal.table.emulated.";
          auto sink = [&](const BudgetRow& row, const Measure& m, double y, const Real* r, const Describe& in) {
            aggregate(row, m, y, r, in);
            for (DType t : both)
              if (row.id == table_prefix + std::string(to_string(t)) + ".scaled" && m.ok()) {
                auto& a = acc[t];
                a.first = std::max(a.first, m.err);
                a.second += m.err;
                ++cnt[t];
              }
          };
          measure_entries(s, std::span<const DType>(both), p, (n * 29) % 64, cols, sink);
          ++n;
          for (DType t : both)
            if (cnt[t])
              points[t].push_back({{"position", p}, {"max_error", acc[t].first}, {"mean_error", acc[t].second / static_cast<double>(cnt[t])}});
        }
        for (DType t : both)
          ctx.series.push_back({{"scheme", "sinusoidal"},
                            {"preset", std::string(info.name)},
                            {"regime", std::string(to_string(regime))},
                            {"dtype", std::string(to_string(t))},
                            {"dim", d},
                            {"metric", regime == Regime::exact ? "err_S (S=1)" : "err_S (S=1), ulp_f32, vs sin/cos(angle32)"},
                            {"points", points[t]}});

        // Exact regime: shift operator, its application, dot products, norms, Gram matrices.
        if (regime == Regime::exact) {
          const std::size_t stride = smoke ? 4 : 8;
          std::vector<std::int64_t> ks(std::begin(cs::kShifts), std::end(cs::kShifts));
          for (std::int64_t q : quarter_pi_positions(s, 0))
            if (q > 8 && ks.size() < 8) ks.push_back(q);
          const auto scols = sample_columns(d, 32);
          for (std::size_t i = 0; i < positions.size(); i += stride) {
            const std::int64_t p = positions[i];
            for (std::int64_t k0 : ks)
              for (std::int64_t k : {k0, -k0}) {
                if (p + k < 0 || p + k + 3 > max_abs_position(s) || p + 3 > max_abs_position(s)) continue;
                if (s.padding_row && ((*s.padding_row >= p && *s.padding_row <= p + 3) || (*s.padding_row >= p + k && *s.padding_row <= p + k + 3)))
                  continue;
                for (DType t : both) {
                  measure_shift(s, t, p, k, 4, (i / stride + static_cast<std::size_t>(k0)) % 2 ? ShiftMethod::gemm : ShiftMethod::rot, scols,
                                aggregate);
                  measure_dot(s, t, p, k, aggregate);
                }
              }
            if (!(s.padding_row && p == *s.padding_row))
              for (DType t : both) measure_dot(s, t, p, 0, aggregate);
            if (p + 16 <= max_abs_position(s) && !(s.padding_row && *s.padding_row >= p && *s.padding_row < p + 16))
              for (DType t : both) measure_gram(s, t, p, d <= 64 ? 16 : 8, aggregate);
            // T(a) T(b) vs T(a+b) and orthogonality are measured by the properties only.
          }
        } else {
          for (std::size_t i = 0; i < positions.size(); i += 4)
            if (!(s.padding_row && positions[i] == *s.padding_row))
              for (DType t : both) measure_dot(s, t, positions[i], 0, aggregate);
        }
        std::fprintf(stderr, "%-14s d=%-5zu %-8s %4zu positions  (%.0f s)\n", std::string(info.name).c_str(), d,
                     std::string(to_string(regime)).c_str(), positions.size(),
                     ctx.elapsed_seconds());
      }
    }
  }

}

}  // namespace sweep_sinusoidal
