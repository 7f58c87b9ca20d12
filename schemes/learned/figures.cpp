// Learned absolute positions' figures (reports/figures/figures.hpp; drawn by schemes/learned/report.py):
//   ids       the position ids of each preset (position_ids, as `posenc ids learned` prints them) for kExamples,
//             the presets' id maps, whether the presets of one map agree, and whether every id equals the
//             oracle's (reference::learned_position_ids, an independent transcription of learned_spec.hpp)
//   relative  <row(p), row(p + k)> for p < kPositions and k in kOffsets, of a random table N(0, kInitStd^2) rounded
//             to float32 (CPython's random.Random(kSeed).gauss, as the report drew it before: the same numbers) read
//             through LearnedPlan::lookup, and of the vaswani sinusoidal table (SinusoidalPlan::table, f64): per
//             table the mean |row|^2 and per k the min, max, mean, standard deviation and spread over p (dot products
//             summed exactly, as math.fsum), with the summary numbers the caption quotes and whether the sinusoidal
//             means equal sum_i cos(omega_i k) within 1e-12 dim
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/learned.hpp"
#include "posenc/reference/learned.hpp"
#include "posenc/sinusoidal.hpp"
#include "python_compat.hpp"

namespace learned_figures {

using posenc::figures::fsum;
using posenc::figures::Json;
using Table = std::vector<std::vector<double>>;  // [row][column]

constexpr const char* kPresets[] = {"bert", "gpt2", "roberta", "fairseq", "opt"};

// Token id 1 is the padding token of RoBERTa, fairseq and OPT (padding_idx 1); 0 and 2 are RoBERTa's <s> and </s>,
// 713 and 16 ordinary words. The attention mask covers past + L entries.
struct Example {
  const char* label;
  std::vector<std::int64_t> tokens;
  const char* mask;
  std::int64_t past;
};
const Example kExamples[] = {
    {"right padding", {0, 713, 16, 2, 1, 1}, "111100", 0},
    {"left padding", {1, 1, 0, 713, 16, 2}, "001111", 0},
    {"a cache: past 4, the first cached token padding", {16, 2}, "011111", 4},
    {"holes in the attention mask", {0, 713, 1, 16, 1, 2}, "110101", 0},
};
constexpr std::size_t kCacheExample = 2;

constexpr std::size_t kPositions = 256, kDim = 64;
constexpr std::size_t kOffsets[] = {1, 4, 16};
constexpr double kInitStd = 0.02;  // BERT's and RoBERTa's initializer_range, OPT's init_std
constexpr std::uint64_t kSeed = 20240517;

// ---- (a) the ids ------------------------------------------------------------------------------------------------

std::vector<std::uint8_t> mask_of(const char* bits) {
  std::vector<std::uint8_t> m;
  for (const char* c = bits; *c; ++c) m.push_back(*c == '1' ? 1 : 0);
  return m;
}

// The ids of one example (as `posenc ids learned` computes them) and whether the oracle gives the same.
std::pair<std::vector<std::int64_t>, bool> ids_of(const posenc::LearnedSpec& s, const Example& e) {
  const std::vector<std::uint8_t> mask = mask_of(e.mask);
  const posenc::LearnedInput in{e.tokens.size(), e.past, e.tokens, mask};
  std::vector<std::int64_t> ids = posenc::position_ids(s, in);
  const bool same = ids == posenc::reference::learned_position_ids(s, e.tokens.size(), e.past, e.tokens, mask);
  return {std::move(ids), same};
}

Json ids() {
  Json presets = Json::array(), examples = Json::array();
  for (const char* p : kPresets)
    presets.push_back({{"preset", p}, {"id_map", std::string(posenc::to_string(posenc::learned_preset(p).id_map))}});
  bool oracle = true, bert_gpt2 = true, roberta_fairseq = true;
  for (const Example& e : kExamples) {
    Json by_preset = Json::object();
    for (const char* p : kPresets) {
      auto [v, same] = ids_of(posenc::learned_preset(p), e);
      oracle = oracle && same;
      by_preset[p] = v;
    }
    bert_gpt2 = bert_gpt2 && by_preset["bert"] == by_preset["gpt2"];
    roberta_fairseq = roberta_fairseq && by_preset["roberta"] == by_preset["fairseq"];
    examples.push_back({{"label", e.label}, {"tokens", e.tokens}, {"mask", e.mask}, {"past", e.past},
                        {"ids", by_preset}});
  }
  return {{"presets", presets}, {"examples", examples}, {"cache_example", kCacheExample},
          {"same_bert_gpt2", bert_gpt2}, {"same_roberta_fairseq", roberta_fairseq}, {"ids_equal_oracle", oracle}};
}

// ---- (b) no relative structure ------------------------------------------------------------------------------------

// rows x dim values N(0, std^2) rounded to float32, row by row, from random.Random(seed).gauss.
posenc::LearnedTable random_table(std::size_t rows, std::size_t dim) {
  posenc::figures::CpythonRandom rng(kSeed);
  posenc::LearnedTable t{rows, dim, std::vector<double>(rows * dim)};
  for (double& v : t.values) v = static_cast<float>(rng.gauss(0.0, kInitStd));
  return t;
}

Table split(const std::vector<double>& values, std::size_t dim) {
  Table out(values.size() / dim);
  for (std::size_t r = 0; r < out.size(); ++r)
    out[r].assign(values.begin() + static_cast<std::ptrdiff_t>(r * dim),
                  values.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
  return out;
}

// Rows 0 .. n - 1 of the table as a bert (arange) lookup of n tokens reads them, f64.
Table learned_rows(const posenc::LearnedTable& t, std::size_t n) {
  const posenc::LearnedPlan plan(posenc::learned_preset("bert"), t);
  std::vector<double> out(n * t.dim);
  plan.lookup(posenc::LearnedInput{.length = n}, out);
  return split(out, t.dim);
}

Table sinusoidal_rows(std::size_t n) {
  const posenc::SinusoidalPlan plan(posenc::sinusoidal_preset("vaswani", kDim));
  std::vector<double> out(n * kDim);
  plan.table(0, n, out);
  return split(out, kDim);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> p(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) p[i] = a[i] * b[i];
  return fsum(p);
}

// <PE(p), PE(p + k)> of the paper's table in exact arithmetic: sum over the pairs of cos(omega_i k), omega_i =
// 10000^(-2i/d), evaluated in float64.
double sinusoidal_dot(std::size_t k) {
  std::vector<double> c(kDim / 2);
  for (std::size_t i = 0; i < c.size(); ++i)
    c[i] = std::cos(static_cast<double>(k) * std::pow(10000.0, -2.0 * static_cast<double>(i) / kDim));
  return fsum(c);
}

// Per k: min, max, mean, standard deviation and spread (max - min over the mean |row|^2) of <row(p), row(p + k)>.
Json stats(const Table& rows, double norm2, std::size_t k) {
  std::vector<double> d(kPositions), sq(kPositions);
  for (std::size_t p = 0; p < kPositions; ++p) d[p] = dot(rows[p], rows[p + k]);
  const double mean = fsum(d) / kPositions;
  for (std::size_t p = 0; p < kPositions; ++p) sq[p] = std::pow(d[p] - mean, 2.0);  // Python's (x - mean) ** 2
  const auto [lo, hi] = std::minmax_element(d.begin(), d.end());
  return {{"k", k}, {"min", *lo}, {"max", *hi}, {"mean", mean}, {"sd", std::sqrt(fsum(sq) / kPositions)},
          {"spread", (*hi - *lo) / norm2}};
}

Json table_stats(const char* which, const Table& rows) {
  std::vector<double> n2(kPositions);
  for (std::size_t p = 0; p < kPositions; ++p) n2[p] = dot(rows[p], rows[p]);
  const double norm2 = fsum(n2) / kPositions;
  Json by_k = Json::array();
  for (std::size_t k : kOffsets) by_k.push_back(stats(rows, norm2, k));
  return {{"table", which}, {"norm2", norm2}, {"by_offset", by_k}};
}

Json relative() {
  const std::size_t n = kPositions + *std::max_element(std::begin(kOffsets), std::end(kOffsets));
  const posenc::LearnedTable drawn = random_table(n, kDim);
  const Table learned = learned_rows(drawn, n), sinus = sinusoidal_rows(n);
  const Json random = table_stats("random", learned), sinusoidal = table_stats("sinusoidal", sinus);
  double worst_sin = 0.0, least_rand = std::numeric_limits<double>::infinity(), mean_rand = 0.0;
  bool sin_ok = true;
  for (std::size_t i = 0; i < std::size(kOffsets); ++i) {
    const Json& r = random["by_offset"][i];
    const Json& s = sinusoidal["by_offset"][i];
    worst_sin = std::max(worst_sin, s["spread"].get<double>());
    least_rand = std::min(least_rand, r["spread"].get<double>());
    mean_rand = std::max(mean_rand, std::abs(r["mean"].get<double>()));
    sin_ok = sin_ok && std::abs(s["mean"].get<double>() - sinusoidal_dot(kOffsets[i])) <= 1e-12 * kDim;
  }
  const std::vector<std::size_t> offsets(std::begin(kOffsets), std::end(kOffsets));
  return {{"rows", n}, {"dim", kDim}, {"positions", kPositions}, {"last_position", kPositions - 1}, {"offsets", offsets}, {"init_std", kInitStd},
          {"seed", kSeed}, {"rows_equal_values_drawn", split(drawn.values, kDim) == learned},
          {"tables", Json::array({random, sinusoidal})}, {"worst_sinusoidal_spread", worst_sin},
          {"least_random_spread", least_rand}, {"largest_random_mean", mean_rand},
          {"sinusoidal_means_equal_sum_cos", sin_ok}};
}

}  // namespace learned_figures

POSENC_FIGURES(learned) {
  figures["ids"] = learned_figures::ids();
  figures["relative"] = learned_figures::relative();
}
