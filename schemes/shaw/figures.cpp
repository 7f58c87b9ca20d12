// Shaw's (and HF BERT relative_key's) figures (reports/figures/figures.hpp; drawn by schemes/shaw/report.py):
//   index         per preset t2t and bert-relative-key: idx(u) - k for |u| <= kWindow from its square index matrix
//                 (kCurveLength: 61 for t2t, 512 for BERT; the last row gives u <= 0, row 0 u >= 0), with the facts
//                 the caption quotes over every offset of the matrix (monotone, flat ends, rows used); and whether
//                 bert-relative-key-query's matrix is bert-relative-key's
//   score_offset  the relative score term of one fixed query against u = j - q_i, |u| <= kWindow, for t2t and
//                 bert-relative-key: the row of the query at kWindow of ShawPlan::scores in f64 (every query q, every
//                 key zero; synthetic seeded key table: CPython's random, reproduced), the plot's y range, t2t flat
//                 beyond +-k, BERT's distinct values and its largest difference from t2t mirrored
//   sign          t2t with k = 3: the 8 x 8 index matrix of both signs, the last 3 query rows and the cached single
//                 query, with the facts the caption quotes (transpose, 2k minus, last rows, cached row)
//   presets       per preset the spec's fields, its table rows and (unclipped) the longest key_length it takes
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "python_compat.hpp"
#include "figures.hpp"
#include "posenc/shaw.hpp"

namespace shaw_figures {

using posenc::ShawPlan;
using posenc::ShawSpec;
using posenc::figures::Json;
using Matrix = std::vector<std::int32_t>;  // [Lq][Lk] row-major
constexpr const char* kPresets[] = {"t2t", "bert-relative-key", "bert-relative-key-query"};
constexpr std::int64_t kWindow = 60;        // index and score_offset: |u| <= kWindow
constexpr std::size_t kScoreLength = 2 * kWindow + 1;
constexpr std::uint32_t kSeed = 20260311;   // the old Python module's seed (q and the key table)
constexpr std::size_t kSmallK = 3, kSmallLength = 8, kLastRows = 3;

ShawSpec preset(const std::string& name) { return posenc::find_preset<ShawSpec>(name).spec; }

// t2t: |u| up to 60 shows the flat ends beyond +-20; BERT: 512 keys, its whole table.
std::size_t curve_length(const std::string& name) { return name == "t2t" ? 61 : 512; }

// The index matrix (the CLI's index plan: head_dim 1, zero tables; indices do not depend on head_dim).
Matrix indices(ShawSpec s, std::size_t lq, std::size_t lk) {
  s.head_dim = 1;
  posenc::ShawWeights w{std::vector<double>(posenc::shaw_table_rows(s), 0.0), {}};
  if (s.values) w.values = w.keys;
  Matrix out(lq * lk);
  ShawPlan(s, w).indices(posenc::BiasGeometry{lq, lk}, out);
  return out;
}

std::string sign_name(const ShawSpec& s) { return std::string(posenc::to_string(s.sign)); }

// ---- index against the offset ---------------------------------------------------------------------------------

// [u, idx] for u in [-(n - 1), n - 1] of a square matrix: the last row (query at n - 1) gives u <= 0, row 0 u >= 0.
std::vector<std::pair<std::int64_t, std::int32_t>> by_offset(const Matrix& m, std::size_t n) {
  const auto last = static_cast<std::int64_t>(n) - 1;
  std::vector<std::pair<std::int64_t, std::int32_t>> out;
  for (std::int64_t j = 0; j < last; ++j) out.emplace_back(j - last, m[(n - 1) * n + static_cast<std::size_t>(j)]);
  for (std::int64_t j = 0; j <= last; ++j) out.emplace_back(j, m[j]);
  return out;
}

Json index_curve(const std::string& name) {
  const ShawSpec s = preset(name);
  const std::size_t n = curve_length(name);
  const auto pts = by_offset(indices(s, n, n), n);
  const auto k = static_cast<std::int32_t>(s.max_relative_position);
  Json window = Json::array();
  std::set<std::int32_t> used;
  bool up = true, down = true;
  for (std::size_t p = 0; p < pts.size(); ++p) {
    const auto [u, v] = pts[p];
    if (u >= -kWindow && u <= kWindow) window.push_back({u, v - k});
    used.insert(v);
    if (p == 0) continue;
    up = up && v >= pts[p - 1].second;
    down = down && v <= pts[p - 1].second;
  }
  std::size_t lo = 0, hi = pts.size() - 1;  // constant for u <= pts[lo] and for u >= pts[hi]
  while (lo + 1 < pts.size() && pts[lo + 1].second == pts.front().second) ++lo;
  while (hi > 0 && pts[hi - 1].second == pts.back().second) --hi;
  return {{"preset", name}, {"sign", sign_name(s)}, {"k", k}, {"clip", s.clip}, {"length", n},
          {"table_rows", posenc::shaw_table_rows(s)}, {"points", window}, {"non_decreasing", up},
          {"non_increasing", down}, {"flat_ends", lo != 0 || hi != pts.size() - 1},
          {"flat_low", pts[lo].first}, {"flat_high", pts[hi].first}, {"index_low", pts.front().second},
          {"index_high", pts.back().second}, {"rows_used", used.size()}, {"row_min", *used.begin()},
          {"row_max", *used.rbegin()}};
}

Json index_curves() {
  const std::size_t n = curve_length("bert-relative-key");
  const bool same = indices(preset("bert-relative-key-query"), n, n) == indices(preset("bert-relative-key"), n, n);
  return {{"window", kWindow}, {"curves", Json::array({index_curve("t2t"), index_curve("bert-relative-key")})},
          {"key_query_same_as_key", same}};
}

// ---- score against offset -------------------------------------------------------------------------------------

// q: dim float32 numbers drawn N(0, 1/dim) (the old module's fixed_query).
std::vector<double> fixed_query(std::size_t dim) {
  posenc::figures::CpythonRandom rng(kSeed);
  std::vector<double> v(dim);
  for (double& x : v) x = static_cast<float>(rng.gauss(0.0, 1.0 / std::sqrt(static_cast<double>(dim))));
  return v;
}

// [2k + 1][dim]: row d + k holds a(d), a random walk over the signed distance: a(0) drawn N(0, 1/dim) (generator
// seed + 3), a(d) = a(d - 1) + N(0, 1/dim) for d = 1 .. k (seed + 1), a(d + 1) + N(0, 1/dim) for d = -1 .. -k
// (seed + 2): a(d) is the same for every k >= |d| (the old module's synthetic_table).
std::vector<double> synthetic_table(std::size_t k, std::size_t dim) {
  const double sd = 1.0 / std::sqrt(static_cast<double>(dim));
  std::vector<double> t((2 * k + 1) * dim);
  posenc::figures::CpythonRandom rng0(kSeed + 3), up(kSeed + 1), down(kSeed + 2);
  for (std::size_t c = 0; c < dim; ++c) t[k * dim + c] = rng0.gauss(0.0, sd);
  for (std::size_t row = k + 1; row <= 2 * k; ++row)
    for (std::size_t c = 0; c < dim; ++c) t[row * dim + c] = t[(row - 1) * dim + c] + up.gauss(0.0, sd);
  for (std::size_t row = k; row-- > 0;)
    for (std::size_t c = 0; c < dim; ++c) t[row * dim + c] = t[(row + 1) * dim + c] + down.gauss(0.0, sd);
  return t;
}

// The row of the query at kWindow of the kScoreLength^2 scores (every query q, every key zero, scale 1/sqrt(d)):
// value[u + kWindow] for u = -kWindow .. kWindow.
std::vector<double> score_row(const std::string& name) {
  const ShawSpec s = preset(name);
  const std::size_t hd = s.head_dim, n = kScoreLength;
  posenc::ShawWeights w{synthetic_table(s.max_relative_position, hd), {}};
  if (s.values) w.values.assign(w.keys.size(), 0.0);
  std::vector<double> q, k(n * hd, 0.0), out(n * n);
  const std::vector<double> q1 = fixed_query(hd);
  for (std::size_t i = 0; i < n; ++i) q.insert(q.end(), q1.begin(), q1.end());
  ShawPlan(s, w).scores(std::span<const double>(q), std::span<const double>(k), 1, posenc::BiasGeometry{n, n},
                        1.0 / std::sqrt(static_cast<double>(hd)), std::span<double>(out));
  return {out.begin() + kWindow * n, out.begin() + (kWindow + 1) * n};
}

Json curve_points(const std::vector<double>& row) {
  Json pts = Json::array();
  for (std::size_t j = 0; j < row.size(); ++j) pts.push_back({static_cast<std::int64_t>(j) - kWindow, row[j]});
  return pts;
}

Json score_offset() {
  const auto t2t = score_row("t2t"), bert = score_row("bert-relative-key");
  const auto kt = static_cast<std::int64_t>(preset("t2t").max_relative_position);
  bool flat = true;  // one number for every u >= kt and one for every u <= -kt
  for (std::int64_t u = kt; u <= kWindow; ++u)
    flat = flat && t2t[u + kWindow] == t2t[kt + kWindow] && t2t[-u + kWindow] == t2t[-kt + kWindow];
  double mirror = 0;  // max |BERT(u) - t2t(-u)| over |u| <= kt
  for (std::int64_t u = -kt; u <= kt; ++u) mirror = std::max(mirror, std::abs(bert[u + kWindow] - t2t[-u + kWindow]));
  const std::size_t distinct = std::set<double>(bert.begin(), bert.end()).size();
  double lo = t2t[0], hi = t2t[0];
  for (const auto* c : {&t2t, &bert})
    for (double v : *c) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  const double pad = 0.05 * (hi - lo != 0 ? hi - lo : 1);
  return {{"window", kWindow}, {"length", kScoreLength}, {"query_position", kWindow}, {"seed", kSeed},
          {"head_dim", preset("t2t").head_dim}, {"k_t2t", kt},
          {"k_bert", preset("bert-relative-key").max_relative_position}, {"t2t", curve_points(t2t)},
          {"bert", curve_points(bert)}, {"yrange", {lo - pad, hi + pad}}, {"t2t_flat_beyond_k", flat},
          {"bert_distinct", distinct}, {"bert_every_offset_distinct", distinct == kScoreLength},
          {"mirror_difference", mirror}};
}

// ---- the two signs, small -------------------------------------------------------------------------------------

Json matrix_json(const Matrix& m, std::size_t lq, std::size_t lk) {
  std::vector<std::size_t> positions;  // q_i = Lk - Lq + i
  for (std::size_t i = 0; i < lq; ++i) positions.push_back(lk - lq + i);
  return {{"rows", posenc::figures::rows(m, lk)}, {"query_positions", positions}};
}

Json sign_matrices() {
  ShawSpec s = preset("t2t");
  s.max_relative_position = kSmallK;
  ShawSpec flipped = s;
  flipped.sign = posenc::RelativeSign::query_minus_key;
  const std::size_t L = kSmallLength;
  const Matrix a = indices(s, L, L), b = indices(flipped, L, L), last = indices(s, kLastRows, L),
               cached = indices(s, 1, L);
  bool transpose = true, mirror = true;
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) {
      transpose = transpose && b[i * L + j] == a[j * L + i];
      mirror = mirror && b[i * L + j] == static_cast<std::int32_t>(2 * kSmallK) - a[i * L + j];
    }
  const bool last_rows = std::equal(last.begin(), last.end(), a.end() - kLastRows * L);
  const bool cached_row = std::equal(cached.begin(), cached.end(), a.end() - L);
  return {{"k", kSmallK}, {"rows", posenc::shaw_table_rows(s)}, {"length", L}, {"last_length", kLastRows},
          {"key_minus_query", matrix_json(a, L, L)}, {"query_minus_key", matrix_json(b, L, L)},
          {"last", matrix_json(last, kLastRows, L)}, {"is_transpose", transpose}, {"is_2k_minus", mirror},
          {"last_rows", last_rows}, {"cached_is_last_row", cached_row}};
}

// ---- the presets side by side ---------------------------------------------------------------------------------

Json presets_table() {
  Json rows = Json::array();
  bool rows_ok = true;
  for (const char* name : kPresets) {
    const ShawSpec s = preset(name);
    const std::size_t k = s.max_relative_position, table_rows = posenc::shaw_table_rows(s);
    rows_ok = rows_ok && table_rows == 2 * k + 1;
    rows.push_back({{"preset", name}, {"sign", sign_name(s)}, {"k", k}, {"clip", s.clip},
                    {"max_key_length", s.clip ? Json() : Json(k + 1)}, {"table_rows", table_rows}, {"values", s.values},
                    {"key_query", s.key_query}, {"head_dim", s.head_dim}});
  }
  return {{"rows", rows}, {"table_rows_are_2k_plus_1", rows_ok}};
}

}  // namespace shaw_figures

POSENC_FIGURES(shaw) {
  figures["index"] = shaw_figures::index_curves();
  figures["score_offset"] = shaw_figures::score_offset();
  figures["sign"] = shaw_figures::sign_matrices();
  figures["presets"] = shaw_figures::presets_table();
}
