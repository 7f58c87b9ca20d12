// The NEZHA part of the accuracy sweep (support/sweep.hpp):
//  * for every preset, in both regimes, the whole table (rows r = 0..2K, every column) against the oracle, f32 and
//    f64; series: the largest error per row (exact: err_S in ulp of the output type; hf: ulp_f32 distance);
//  * HF's table against the exact one, every entry: |T_hf - T_exact| and its ratio to the envelope E (row
//    nezha.table.hf_vs_exact), series: max |T_hf - T_exact| per row r (the float32 frequencies' error grows with r);
//  * the same at K = 2^20 (the largest K accepted) on rows sampled per octave up to 2K: where a long-context
//    NEZHA-style table would drift.
//   default: 8 sampled rows per octave at K = 2^20; --long: 32; --smoke: 1.
// Scores and outputs go through the Shaw plan: the Shaw sweep measures that path at L = 4096 / 1024.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "schemes/nezha/budget.hpp"
#include "posenc/nezha.hpp"
#include "posenc/reference/nezha.hpp"
#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal.hpp"
#include "support/harness.hpp"
#include "support/sweep.hpp"

namespace sweep_nezha {  // its own namespace: the sweeps are compiled together (posenc_unity)

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;
namespace rf = posenc::reference;

// emit() plus the measured error (for the series).
double emit_err(const Sink& sink, NezhaRow key, double y, const Real& r, const Describe& what, double scale = 0.0) {
  const Measure m = measure(budget(key), y, r, scale);
  sink(budget(key), m, y, &r, what);
  return m.ok() ? m.err : std::numeric_limits<double>::infinity();
}

std::vector<std::size_t> rows_to_measure(std::size_t rows, std::size_t cap, int steps_per_octave) {
  std::set<std::size_t> g;
  if (rows <= cap) {
    for (std::size_t r = 0; r < rows; ++r) g.insert(r);
  } else {
    for (std::size_t r = 0; r < 16; ++r) g.insert(r);
    for (int i = 0; i <= 64 * steps_per_octave; ++i) {
      const double a = std::exp2(static_cast<double>(i) / steps_per_octave);
      if (a >= static_cast<double>(rows)) break;
      g.insert(static_cast<std::size_t>(a));
    }
    g.insert(rows / 2);
    g.insert(rows - 1);
  }
  return {g.begin(), g.end()};
}

// One spec: every measured row against the oracle (both regimes), and HF vs exact.
void measure_spec(SweepContext& ctx, const NezhaSpec& base, const std::string& name, int steps) {
  NezhaSpec hf = base, ex = base;
  hf.regime = NezhaRegime::hf;
  ex.regime = NezhaRegime::exact;
  const std::size_t rows = nezha_table_rows(base), d = base.depth;
  const std::vector<std::size_t> rs = rows_to_measure(rows, 1024, steps);
  const SinusoidalSpec sin_hf = nezha_sinusoidal_spec(hf);
  std::vector<double> w(d / 2);
  std::vector<float> w32(d / 2);
  for (std::size_t t = 0; t < d / 2; ++t) {
    w[t] = std::pow(10000.0, -2.0 * static_cast<double>(t) / static_cast<double>(d));
    w32[t] = static_cast<float>(rf::round_to_double(rf::emulated_frequency(sin_hf, t)));
  }
  json diff_pts = json::array(), ratio_pts = json::array();
  for (const NezhaSpec& s : {ex, hf}) {
    // The measured rows r of the table, at rs[n] * d: the whole table from NezhaPlan::table while it is small, else
    // the rows of the sinusoidal plan it is made of (NEZHA-REPRO-1: the same bits).
    std::vector<float> t32(rs.size() * d);
    std::vector<double> t64(rs.size() * d);
    if (rows <= 1024) {
      const NezhaPlan plan(s);
      std::vector<float> a32(rows * d);
      std::vector<double> a64(rows * d);
      plan.table(std::span<float>(a32));
      plan.table(std::span<double>(a64));
      for (std::size_t n = 0; n < rs.size(); ++n) {
        std::copy_n(a32.begin() + static_cast<std::ptrdiff_t>(rs[n] * d), d, t32.begin() + static_cast<std::ptrdiff_t>(n * d));
        std::copy_n(a64.begin() + static_cast<std::ptrdiff_t>(rs[n] * d), d, t64.begin() + static_cast<std::ptrdiff_t>(n * d));
      }
    } else {
      const std::vector<std::int64_t> pos(rs.begin(), rs.end());
      const SinusoidalPlan plan(nezha_sinusoidal_spec(s));
      plan.rows(pos, std::span<float>(t32));
      plan.rows(pos, std::span<double>(t64));
    }
    const bool is_hf = s.regime == NezhaRegime::hf;
    json p32 = json::array(), p64 = json::array();
    for (std::size_t n = 0; n < rs.size(); ++n) {
      const std::size_t r = rs[n];
      double m32 = 0, m64 = 0;
      for (std::size_t c = 0; c < d; ++c) {
        const Real e = rf::nezha_table_value(s, static_cast<std::int64_t>(r), c);
        auto what = [&] { return describe(s) + " r=" + std::to_string(r) + " c=" + std::to_string(c); };
        m32 = std::max(m32, emit_err(ctx.aggregate, is_hf ? NezhaRow::table_hf : NezhaRow::table_exact_f32,
                                 t32[n * d + c], e, what));
        m64 = std::max(m64, emit_err(ctx.aggregate, is_hf ? NezhaRow::table_hf : NezhaRow::table_exact_f64,
                                 t64[n * d + c], e, what));
      }
      p32.push_back({{"row", r}, {"max_error", m32}});
      p64.push_back({{"row", r}, {"max_error", m64}});
    }
    const std::string metric = is_hf ? "ulp_f32 distance from HF's float32 steps" : "err_S (S = 1), ulp of the dtype";
    ctx.series.push_back({{"scheme", "nezha"}, {"preset", name}, {"regime", to_string(s.regime)}, {"dtype", "f32"},
                          {"dim", d}, {"metric", metric}, {"x", "row"}, {"points", p32}});
    ctx.series.push_back({{"scheme", "nezha"}, {"preset", name}, {"regime", to_string(s.regime)}, {"dtype", "f64"},
                          {"dim", d}, {"metric", metric}, {"x", "row"}, {"points", p64}});
  }
  for (std::size_t r : rs) {
    double worst = 0, worst_ratio = 0;
    for (std::size_t c = 0; c < d; ++c) {
      const std::size_t t = c / 2;
      const Real yh = rf::nezha_table_value(hf, static_cast<std::int64_t>(r), c);
      const Real ye = rf::nezha_table_value(ex, static_cast<std::int64_t>(r), c);
      const double y = rf::round_to_double(yh);
      const float a32 = static_cast<float>(r) * w32[t];
      const double E = nezha_hf_envelope(static_cast<std::int64_t>(r), w[t], w32[t], a32, y);
      auto what = [&] { return describe(hf) + " vs exact r=" + std::to_string(r) + " c=" + std::to_string(c); };
      worst_ratio = std::max(worst_ratio, emit_err(ctx.aggregate, NezhaRow::hf_vs_exact, y, ye, what, E));
      worst = std::max(worst, std::fabs(rf::round_to_double(Real(yh - ye))));
    }
    diff_pts.push_back({{"row", r}, {"max_error", worst}});
    ratio_pts.push_back({{"row", r}, {"max_error", worst_ratio}});
  }
  ctx.series.push_back({{"scheme", "nezha"}, {"preset", name}, {"regime", "hf vs exact"}, {"dtype", "f32"}, {"dim", d},
                        {"metric", "max |T_hf - T_exact| per row"}, {"x", "row"}, {"points", diff_pts}});
  ctx.series.push_back({{"scheme", "nezha"}, {"preset", name}, {"regime", "hf vs exact"}, {"dtype", "f32"}, {"dim", d},
                        {"metric", "max |T_hf - T_exact| / E per row"}, {"x", "row"}, {"points", ratio_pts}});
  std::fprintf(stderr, "%-24s K=%zu depth=%zu: %zu rows x %zu columns, both regimes  (%.0f s)\n", name.c_str(),
               base.max_relative_position, d, rs.size(), d, ctx.elapsed_seconds());
}


POSENC_SWEEP(nezha) {
  const bool smoke = ctx.mode == SweepMode::smoke, long_mode = ctx.mode == SweepMode::extended;
  const int steps = smoke ? 1 : long_mode ? 32 : 8;
  for (const auto& info : SpecTraits<NezhaSpec>::presets()) measure_spec(ctx, info.spec, std::string(info.name), steps);
  NezhaSpec wide = SpecTraits<NezhaSpec>::presets()[0].spec;
  wide.max_relative_position = kNezhaMaxRelative;
  measure_spec(ctx, wide, "K=2^20 (nezha-cn-base otherwise)", steps);
}

}  // namespace sweep_nezha
