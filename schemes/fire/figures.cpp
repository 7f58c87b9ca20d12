// FIRE's figures (reports/figures/figures.hpp; drawn by schemes/fire/report.py):
//   normalized_distance  x(q, d) of a one-head, width-1 identity MLP (the exact bias is x itself) against d for the
//                        queries at kXQueries: plotted points, x at d = q, and what holds of the whole rows (x = 0
//                        at d = 0, strictly increasing, in [0, 1), the rows at or below L equal bit for bit) and
//                        the largest relative difference from x evaluated here with std::log1p
//   bias_rows            the bias of the widest head of the 12-head, width-32 weights against d for the queries at
//                        kRowQueries (exact regime): plotted points, the bias at the farthest key of the queries at
//                        or beyond L and its spread (also relative to the head's scale S at x = 1), the rows at or
//                        below L equal, and the largest difference from the MLP evaluated here in float64 over S
//   cramming_deviation   max over heads of |cramming - exact| / ulp32(S) on the row of the query at kDevQ: plotted
//                        points, its maximum, mean and zeros, the largest error in ulps of the bias itself, and
//                        whether every cramming value is a float32 number
//   conventions          per regime, what the table of where the code differs from the paper says of a small model
//                        (4 heads, width 8, L = 8, 24 x 24) against variants of its weights (c = -c, L_multiplier =
//                        -1, c = 0), and the causal mask
// The bias comes from FirePlan::bias (f64), as `posenc bias fire --dtype f64` computes it. The weights are drawn as
// cli/tests/data/fire_*.json were (torch's nn.Linear init, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), from CPython's
// random.Random(231004418), rounded to float32): the same numbers. The float64 evaluations here (x, the MLP and
// its scale S) are those the report made in Python before (math.log1p, math.fsum: exact sums), so the captions keep
// their numbers; this file is not compiled for FMA (no -march), so a * b + c rounds twice, as Python's does.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/fire.hpp"
#include "python_compat.hpp"

namespace fire_figures {

using posenc::figures::Json;
using Rows = std::vector<std::vector<double>>;  // [h][d] or [h][key]

constexpr std::uint64_t kSeed = 231004418;  // arXiv 2310.04418; cli/tests/data/README.md
constexpr double kInitC = 0.1;              // FIRE(init_c=0.1, init_L=512), the reference's initial values
constexpr double kInitL = 512.0;
constexpr std::int64_t kXQueries[] = {64, 256, 512, 1024, 4096};
constexpr std::size_t kMainHeads = 12, kMainWidth = 32;
constexpr std::int64_t kRowQueries[] = {128, 512, 2048, 8192};
constexpr std::int64_t kDevQ = 4096;
constexpr std::size_t kConvHeads = 4, kConvWidth = 8, kConvL = 24;
constexpr double kConvThr = 8.0;

double f32(double x) { return static_cast<float>(x); }

// The state_dict the recipe of cli/tests/data/fire_*.json draws: mlp.0.weight, mlp.0.bias, mlp.2.weight (row-major),
// mlp.2.bias, each U(-b, b) with b = 1 / sqrt(fan_in), from one generator in that order, rounded to float32.
posenc::FireWeights draw_weights(std::size_t heads, std::size_t width, double init_L = kInitL) {
  posenc::figures::CpythonRandom rng(kSeed);
  const double bound2 = 1.0 / std::sqrt(static_cast<double>(width));
  auto draw = [&](std::size_t n, double bound) {
    std::vector<double> v(n);
    for (double& x : v) x = f32(rng.uniform(-bound, bound));
    return v;
  };
  posenc::FireWeights w;
  w.w1 = draw(width, 1.0);
  w.b1 = draw(width, 1.0);
  w.w2 = draw(heads * width, bound2);
  w.b2 = draw(heads, bound2);
  w.c = f32(kInitC);
  w.L_multiplier = 1.0;
  w.init_L = init_L;
  return w;
}

// One head, width 1, W1 = 1, b1 = 0, W2 = 1, b2 = 0: the bias is ReLU(x) = x.
posenc::FireWeights identity_weights() {
  return {.c = f32(kInitC), .L_multiplier = 1.0, .init_L = kInitL, .w1 = {1.0}, .b1 = {0.0}, .w2 = {1.0}, .b2 = {0.0}};
}

posenc::FirePlan plan_of(const posenc::FireWeights& w, posenc::FireRegime regime) {
  posenc::FireSpec s;
  s.heads = w.b2.size();
  s.mlp_width = w.b1.size();
  s.regime = regime;
  return posenc::FirePlan(s, w);
}

double threshold(const posenc::FireWeights& w) { return std::abs(w.L_multiplier * w.init_L); }

// The [heads][Lq][Lk] bias (f64) of a square geometry, as `posenc bias fire --dtype f64` writes it.
std::vector<double> matrix(const posenc::FirePlan& plan, std::size_t length, posenc::BiasMask mask) {
  std::vector<double> out(plan.spec().heads * length * length);
  plan.bias(posenc::BiasGeometry{length, length, {}, mask}, out);
  return out;
}

// [h][d], d = 0 .. q: the row of one query at position q (key_length q + 1, query_length 1; key j at d = q - j).
Rows by_distance(const posenc::FirePlan& plan, std::int64_t q) {
  const auto n = static_cast<std::size_t>(q) + 1;
  std::vector<double> out(plan.spec().heads * n);
  plan.bias(posenc::BiasGeometry{1, n}, out);
  Rows rows(plan.spec().heads, std::vector<double>(n));
  for (std::size_t h = 0; h < rows.size(); ++h)
    for (std::size_t d = 0; d < n; ++d) rows[h][d] = out[h * n + (n - 1 - d)];
  return rows;
}

// x(q, d) in float64: ln(|c| d + 1) / (ln(|c| max(q, L) + 1) + eps), L = |L_multiplier init_L|.
double normalized_distance(const posenc::FireWeights& w, std::int64_t q, std::int64_t d) {
  const double c = std::abs(w.c), n = std::max(static_cast<double>(q), threshold(w));
  return std::log1p(c * static_cast<double>(d)) / (std::log1p(c * n) + posenc::FireSpec{}.eps);
}

struct Mlp {
  double value, scale;  // b2 + sum_k W2 ReLU(W1 x + b1); S = |b2| + sum_k |W2| (|W1| x + |b1|)
};

Mlp mlp(const posenc::FireWeights& w, std::size_t h, double x) {
  const std::size_t width = w.b1.size();
  std::vector<double> terms(width), scales(width);
  for (std::size_t k = 0; k < width; ++k) {
    const double wx = w.w1[k] * x, ax = std::abs(w.w1[k]) * x;
    terms[k] = w.w2[h * width + k] * std::max(0.0, wx + w.b1[k]);
    scales[k] = std::abs(w.w2[h * width + k]) * (ax + std::abs(w.b1[k]));
  }
  return {posenc::figures::fsum(terms) + w.b2[h], std::abs(w.b2[h]) + posenc::figures::fsum(scales)};
}

// The spacing of binary32 numbers at |x|: 2^(max(floor(log2 |x|), -126) - 23); 2^-149 at 0.
double ulp32(double x) {
  if (x == 0.0) return std::ldexp(1.0, -149);
  int e = 0;
  (void)std::frexp(std::abs(x), &e);
  return std::ldexp(1.0, std::max(e, -125) - 24);
}

// The head whose MLP spans the widest range of values over x in [0, 1] (the first such head).
std::size_t widest_head(const posenc::FireWeights& w, int steps = 64) {
  std::size_t best = 0;
  double best_span = -1.0;
  for (std::size_t h = 0; h < w.b2.size(); ++h) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int i = 0; i <= steps; ++i) {
      const double v = mlp(w, h, static_cast<double>(i) / steps).value;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (hi - lo > best_span) best = h, best_span = hi - lo;
  }
  return best;
}

// 1 .. dense, then per_octave points per octave (rounded half to even) up to limit, and limit itself.
std::vector<std::int64_t> plot_distances(std::int64_t limit, std::int64_t dense = 64, int per_octave = 24) {
  std::set<std::int64_t> out{limit};
  for (std::int64_t d = 1; d <= std::min(dense, limit); ++d) out.insert(d);
  for (int i = 0;; ++i) {
    const double v = static_cast<double>(dense) * std::pow(2.0, static_cast<double>(i) / per_octave);
    if (!(v < static_cast<double>(limit))) break;
    out.insert(static_cast<std::int64_t>(std::nearbyint(v)));
  }
  std::vector<std::int64_t> ds;
  for (std::int64_t d : out)
    if (d >= 1 && d <= limit) ds.push_back(d);
  return ds;
}

Json curve(const std::vector<double>& row, std::int64_t q) {
  Json pts = Json::array();
  for (std::int64_t d : plot_distances(q)) pts.push_back({d, row[static_cast<std::size_t>(d)]});
  return pts;
}

// Rows (of one head) of the queries at or below L equal bit for bit at every common distance.
bool short_rows_equal(const std::vector<std::vector<double>>& rows, const std::vector<std::int64_t>& qs, double thr) {
  for (std::size_t a = 0; a < qs.size(); ++a)
    for (std::size_t b = 0; b < qs.size(); ++b) {
      if (qs[a] > thr || qs[b] > thr) continue;
      for (std::int64_t d = 0; d <= std::min(qs[a], qs[b]); ++d)
        if (rows[a][static_cast<std::size_t>(d)] != rows[b][static_cast<std::size_t>(d)]) return false;
    }
  return true;
}

// The largest query at or below L (0 when none): curves of shorter queries are drawn dashed.
std::int64_t longest_short(const std::vector<std::int64_t>& qs, double thr) {
  std::int64_t m = 0;
  for (std::int64_t q : qs)
    if (q <= thr) m = std::max(m, q);
  return m;
}

Json normalized() {
  const posenc::FireWeights w = identity_weights();
  const posenc::FirePlan plan = plan_of(w, posenc::FireRegime::exact);
  const double thr = threshold(w);
  const std::vector<std::int64_t> qs(std::begin(kXQueries), std::end(kXQueries));
  std::vector<std::vector<double>> rows;
  for (std::int64_t q : qs) rows.push_back(by_distance(plan, q)[0]);
  bool zero = true, increasing = true, below_one = true;
  double worst = 0.0;
  Json queries = Json::array();
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const std::vector<double>& r = rows[i];
    zero = zero && r[0] == 0.0;
    for (std::size_t d = 0; d < r.size(); ++d) {
      if (d + 1 < r.size()) increasing = increasing && r[d + 1] > r[d];
      below_one = below_one && r[d] >= 0.0 && r[d] < 1.0;
      if (d == 0) continue;
      const double x = normalized_distance(w, qs[i], static_cast<std::int64_t>(d));
      worst = std::max(worst, std::abs(r[d] - x) / std::max(x, 1e-300));
    }
    const double end = r.back();
    queries.push_back({{"q", qs[i]}, {"at_or_below_threshold", qs[i] <= thr},
                       {"dashed", qs[i] < longest_short(qs, thr)}, {"x_at_q", end}, {"one_minus_x_at_q", 1.0 - end},
                       {"points", curve(r, qs[i])}});
  }
  return {{"threshold", thr}, {"queries", queries}, {"zero_at_d0", zero}, {"strictly_increasing", increasing},
          {"in_unit_interval", below_one}, {"short_rows_equal", short_rows_equal(rows, qs, thr)},
          {"worst_relative_difference", worst}};
}

Json bias_rows() {
  const posenc::FireWeights w = draw_weights(kMainHeads, kMainWidth);
  const posenc::FirePlan plan = plan_of(w, posenc::FireRegime::exact);
  const std::size_t head = widest_head(w);
  const double thr = threshold(w);
  const std::vector<std::int64_t> qs(std::begin(kRowQueries), std::end(kRowQueries));
  std::vector<std::vector<double>> rows;
  for (std::int64_t q : qs) rows.push_back(by_distance(plan, q)[head]);
  double worst = 0.0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  Json queries = Json::array(), far = Json::array();
  for (std::size_t i = 0; i < qs.size(); ++i) {
    for (std::int64_t d : plot_distances(qs[i])) {
      const Mlp m = mlp(w, head, normalized_distance(w, qs[i], d));
      worst = std::max(worst, std::abs(rows[i][static_cast<std::size_t>(d)] - m.value) / m.scale);
    }
    if (qs[i] >= thr) {
      const double v = rows[i].back();
      far.push_back({{"q", qs[i]}, {"bias_at_q", v}});
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    queries.push_back({{"q", qs[i]}, {"at_or_below_threshold", qs[i] <= thr},
                       {"dashed", qs[i] < longest_short(qs, thr)}, {"points", curve(rows[i], qs[i])}});
  }
  return {{"head", head}, {"heads", w.b2.size()}, {"width", w.b1.size()}, {"threshold", thr},
          {"queries", queries}, {"short_rows_equal", short_rows_equal(rows, qs, thr)}, {"far", far},
          {"far_spread", hi - lo}, {"far_spread_over_scale", (hi - lo) / mlp(w, head, 1.0).scale},
          {"worst_scaled_difference", worst}};
}

Json cramming_deviation() {
  const posenc::FireWeights w = draw_weights(kMainHeads, kMainWidth);
  const Rows exact = by_distance(plan_of(w, posenc::FireRegime::exact), kDevQ);
  const Rows cram = by_distance(plan_of(w, posenc::FireRegime::cramming), kDevQ);
  const std::size_t n = static_cast<std::size_t>(kDevQ) + 1;
  std::vector<double> dev(n, 0.0), kernel(n, 0.0);
  bool f32_ok = true;
  for (std::size_t d = 0; d < n; ++d) {
    const double x = normalized_distance(w, kDevQ, static_cast<std::int64_t>(d));
    for (std::size_t h = 0; h < exact.size(); ++h) {
      const double e = std::abs(cram[h][d] - exact[h][d]);
      dev[d] = std::max(dev[d], e / ulp32(mlp(w, h, x).scale));
      kernel[d] = std::max(kernel[d], exact[h][d] != 0.0 ? e / ulp32(exact[h][d]) : 0.0);
      f32_ok = f32_ok && f32(cram[h][d]) == cram[h][d];
    }
  }
  const auto d_max = static_cast<std::size_t>(std::max_element(dev.begin(), dev.end()) - dev.begin());
  const auto k_max = static_cast<std::size_t>(std::max_element(kernel.begin(), kernel.end()) - kernel.begin());
  Json pts = Json::array();
  pts.push_back({0.5, dev[0]});  // d = 0 drawn at 1/2 on the log axis
  for (std::int64_t d : plot_distances(kDevQ)) pts.push_back({d, dev[static_cast<std::size_t>(d)]});
  return {{"q", kDevQ}, {"heads", exact.size()}, {"points", pts}, {"max_scaled", dev[d_max]},
          {"max_scaled_at", d_max}, {"mean_scaled", posenc::figures::fsum(dev) / static_cast<double>(n)},
          {"distances_equal", std::count(dev.begin(), dev.end(), 0.0)}, {"distances", n}, {"key_length", n},
          {"max_bias_ulps", kernel[k_max]}, {"max_bias_ulps_at", k_max}, {"cramming_values_are_float32", f32_ok}};
}

// ---- (d) the conventions, on [h][i][j] matrices of kConvL x kConvL ----------------------------------------------

double at(const std::vector<double>& m, std::size_t h, std::size_t i, std::size_t j) {
  return m[(h * kConvL + i) * kConvL + j];
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint64_t>(a[i]) != std::bit_cast<std::uint64_t>(b[i])) return false;
  return true;
}

// c = 0: x = 0 and the bias MLP(0) at every entry, equal to the d = 0 entry of the base weights (and, exact regime,
// to MLP(0) evaluated here within 1e-15 S).
bool eps_holds(const std::vector<double>& c0, const std::vector<double>& b, const posenc::FireWeights& base,
               bool exact) {
  for (std::size_t h = 0; h < kConvHeads; ++h) {
    const double v = at(c0, h, 0, 0);
    for (std::size_t i = 0; i < kConvL; ++i)
      for (std::size_t j = 0; j < kConvL; ++j)
        if (at(c0, h, i, j) != v) return false;
    if (v != at(b, h, 0, 0)) return false;
    const Mlp m = mlp(base, h, 0.0);
    if (exact && !(std::abs(v - m.value) <= 1e-15 * m.scale)) return false;
  }
  return true;
}

// b(i, i + k) = b(i, i - k) wherever both keys exist.
bool symmetric(const std::vector<double>& b) {
  for (std::size_t h = 0; h < kConvHeads; ++h)
    for (std::size_t i = 0; i < kConvL; ++i)
      for (std::size_t k = 1; k <= i && i + k < kConvL; ++k)
        if (at(b, h, i, i + k) != at(b, h, i, i - k)) return false;
  return true;
}

// Every row i <= L equals row 0 at the same distance; every row above L differs from it at some key j < i.
bool threshold_rows(const std::vector<double>& b) {
  auto same = [&](std::size_t h, std::size_t i, std::size_t j) {
    return at(b, h, i, j) == at(b, h, 0, i > j ? i - j : j - i);
  };
  for (std::size_t i = 0; i < kConvL; ++i) {
    bool differs = false;
    for (std::size_t h = 0; h < kConvHeads; ++h)
      for (std::size_t j = 0; j < kConvL; ++j) {
        if (static_cast<double>(i) <= kConvThr && !same(h, i, j)) return false;
        if (j < i && !same(h, i, j)) differs = true;
      }
    if (static_cast<double>(i) > kConvThr && !differs) return false;
  }
  return true;
}

// --mask causal: -inf exactly at j > i, the unmasked bias elsewhere.
bool causal_holds(const std::vector<double>& causal, const std::vector<double>& b) {
  const double ninf = -std::numeric_limits<double>::infinity();
  for (std::size_t h = 0; h < kConvHeads; ++h)
    for (std::size_t i = 0; i < kConvL; ++i)
      for (std::size_t j = 0; j < kConvL; ++j) {
        const double v = at(causal, h, i, j);
        if ((v == ninf) != (j > i) || (j <= i && v != at(b, h, i, j))) return false;
      }
  return true;
}

Json conventions_of(const posenc::FireWeights& base, posenc::FireRegime regime) {
  posenc::FireWeights neg_c = base, neg_l = base, c0 = base;
  neg_c.c = -base.c;
  neg_l.L_multiplier = -base.L_multiplier;
  c0.c = 0.0;
  auto bias = [&](const posenc::FireWeights& w) { return matrix(plan_of(w, regime), kConvL, posenc::BiasMask::none); };
  const std::vector<double> b = bias(base);
  return {{"abs_c", bitwise_equal(bias(neg_c), b)}, {"abs_l", bitwise_equal(bias(neg_l), b)},
          {"eps", eps_holds(bias(c0), b, base, regime == posenc::FireRegime::exact)},
          {"sym", symmetric(b)}, {"thr", threshold_rows(b)}};
}

Json conventions() {
  const posenc::FireWeights base = draw_weights(kConvHeads, kConvWidth, kConvThr);
  const posenc::FirePlan exact = plan_of(base, posenc::FireRegime::exact);
  const bool causal = causal_holds(matrix(exact, kConvL, posenc::BiasMask::causal),
                                   matrix(exact, kConvL, posenc::BiasMask::none));
  return {{"heads", kConvHeads}, {"width", kConvWidth}, {"threshold", static_cast<int>(kConvThr)}, {"length", kConvL},
          {"exact", conventions_of(base, posenc::FireRegime::exact)},
          {"cramming", conventions_of(base, posenc::FireRegime::cramming)}, {"causal", causal}};
}

}  // namespace fire_figures

POSENC_FIGURES(fire) {
  figures["normalized_distance"] = fire_figures::normalized();
  figures["bias_rows"] = fire_figures::bias_rows();
  figures["cramming_deviation"] = fire_figures::cramming_deviation();
  figures["conventions"] = fire_figures::conventions();
}
