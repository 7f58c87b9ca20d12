// schemes/transformer_xl/bench.cpp — Transformer-XL: the sinusoid table of a call and the scores of one head, each
// with its in-run baselines (relative_bench.hpp: streaming store and plain loop for the table, a plain Q K^T sgemm of
// the same shape for the scores; DESIGN.md §5).
//
//   table/<variant>/L:<rows>/d:1024/threads:<n>   R of a call with `rows` keys (pos_seq rows - 1 .. 0), d_model 1024
//                                                 (rows 256: 1 MiB, cache; rows 2^18: 1 GiB, DRAM)
//   scores/<variant>/heads:1/L:4096/head_dim:64/threads:<n>   Lq = Lk = 4096 (no memory: causal by definition),
//                                                 d_model 64, the blas form (two gemms and the shift as a copy) vs
//                                                 sgemm; the direct form at L 512
// Sanity: entries against the definition evaluated here in double, independently of the library.
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "schemes/transformer_xl/cases.hpp"
#include "posenc/transformer_xl.hpp"
#include "relative_bench.hpp"

namespace posenc_bench {
namespace {

namespace cases = posenc::cases::transformer_xl;
using posenc::TransformerXlSpec;
using posenc::TransformerXlWeights;

// [sin | cos] of distance p, column m of d (paper frequencies), from the definition.
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

}  // namespace

POSENC_BENCH_SCHEME(transformer_xl) {
  const std::size_t d = cases::kBenchHeadDim;
  const TransformerXlSpec scores_spec{.d_model = d, .heads = 1, .d_head = d};
  const TransformerXlWeights w{values(d, 11), values(d, 12), values(d * d, 13)};
  const posenc::TransformerXlPlan plan(scores_spec, w);
  return relative_bench::register_relative(
      "transformer_xl", cases::kBenchTableRows, cases::kBenchTableDModel, cases::kBenchScoresLength, 512, d,
      [](bool emulated, std::size_t rows, std::span<float> out, const posenc::TableOptions& o) {
        const TransformerXlSpec s{.d_model = out.size() / rows, .heads = 1, .d_head = 1,
                                  .regime = emulated ? posenc::Regime::emulated : posenc::Regime::exact};
        posenc::transformer_xl_table(s, rows, out, o);
      },
      [](std::size_t rows, std::size_t c, std::size_t m, std::size_t dd) {
        return independent_entry(static_cast<std::int64_t>(rows - 1 - c), m, dd);
      },
      [plan](std::span<const float> q, std::span<const float> k, std::size_t L, std::span<float> out,
             const posenc::TableOptions& o, posenc::RelativeScoresForm form) {
        plan.scores(q, k, {L, L}, std::nullopt, out, o, form);
      },
      [w, d](std::span<const float> q, std::span<const float> k, std::size_t i,
             std::size_t j) -> std::optional<std::pair<double, double>> {
        if (j > i) return std::nullopt;
        double v = 0, mag = 0;
        for (std::size_t e = 0; e < d; ++e) {
          double P = 0, Pm = 0;
          for (std::size_t m = 0; m < d; ++m) {
            const double r = independent_entry(static_cast<std::int64_t>(i - j), m, d);
            P += w.r_net[e * d + m] * r;
            Pm += std::fabs(w.r_net[e * d + m] * r);
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
