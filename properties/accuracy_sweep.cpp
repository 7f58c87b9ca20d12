// posenc_accuracy_sweep — measures the fast sinusoidal path against the MPFR oracle over a position grid
// and fills accuracy.json: every budget row with its claimed bound and measured maximum (worst input,
// sample count), and per (preset, regime, dtype, dim) the error-vs-position series for the report plots.
// It uses the same measuring harness as the properties (support/sinusoidal_measure.hpp).
//
//   posenc_accuracy_sweep [--out FILE] [--long] [--smoke]
//     default: dims 64 and 512, log-spaced positions 0 .. 2^40 (sqrt 2 steps) plus the hard positions
//     --long:  dims 7, 64, 512, 2048, positions in 2^(1/8) steps, every column
//     --smoke: dim 64, a handful of positions (the ctest entry)
// Exit status 1 if a measured maximum exceeds its budget row (the JSON is still written).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "budget.hpp"
#include "claims.hpp"
#include "generators.hpp"
#include "posenc/blas.hpp"
#include "posenc/error.hpp"
#include "posenc/reference/sinusoidal.hpp"
#include "posenc/sinusoidal.hpp"
#include "sinusoidal_measure.hpp"

namespace {

using namespace posenc;
using namespace posenc::test;
using nlohmann::json;

struct RowAgg {
  double max = -1;
  std::string worst;
  std::uint64_t samples = 0;
  std::map<std::string, std::uint64_t> failures;
};

std::map<std::string, RowAgg> g_rows;

void add(std::string_view row, const Measure& m, const Describe& in) {
  RowAgg& a = g_rows[std::string(row)];
  ++a.samples;
  const double e = m.ok() ? m.err : std::numeric_limits<double>::infinity();
  if (!m.ok()) ++a.failures[std::string(to_string(m.cls))];
  if (e > a.max) {
    a.max = e;
    a.worst = (m.ok() ? "" : "[" + std::string(to_string(m.cls)) + "] ") + in();
  }
}

Sink aggregate() {
  return [](std::string_view row, const Measure& m, double, const Real*, const Describe& in) { add(row, m, in); };
}

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

}  // namespace

int main(int argc, char** argv) {
  select_blas_kernels(argc, argv);
  std::string out = "accuracy.json";
  bool long_mode = false, smoke = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
    else if (!std::strcmp(argv[i], "--long")) long_mode = true;
    else if (!std::strcmp(argv[i], "--smoke")) smoke = true;
    else {
      std::fprintf(stderr, "usage: %s [--out FILE] [--long] [--smoke]\n", argv[0]);
      return 2;
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::size_t> dims = smoke ? std::vector<std::size_t>{64}
                                        : long_mode ? std::vector<std::size_t>{7, 64, 512, 2048}
                                                    : std::vector<std::size_t>{64, 512};
  const int steps = smoke ? 1 : long_mode ? 8 : 2;
  const DType both[] = {DType::f32, DType::f64};
  json series = json::array();

  for (const auto& info : sinusoidal_presets()) {
    for (std::size_t d : dims) {
      for (Regime regime : {Regime::exact, Regime::emulated}) {
        SinusoidalSpec s;
        try {
          s = preset_spec(info.preset, d);
          s.regime = regime;
          validate(s);
        } catch (const Error&) {
          continue;  // emulated paper rule, odd d for vaswani/marian
        }
        measure_frequencies(s, aggregate());
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
          auto sink = [&](std::string_view row, const Measure& m, double, const Real*, const Describe& in) {
            add(row, m, in);
            for (DType t : both)
              if (row == table_prefix + std::string(to_string(t)) + ".scaled" && m.ok()) {
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
          series.push_back({{"scheme", "sinusoidal"},
                            {"preset", std::string(info.name)},
                            {"regime", std::string(to_string(regime))},
                            {"dtype", std::string(to_string(t))},
                            {"dim", d},
                            {"metric", regime == Regime::exact ? "err_S (S=1)" : "err_S (S=1), ulp_f32, vs sin/cos(angle32)"},
                            {"points", points[t]}});

        // Exact regime: shift operator, its application, dot products, norms, Gram matrices.
        if (regime == Regime::exact) {
          const std::size_t stride = smoke ? 4 : 8;
          std::vector<std::int64_t> ks{1, 7, 1000, 48039, std::int64_t{1} << 20};
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
                                aggregate());
                  measure_dot(s, t, p, k, aggregate());
                }
              }
            if (!(s.padding_row && p == *s.padding_row))
              for (DType t : both) measure_dot(s, t, p, 0, aggregate());
            if (p + 16 <= max_abs_position(s) && !(s.padding_row && *s.padding_row >= p && *s.padding_row < p + 16))
              for (DType t : both) measure_gram(s, t, p, d <= 64 ? 16 : 8, aggregate());
            // T(a) T(b) vs T(a+b) and orthogonality are measured by the properties only.
          }
        } else {
          for (std::size_t i = 0; i < positions.size(); i += 4)
            if (!(s.padding_row && positions[i] == *s.padding_row))
              for (DType t : both) measure_dot(s, t, positions[i], 0, aggregate());
        }
        std::fprintf(stderr, "%-14s d=%-5zu %-8s %4zu positions  (%.0f s)\n", std::string(info.name).c_str(), d,
                     std::string(to_string(regime)).c_str(), positions.size(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }
  }

  json budget = json::array();
  bool over = false;
  for (const BudgetRow& row : budget_rows()) {
    json r{{"id", row.id},         {"scheme", row.scheme}, {"quantity", row.quantity}, {"dtype", row.dtype},
           {"regime", row.regime}, {"domain", row.domain}, {"metric", row.metric},     {"bound", row.bound},
           {"why", row.why}};
    const auto it = g_rows.find(row.id);
    if (it == g_rows.end() || it->second.samples == 0) {
      r["measured_max"] = nullptr;
      r["worst_input"] = nullptr;
      r["samples"] = 0;
      r["note"] = "measured by the property programs only (see proofs-*.json)";
    } else {
      const RowAgg& a = it->second;
      r["measured_max"] = std::isfinite(a.max) ? json(a.max) : json(nullptr);
      r["worst_input"] = a.worst;
      r["samples"] = a.samples;
      r["failures"] = a.failures;
      const bool fail = !std::isfinite(a.max) || a.max > row.bound;
      r["within_bound"] = !fail;
      if (fail) {
        over = true;
        std::fprintf(stderr, "OVER BUDGET: %s measured %.6g > bound %.6g at %s\n", row.id.c_str(), a.max, row.bound, a.worst.c_str());
      }
    }
    budget.push_back(r);
  }
  std::string program = argv[0];
  if (const auto slash = program.find_last_of('/'); slash != std::string::npos) program = program.substr(slash + 1);
  json meta = json::parse(run_meta_json(program));
  meta["mode"] = smoke ? "smoke" : long_mode ? "long" : "default";
  meta["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json doc{{"meta", meta}, {"budget", budget}, {"series", series}};
  std::ofstream f(out);
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 2;
  }
  f << doc.dump(1) << "\n";
  std::fprintf(stderr, "wrote %s (%.0f s)\n", out.c_str(), meta["seconds"].get<double>());
  for (const auto& r : budget)
    if (r["samples"].get<std::uint64_t>() > 0)
      std::fprintf(stderr, "  %-42s bound %-10.4g measured %-10.4g n=%llu\n", r["id"].get<std::string>().c_str(), r["bound"].get<double>(),
                   r["measured_max"].is_null() ? NAN : r["measured_max"].get<double>(),
                   static_cast<unsigned long long>(r["samples"].get<std::uint64_t>()));
  return over ? 1 : 0;
}
