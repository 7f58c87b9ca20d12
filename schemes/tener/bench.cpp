// schemes/tener/bench.cpp — TENER: the sinusoid table of a call and the scores of one head, each with its in-run
// baselines (relative_bench.hpp: streaming store and plain loop for the table, a plain Q K^T sgemm of the same shape
// for the scores; DESIGN.md §5).
//
//   table/<variant>/L:<rows>/d:1024/threads:<n>   the table of a call of length rows / 2 (t = -L .. L - 1), d_head 1024
//                                                 (1 MiB and 1 GiB; init_size large enough that no row is zeroed)
//   scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n>   Lq = Lk = 4096, unscaled (TENER's default): three
//                                                 gemms (content, query term, key term) and two shifts vs one sgemm;
//                                                 the direct form at L 512
// Sanity: entries against the definition evaluated here in double, independently of the library.
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schemes/tener/cases.hpp"
#include "posenc/tener.hpp"
#include "relative_bench.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::tener;
using posenc::TenerSpec;
using posenc::TenerWeights;

// [sin | cos] of t, column m of d (h - 1 denominator, d even here), from the definition.
double independent_entry(std::int64_t t, std::size_t m, std::size_t d) {
  const std::size_t h = d / 2, k = m % h;
  const double a = static_cast<double>(t) * std::exp(-static_cast<double>(k) * std::log(10000.0) / static_cast<double>(h - 1));
  return m < h ? std::sin(a) : std::cos(a);
}

std::vector<double> values(std::size_t n, std::uint32_t seed) {
  std::vector<float> f(n);
  bias_bench::fill_uniform(f, seed);
  return {f.begin(), f.end()};
}

}  // namespace

POSENC_BENCH_SCHEME(tener) {
  const std::size_t d = cases::kBenchHeadDim;
  const TenerSpec scores_spec{.heads = 1, .d_head = d};
  const TenerWeights w{values(d, 31), values(d, 32)};
  const posenc::TenerPlan plan(scores_spec, w);
  return relative_bench::register_relative(
      "tener", cases::kBenchTableRows, cases::kBenchTableDim, cases::kBenchScoresLength, 512, d,
      [](bool emulated, std::size_t rows, std::span<float> out, const posenc::TableOptions& o) {
        const TenerSpec s{.heads = 1, .d_head = out.size() / rows, .init_size = rows,
                          .regime = emulated ? posenc::Regime::emulated : posenc::Regime::exact};
        posenc::tener_table(s, rows / 2, out, o);
      },
      [](std::size_t rows, std::size_t c, std::size_t m, std::size_t dd) {
        return independent_entry(static_cast<std::int64_t>(c) - static_cast<std::int64_t>(rows / 2), m, dd);
      },
      [plan](std::span<const float> q, std::span<const float> k, std::size_t L, std::span<float> out,
             const posenc::TableOptions& o, posenc::RelativeScoresForm form) {
        plan.scores(q, k, {L, L}, std::nullopt, out, o, form);
      },
      [w, d](std::span<const float> q, std::span<const float> k, std::size_t i,
             std::size_t j) -> std::optional<std::pair<double, double>> {
        double v = 0, mag = 0;
        const std::int64_t t = static_cast<std::int64_t>(j) - static_cast<std::int64_t>(i);
        for (std::size_t e = 0; e < d; ++e) {
          const double a = q[i * d + e] + w.r_r_bias[e], b = q[i * d + e] + w.r_w_bias[e];
          const double rq = independent_entry(t, e, d), rk = independent_entry(-t, e, d);
          v += a * k[j * d + e] + b * rq + k[j * d + e] * rk;
          mag += std::fabs(a * k[j * d + e]) + std::fabs(b * rq) + std::fabs(k[j * d + e] * rk);
        }
        return std::pair<double, double>{v, mag};
      });
}

}  // namespace posenc_bench
