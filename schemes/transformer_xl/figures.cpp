// Transformer-XL's figures (reports/figures/figures.hpp; drawn by schemes/transformer_xl/report.py):
//   index           TransformerXlPlan::indices of kLq queries after kLk - kLq memory keys: the row of R each entry
//                   reads, -1 where it is undefined (j > q_i)
//   score_distance  the f64 scores' last query row against the distance delta = q_i - j, clamp_len none and kClamp
//                   (d_model = d_head = kDModel, one head, r_net the identity, u = v = 0, every key zero, q = R(kT0) in
//                   every row), the plot's y range, and the facts the caption quotes (the peak, the largest differences
//                   below and beyond the clamp, the largest sum of magnitudes they are held to)
//   clamp           the first kShowRows rows of kPreset's f64 table at klen = clamp_len + kClampExtra + 1 (columns 0,
//                   h, 1, h + 1), which rows equal row 0, and the table's largest distance from the exact regime's
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/transformer_xl.hpp"

namespace transformer_xl_figures {

using posenc::figures::Json;
using Spec = posenc::TransformerXlSpec;
constexpr std::size_t kLq = 4, kLk = 7;  // (a): 3 memory keys
// (b): the score of key j is scale <q, R(pos(delta))>; the last of kScoreLq rows sees delta = 0 .. kScoreKlen - 1.
constexpr std::size_t kDModel = 16, kScoreKlen = 96, kScoreLq = 4, kT0 = 20;
constexpr std::int64_t kClamp = 32;
// (b): "the same" / "flat" hold to within kTol of the largest scale sum_c |q_c R_c| (DESIGN.md §3).
constexpr double kTol = 1e-12;
// (c): the preset whose clamp is shown; rows 0 .. kClampExtra are distances clamp_len + kClampExtra .. clamp_len.
constexpr const char* kPreset = "txl-wt103-base";
constexpr std::size_t kClampExtra = 5, kShowRows = kClampExtra + 3;

Spec score_spec(std::int64_t clamp_len, posenc::Regime regime = posenc::Regime::exact) {
  Spec s;
  s.d_model = kDModel;
  s.heads = 1;
  s.d_head = kDModel;
  s.clamp_len = clamp_len;
  s.regime = regime;
  return s;
}

posenc::TransformerXlWeights zero_weights(const Spec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), std::vector<double>(hd * s.d_model, 0.0)};
}

Json index_matrix() {
  const Spec s;
  std::vector<std::int32_t> idx(kLq * kLk);
  posenc::TransformerXlPlan(s, zero_weights(s)).indices(posenc::BiasGeometry{kLq, kLk}, idx);
  return {{"query_length", kLq}, {"key_length", kLk}, {"indices", posenc::figures::rows(idx, kLk)}};
}

// R of a call with klen keys, f64 [klen][d_model]: row c is the distance klen - 1 - c.
std::vector<double> table(const Spec& s, std::size_t klen) {
  std::vector<double> t(klen * s.d_model);
  posenc::transformer_xl_table(s, klen, t);
  return t;
}

// The last query row's scores {delta -> score} (index delta) of q in every row, zero keys, r_net the identity.
std::vector<double> last_row(std::int64_t clamp_len, const std::vector<double>& q) {
  const Spec s = score_spec(clamp_len);
  posenc::TransformerXlWeights w = zero_weights(s);
  for (std::size_t a = 0; a < kDModel; ++a) w.r_net[a * kDModel + a] = 1.0;
  std::vector<double> qs, k(kScoreKlen * kDModel, 0.0), out(kScoreLq * kScoreKlen);
  for (std::size_t i = 0; i < kScoreLq; ++i) qs.insert(qs.end(), q.begin(), q.end());
  posenc::TransformerXlPlan(s, w).scores(qs, k, posenc::BiasGeometry{kScoreLq, kScoreKlen},
                                         1.0 / std::sqrt(static_cast<double>(kDModel)), out);
  std::vector<double> by_delta(kScoreKlen);
  for (std::size_t j = 0; j < kScoreKlen; ++j) by_delta[kScoreKlen - 1 - j] = out[(kScoreLq - 1) * kScoreKlen + j];
  return by_delta;
}

// max |difference(x)| over x in [from, to).
template <class Difference>
double largest(Difference difference, std::size_t from, std::size_t to) {
  double m = 0.0;
  for (std::size_t x = from; x < to; ++x) m = std::max(m, std::abs(difference(x)));
  return m;
}

Json score_distance() {
  const std::vector<double> r = table(score_spec(-1), kScoreKlen);  // row c: distance kScoreKlen - 1 - c
  auto row = [&](std::size_t delta) {
    return r.begin() + static_cast<std::ptrdiff_t>((kScoreKlen - 1 - delta) * kDModel);
  };
  const std::vector<double> q(row(kT0), row(kT0) + kDModel);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDModel));
  const std::vector<double> free = last_row(-1, q), clamped = last_row(kClamp, q);
  double mag = 0.0, lo = free[0], hi = free[0];
  std::size_t peak = 0;
  for (std::size_t x = 0; x < kScoreKlen; ++x) {
    double m = 0.0;
    for (std::size_t c = 0; c < kDModel; ++c) m += std::abs(q[c] * row(x)[c]);
    mag = std::max(mag, scale * m);
    if (free[x] > free[peak]) peak = x;
    lo = std::min({lo, free[x], clamped[x]});
    hi = std::max({hi, free[x], clamped[x]});
  }
  const auto c = static_cast<std::size_t>(kClamp);
  const double same_below = largest([&](std::size_t x) { return free[x] - clamped[x]; }, 0, c + 1);
  const double flat = largest([&](std::size_t x) { return clamped[x] - clamped[c]; }, c, kScoreKlen);
  const double moves = largest([&](std::size_t x) { return free[x] - free[c]; }, c, kScoreKlen);
  const double pad = 0.05 * (hi - lo != 0.0 ? hi - lo : 1.0);
  std::vector<std::size_t> deltas(kScoreKlen);
  for (std::size_t x = 0; x < kScoreKlen; ++x) deltas[x] = x;
  return {{"d_model", kDModel}, {"key_length", kScoreKlen}, {"query_length", kScoreLq}, {"clamp_len", kClamp},
          {"t0", kT0}, {"free", posenc::figures::points(deltas, free)},
          {"clamped", posenc::figures::points(deltas, clamped)}, {"yrange", {lo - pad, hi + pad}},
          {"peak", peak}, {"peak_score", free[peak]}, {"peak_at_t0", peak == kT0},
          {"scale_half_d", scale * kDModel / 2},
          {"same_below", same_below}, {"same_below_ok", same_below <= kTol * mag}, {"flat", flat},
          {"flat_ok", flat <= kTol * mag}, {"tolerance", kTol}, {"magnitude", mag}, {"moves", moves}};
}

// The largest |t - e| over the table and where it is (row-major, first of equals).
Json largest_deviation(const std::vector<double>& t, const std::vector<double>& e, std::size_t cols) {
  std::size_t at = 0;
  double m = 0.0;
  for (std::size_t x = 0; x < t.size(); ++x)
    if (std::abs(t[x] - e[x]) > m) m = std::abs(t[x] - e[x]), at = x;
  return {{"max", m}, {"row", at / cols}, {"column", at % cols}};
}

Json clamp_table() {
  const Spec s = posenc::find_preset<Spec>(kPreset).spec;
  const std::size_t d = s.d_model, h = d / 2, klen = static_cast<std::size_t>(s.clamp_len) + kClampExtra + 1;
  const std::vector<double> t = table(s, klen);
  Spec exact = s;
  exact.regime = posenc::Regime::exact;
  auto same_as_row0 = [&](std::size_t c) { return std::equal(t.begin(), t.begin() + d, t.begin() + c * d); };
  bool clamped_same = true;
  for (std::size_t c = 0; c <= kClampExtra; ++c) clamped_same = clamped_same && same_as_row0(c);
  Json rows = Json::array();
  for (std::size_t c = 0; c < kShowRows; ++c) {
    Json values = Json::array();
    for (std::size_t col : {std::size_t{0}, h, std::size_t{1}, h + 1}) values.push_back(t[c * d + col]);
    rows.push_back({{"row", c}, {"distance", klen - 1 - c},
                    {"position", posenc::transformer_xl_position(s, static_cast<std::int64_t>(klen - 1 - c))},
                    {"values", values}, {"same_as_row0", same_as_row0(c)}});
  }
  return {{"preset", kPreset}, {"d_model", d}, {"clamp_len", s.clamp_len},
          {"regime", std::string(posenc::to_string(s.regime))}, {"key_length", klen}, {"extra", kClampExtra},
          {"rows", rows}, {"clamped_same", clamped_same}, {"next_differs", !same_as_row0(kClampExtra + 1)},
          {"from_exact", largest_deviation(t, table(exact, klen), d)}};
}

}  // namespace transformer_xl_figures

POSENC_FIGURES(transformer_xl) {
  figures["index"] = transformer_xl_figures::index_matrix();
  figures["score_distance"] = transformer_xl_figures::score_distance();
  figures["clamp"] = transformer_xl_figures::clamp_table();
}
