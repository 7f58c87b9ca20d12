// schemes/xlnet/bench.cpp — XLNet: the sinusoid table of a call and the scores of one head, each with its in-run
// baselines (relative_bench.hpp: streaming store and plain loop for the table, a plain Q K^T sgemm of the same shape
// for the scores; DESIGN.md §5).
//
//   table/<variant>/L:<rows>/d:1024/threads:<n>   the table of a bi call with klen = rows / 2 + 1 and qlen = rows - klen
//                                                 rows (pos_seq klen .. -qlen + 1), d_model 1024 (1 MiB and 1 GiB)
//   scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n>   a bi call (every entry defined, no mask), Lq = Lk =
//                                                 4096, d_model 64, no token types: the blas form vs sgemm; the direct
//                                                 form at L 512
// Sanity: entries against the definition evaluated here in double, independently of the library.
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schemes/xlnet/cases.hpp"
#include "posenc/xlnet.hpp"
#include "relative_bench.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::xlnet;
using posenc::XlnetSpec;
using posenc::XlnetWeights;

double independent_entry(std::int64_t p, std::size_t m, std::size_t d) {
  const std::size_t k = m % (d / 2);
  const double a = static_cast<double>(p) * std::pow(10000.0, -2.0 * static_cast<double>(k) / static_cast<double>(d));
  return m < d / 2 ? std::sin(a) : std::cos(a);
}

std::vector<double> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> f(n);
  bias_bench::fill_uniform(f, seed);
  return {f.begin(), f.end()};
}

// A bi call with `rows` table rows: klen + qlen = rows, qlen <= klen.
std::pair<std::size_t, std::size_t> lengths(std::size_t rows) { return {rows - (rows / 2 + 1), rows / 2 + 1}; }

}  // namespace

POSENC_BENCH_SCHEME(xlnet) {
  const std::size_t d = cases::kBenchHeadDim;
  const XlnetSpec scores_spec{.d_model = d, .heads = 1, .d_head = d};
  const XlnetWeights w{values(d, 21), values(d, 22), values(d, 23), values(2 * d, 24), values(d * d, 25)};
  const posenc::XlnetPlan plan(scores_spec, w);
  return relative_bench::register_relative(
      "xlnet", cases::kBenchTableRows, cases::kBenchTableDModel, cases::kBenchScoresLength, 512, d,
      [](bool emulated, std::size_t rows, std::span<float> out, const posenc::TableOptions& o) {
        const XlnetSpec s{.d_model = out.size() / rows, .heads = 1, .d_head = 1,
                          .regime = emulated ? posenc::Regime::emulated : posenc::Regime::exact};
        const auto [lq, lk] = lengths(rows);
        posenc::xlnet_table(s, lq, lk, out, o);
      },
      [](std::size_t rows, std::size_t c, std::size_t m, std::size_t dd) {
        return independent_entry(static_cast<std::int64_t>(lengths(rows).second) - static_cast<std::int64_t>(c), m, dd);
      },
      [plan](std::span<const float> q, std::span<const float> k, std::size_t L, std::span<float> out,
             const posenc::TableOptions& o, posenc::RelativeScoresForm form) {
        plan.scores(q, k, {L, L}, {}, std::nullopt, out, o, form);
      },
      [w, d](std::span<const float> q, std::span<const float> k, std::size_t i,
             std::size_t j) -> std::optional<std::pair<double, double>> {
        double v = 0, mag = 0;
        for (std::size_t e = 0; e < d; ++e) {
          double P = 0, Pm = 0;
          for (std::size_t m = 0; m < d; ++m) {
            const double r = independent_entry(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j), m, d);
            P += r * w.r[m * d + e];
            Pm += std::fabs(r * w.r[m * d + e]);
          }
          const double a = q[i * d + e] + w.r_w_bias[e], b = q[i * d + e] + w.r_r_bias[e];
          v += a * k[j * d + e] + b * P;
          mag += std::fabs(a * k[j * d + e]) + std::fabs(b) * Pm;
        }
        const double sc = 1 / std::sqrt(static_cast<double>(d));
        return std::pair<double, double>{sc * v, sc * mag};
      });
}

}  // namespace posenc_bench
