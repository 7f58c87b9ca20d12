// The sinusoidal scheme's figures (reports/figures/figures.hpp; drawn by schemes/sinusoidal/report.py).
// The table is vaswani's, d = kDim, positions 0 .. kTablePositions - 1, f64 (SinusoidalPlan::table); every sum is
// correctly rounded (as Python's math.fsum rounds it: exact sum, one rounding, through MPFR).
//   heatmap             PE(p, i) for p < kHeatPositions (the matrix), its smallest and largest entry and the largest
//                       | ||PE(p)||^2 - d/2 | over those rows
//   dot_vs_k            PE(t).PE(t+k) for t in kTs, k in [-kK, kK], the closed form sum_i cos(k w_i), and the largest
//                       deviation of the products from it
//   dot_random_w        PE(kWt).PE(kWt+k) and PE(kWt)^T W PE(kWt+k) for W of iid N(0, 1/d) entries drawn as Python's
//                       random.Random(seed).gauss draws them (seeds kWSeeds)
//   random_w_vs_t       PE(t)^T W PE(t+k) for t in kTs with W of the first seed
//   preset_frequencies  omega_k of the four presets at d = kDim (SinusoidalPlan::frequencies, exact regime)
//   frequency_ratio     omega_k(tensor2tensor) / omega_k(vaswani) against k / (h - 1) for d = 16, 128, 512
#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "figures.hpp"
#include "posenc/sinusoidal.hpp"
#include "python_compat.hpp"

namespace sinusoidal_figures {

using posenc::figures::Json;
using Vec = std::vector<double>;

constexpr std::size_t kDim = 128;              // the seed posts' heatmap: 50 positions x 128 dims
constexpr std::size_t kHeatPositions = 50;
constexpr std::size_t kTablePositions = 256;   // positions 0..255 cover t +- kK for the t values below
constexpr std::int64_t kTs[] = {60, 120, 200};
constexpr std::int64_t kK = 50;
constexpr std::uint64_t kWSeeds[] = {1, 2, 3};
constexpr std::int64_t kWt = 120;

// The sum of `terms`, exactly, rounded once to the nearest double (ties to even).
double exact_sum(const Vec& terms) {
  mpfr_t acc;
  mpfr_init2(acc, 2200);  // wider than any double's span of exponents plus log2 of the term count: no rounding
  mpfr_set_zero(acc, 1);
  for (double x : terms) mpfr_add_d(acc, acc, x, MPFR_RNDN);
  const double out = mpfr_get_d(acc, MPFR_RNDN);
  mpfr_clear(acc);
  return out;
}

double dot(const Vec& a, const Vec& b) {
  Vec terms(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) terms[i] = a[i] * b[i];
  return exact_sum(terms);
}

// rows[p] = PE(p) of vaswani, d = kDim, p < kTablePositions.
std::vector<Vec> table() {
  Vec flat(kTablePositions * kDim);
  posenc::make_plan(posenc::sinusoidal_preset("vaswani", kDim)).table(0, kTablePositions, std::span<double>(flat));
  std::vector<Vec> rows;
  for (std::size_t p = 0; p < kTablePositions; ++p) rows.emplace_back(flat.begin() + p * kDim, flat.begin() + (p + 1) * kDim);
  return rows;
}

Vec frequencies(const char* preset, std::size_t dim) {
  const posenc::SinusoidalPlan plan = posenc::make_plan(posenc::sinusoidal_preset(preset, dim));
  return {plan.frequencies().begin(), plan.frequencies().end()};
}

// A dim x dim matrix of iid N(0, 1/dim) entries, row by row: random.Random(seed).gauss(0.0, 1/sqrt(dim)).
class RandomMap {
 public:
  RandomMap(std::size_t dim, std::uint64_t seed) : w_(dim, Vec(dim)) {
    posenc::figures::CpythonRandom rng(seed);
    const double sd = 1.0 / std::sqrt(static_cast<double>(dim));
    for (Vec& row : w_)
      for (double& x : row) x = rng.gauss(0.0, sd);
  }
  // u^T W v, each entry of W v and the product with u correctly rounded sums.
  double bilinear(const Vec& u, const Vec& v) const {
    Vec wv(w_.size());
    for (std::size_t i = 0; i < w_.size(); ++i) wv[i] = dot(w_[i], v);
    return dot(u, wv);
  }

 private:
  std::vector<Vec> w_;
};

Json heatmap(const std::vector<Vec>& rows) {
  Json matrix = Json::array();
  double lo = rows[0][0], hi = rows[0][0], norm_error = 0.0;
  for (std::size_t p = 0; p < kHeatPositions; ++p) {
    matrix.push_back(rows[p]);
    lo = std::min(lo, *std::min_element(rows[p].begin(), rows[p].end()));
    hi = std::max(hi, *std::max_element(rows[p].begin(), rows[p].end()));
    norm_error = std::max(norm_error, std::abs(dot(rows[p], rows[p]) - static_cast<double>(kDim / 2)));
  }
  return {{"dim", kDim}, {"positions", kHeatPositions}, {"rows", matrix}, {"min", lo}, {"max", hi},
          {"norm_error", norm_error}};
}

// [[k, f(k)]] for k in [-kK, kK].
template <class F>
Json over_k(F f) {
  Json pts = Json::array();
  for (std::int64_t k = -kK; k <= kK; ++k) pts.push_back({k, f(k)});
  return pts;
}

const Vec& row(const std::vector<Vec>& rows, std::int64_t p) { return rows.at(static_cast<std::size_t>(p)); }

Json dot_vs_k(const std::vector<Vec>& rows) {
  const Vec w = frequencies("vaswani", kDim);
  const Json closed = over_k([&](std::int64_t k) {
    Vec terms;
    for (double wi : w) terms.push_back(std::cos(static_cast<double>(k) * wi));
    return exact_sum(terms);
  });
  Json dots = Json::array();
  double worst = 0.0;
  for (std::int64_t t : kTs) {
    const Json pts = over_k([&](std::int64_t k) { return dot(row(rows, t), row(rows, t + k)); });
    for (std::size_t i = 0; i < pts.size(); ++i)
      worst = std::max(worst, std::abs(pts[i][1].get<double>() - closed[i][1].get<double>()));
    dots.push_back({{"t", t}, {"points", pts}});
  }
  return {{"dim", kDim}, {"half_dim", kDim / 2}, {"closed", closed}, {"dots", dots}, {"largest_deviation", worst}};
}

Json dot_random_w(const std::vector<Vec>& rows, const std::map<std::uint64_t, RandomMap>& maps) {
  Json series = Json::array();
  for (std::uint64_t seed : kWSeeds)
    series.push_back({{"seed", seed}, {"points", over_k([&](std::int64_t k) {
                        return maps.at(seed).bilinear(row(rows, kWt), row(rows, kWt + k));
                      })}});
  return {{"dim", kDim}, {"t", kWt}, {"dot", over_k([&](std::int64_t k) { return dot(row(rows, kWt), row(rows, kWt + k)); })},
          {"seeds", series}};
}

Json random_w_vs_t(const std::vector<Vec>& rows, const RandomMap& map, std::uint64_t seed) {
  Json series = Json::array();
  for (std::int64_t t : kTs)
    series.push_back({{"t", t}, {"points", over_k([&](std::int64_t k) { return map.bilinear(row(rows, t), row(rows, t + k)); })}});
  return {{"seed", seed}, {"series", series}};
}

Json preset_frequencies() {
  Json presets = Json::array();
  for (const char* preset : {"vaswani", "marian", "tensor2tensor", "fairseq"}) {
    const Vec w = frequencies(preset, kDim);
    Json pts = Json::array();
    for (std::size_t k = 0; k < w.size(); ++k) pts.push_back({k, w[k]});
    presets.push_back({{"preset", preset}, {"points", pts}});
  }
  return {{"dim", kDim}, {"pairs", kDim / 2}, {"presets", presets}, {"last_paper", frequencies("vaswani", kDim).back()}};
}

Json frequency_ratio() {
  Json dims = Json::array();
  for (std::size_t d : {16, 128, 512}) {
    const Vec paper = frequencies("vaswani", d), t2t = frequencies("tensor2tensor", d);
    const std::size_t h = d / 2;
    Json pts = Json::array();
    for (std::size_t k = 0; k < h; ++k)
      pts.push_back({static_cast<double>(k) / static_cast<double>(h - 1), t2t[k] / paper[k]});
    dims.push_back({{"d", d}, {"points", pts}, {"last", t2t[h - 1] / paper[h - 1]}});
  }
  return {{"dims", dims}};
}

void produce(Json& figures) {
  const std::vector<Vec> rows = table();
  std::map<std::uint64_t, RandomMap> maps;
  for (std::uint64_t seed : kWSeeds) maps.emplace(seed, RandomMap(kDim, seed));
  figures["heatmap"] = heatmap(rows);
  figures["dot_vs_k"] = dot_vs_k(rows);
  figures["dot_random_w"] = dot_random_w(rows, maps);
  figures["random_w_vs_t"] = random_w_vs_t(rows, maps.at(kWSeeds[0]), kWSeeds[0]);
  figures["preset_frequencies"] = preset_frequencies();
  figures["frequency_ratio"] = frequency_ratio();
}

}  // namespace sinusoidal_figures

POSENC_FIGURES(sinusoidal) { sinusoidal_figures::produce(figures); }
