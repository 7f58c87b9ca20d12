// DeBERTa's figures (reports/figures/figures.hpp; drawn by schemes/deberta/report.py):
//   buckets          b(rel) for rel in [-kSpan, kSpan] of deberta-v3-base, HF's (no clamp) and the 2023 original's
//                    (clamp), from a column (rel = i) and a row (rel = -j) of relative_positions; b at 511, 512, kSpan
//   score_offset     the c2p term of one fixed query and the p2c term of one fixed key against rel in [-kScoreSpan,
//                    kScoreSpan] (deberta-v3-base, one head, DebertaPlan::scores in f64 of synthetic seeded tables:
//                    CPython's random, reproduced), the plot's y range, and per region of |rel| the offsets and the
//                    gather rows they read, the flat ends of the gather index and the buckets the caption quotes
//   exact_vs_float32 per (position_buckets, max_relative_positions) of schemes/deberta/cases.hpp: the distances
//                    0 .. 4 max whose exact and hf buckets differ, [a, exact, hf]
//   index            relative_positions and position_indices of deberta-v3-base with 4 buckets, max 4 (8 x 8, then
//                    the first 3 query rows), with the facts the caption quotes (shared buckets, clamped offsets,
//                    b odd, c = clamp(b + span) in range, the first rows)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "python_compat.hpp"
#include "figures.hpp"
#include "posenc/deberta.hpp"

namespace deberta_figures {

using posenc::DebertaPlan;
using posenc::DebertaSpec;
using posenc::figures::Json;
constexpr const char* kPreset = "deberta-v3-base";
constexpr std::int64_t kSpan = 1500;       // buckets: rel in [-kSpan, kSpan]
constexpr std::int64_t kScoreSpan = 640;   // score_offset: rel in [-kScoreSpan, kScoreSpan] (past +-511)
constexpr std::uint32_t kSeed = 20260312;  // the old Python module's seed (tables kSeed, kSeed + 10; q kSeed, k + 20)
constexpr std::size_t kSmallLength = 8, kFirstRows = 3;  // index: 8 x 8, then the first 3 query rows
// (position_buckets, max_relative_positions) of schemes/deberta/cases.hpp.
constexpr std::pair<std::size_t, std::size_t> kConfigs[] = {{256, 512}, {128, 512}, {64, 256}, {32, 64},  {4, 8},
                                                           {8, 16},    {257, 1000}, {3, 5},    {2, 3},   {512, 2048}};

DebertaSpec preset() { return posenc::find_preset<DebertaSpec>(kPreset).spec; }

// A plan for buckets and indices alone (the CLI's index plan): one head, head_dim 1, zero tables.
DebertaPlan index_plan(DebertaSpec s) {
  s.heads = 1;
  s.head_dim = 1;
  posenc::DebertaWeights w;
  if (s.c2p) w.pos_key.assign(posenc::deberta_table_rows(s), 0.0);
  if (s.p2c) w.pos_query.assign(posenc::deberta_table_rows(s), 0.0);
  return DebertaPlan(s, w);
}

std::vector<std::int32_t> relative(const DebertaPlan& plan, std::size_t lq, std::size_t lk) {
  std::vector<std::int32_t> out(lq * lk);
  plan.relative_positions(lq, lk, out);
  return out;
}

std::vector<std::int32_t> c2p(const DebertaPlan& plan, std::size_t lq, std::size_t lk) {
  std::vector<std::int32_t> out(lq * lk);
  plan.position_indices(lq, lk, out);
  return out;
}

// ---- buckets --------------------------------------------------------------------------------------------------

Json bucket_curve(bool clamp) {
  DebertaSpec s = preset();
  s.clamp = clamp;
  const DebertaPlan plan = index_plan(s);
  const auto n = static_cast<std::size_t>(kSpan + 1);
  const auto column = relative(plan, n, 1), row = relative(plan, 1, n);  // b(i), b(-j)
  Json pts = Json::array();
  for (std::size_t j = n - 1; j >= 1; --j) pts.push_back({-static_cast<std::int64_t>(j), row[j]});
  for (std::size_t i = 0; i < n; ++i) pts.push_back({i, column[i]});
  Json quoted = Json::array();
  for (std::int64_t r : {std::int64_t{511}, std::int64_t{512}, kSpan}) quoted.push_back({r, column[r]});
  return {{"preset", kPreset}, {"clamp", clamp}, {"points", pts}, {"quoted", quoted}};
}

Json buckets() {
  return {{"span", kSpan}, {"length", kSpan + 1}, {"curves", Json::array({bucket_curve(false), bucket_curve(true)})}};
}

// ---- score against offset -------------------------------------------------------------------------------------

// dim float32 numbers drawn N(0, 1/dim) (the old module's fixed_vector).
std::vector<double> fixed_vector(std::size_t dim, std::uint32_t seed) {
  posenc::figures::CpythonRandom rng(seed);
  std::vector<double> v(dim);
  for (double& x : v) x = static_cast<float>(rng.gauss(0.0, 1.0 / std::sqrt(static_cast<double>(dim))));
  return v;
}

// [2 span][dim]: row b + span holds t(b), a random walk over the bucket: t(0) drawn N(0, 1/dim) (generator seed + 3),
// t(b) = t(b - 1) + N(0, 1/dim) for b = 1 .. span - 1 (seed + 1), t(b) = t(b + 1) + N(0, 1/dim) for b = -1 .. -span
// (seed + 2); the old module's synthetic_table.
std::vector<double> synthetic_table(std::size_t span, std::size_t dim, std::uint32_t seed) {
  const double sd = 1.0 / std::sqrt(static_cast<double>(dim));
  std::vector<double> t(2 * span * dim);
  posenc::figures::CpythonRandom rng0(seed + 3), up(seed + 1), down(seed + 2);
  for (std::size_t c = 0; c < dim; ++c) t[span * dim + c] = rng0.gauss(0.0, sd);
  for (std::size_t row = span + 1; row < 2 * span; ++row)
    for (std::size_t c = 0; c < dim; ++c) t[row * dim + c] = t[(row - 1) * dim + c] + up.gauss(0.0, sd);
  for (std::size_t row = span; row-- > 0;)
    for (std::size_t c = 0; c < dim; ++c) t[row * dim + c] = t[(row + 1) * dim + c] + down.gauss(0.0, sd);
  return t;
}

// n x n scores of every query x and every key y (one term alone when the other is zero): [rel, score] for rel = -j
// of row 0, then rel = n - 1 - j of the last row (rel 0 from the last row, as the old module's dict kept it).
Json term_curve(const DebertaPlan& plan, const std::vector<double>& x, const std::vector<double>& y, std::size_t n) {
  std::vector<double> q, k, out(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    q.insert(q.end(), x.begin(), x.end());
    k.insert(k.end(), y.begin(), y.end());
  }
  plan.scores(std::span<const double>(q), std::span<const double>(k), n, n, {}, std::nullopt, std::span<double>(out));
  Json pts = Json::array();
  for (std::size_t j = n - 1; j >= 1; --j) pts.push_back({-static_cast<std::int64_t>(j), out[j]});
  for (std::size_t r = 0; r < n; ++r) pts.push_back({r, out[(n - 1) * n + (n - 1 - r)]});
  return pts;
}

// Per region of |rel| (identity: <= mid; log: mid < |rel| <= max - 1; beyond), the offsets and distinct rows read;
// lo / hi: c(rel) is row 0 for every rel <= lo and row 2 span - 1 for every rel >= hi (null where not reached).
Json regions(const DebertaPlan& plan, std::int64_t mid, std::int64_t m, std::int32_t last) {
  std::map<std::string, std::pair<std::size_t, std::set<std::int32_t>>> reg;
  std::optional<std::int64_t> lo, hi;
  for (std::int64_t r = -kScoreSpan; r <= kScoreSpan; ++r) {
    const std::int64_t a = r < 0 ? -r : r;
    auto& [count, rows] = reg[a <= mid ? "identity" : a <= m ? "log" : "beyond"];
    ++count;
    rows.insert(plan.position_index(r));
  }
  for (std::int64_t r = -kScoreSpan; r <= kScoreSpan && plan.position_index(r) == 0; ++r) lo = r;
  for (std::int64_t r = kScoreSpan; r >= -kScoreSpan && plan.position_index(r) == last; --r) hi = r;
  Json out{{"flat_low", lo ? Json(*lo) : Json()}, {"flat_high", hi ? Json(*hi) : Json()}};
  for (const auto& [name, v] : reg) out[name] = {{"offsets", v.first}, {"rows", v.second.size()}};
  return out;
}

// lo - pad and hi + pad of both curves' values, pad = 5 % of their range (1 if flat): the plot's y range.
Json y_range(const Json& a, const Json& b) {
  double lo = a[0][1].get<double>(), hi = lo;
  for (const Json* c : {&a, &b})
    for (const auto& p : *c) {
      lo = std::min(lo, p[1].get<double>());
      hi = std::max(hi, p[1].get<double>());
    }
  const double pad = 0.05 * (hi - lo != 0 ? hi - lo : 1);
  return Json::array({lo - pad, hi + pad});
}

Json score_offset() {
  DebertaSpec s = preset();
  s.heads = 1;
  const std::size_t hd = s.head_dim, sp = posenc::deberta_span(s), n = kScoreSpan + 1;
  const posenc::DebertaWeights w{synthetic_table(sp, hd, kSeed), synthetic_table(sp, hd, kSeed + 10)};
  const DebertaPlan plan(s, w);
  const std::vector<double> q = fixed_vector(hd, kSeed), k = fixed_vector(hd, kSeed + 20), zero(hd, 0.0);
  const Json c2p_pts = term_curve(plan, q, zero, n), p2c_pts = term_curve(plan, zero, k, n);
  const auto mid = static_cast<std::int64_t>(*s.position_buckets / 2);
  const auto m = static_cast<std::int64_t>(s.max_relative_positions) - 1;
  const auto last = static_cast<std::int32_t>(2 * sp - 1);
  return {{"preset", kPreset}, {"position_buckets", *s.position_buckets},
          {"max_relative_positions", s.max_relative_positions}, {"regime", std::string(posenc::to_string(s.regime))},
          {"head_dim", hd}, {"scale_factor", posenc::deberta_scale_factor(s)}, {"span", sp}, {"last_row", last},
          {"reach", sp - 1}, {"mid", mid}, {"max_minus_1", m}, {"score_span", kScoreSpan}, {"length", n},
          {"seeds", {{"pos_key", kSeed}, {"pos_query", kSeed + 10}, {"q", kSeed}, {"k", kSeed + 20}}},
          {"c2p", c2p_pts}, {"p2c", p2c_pts}, {"yrange", y_range(c2p_pts, p2c_pts)},
          {"regions", regions(plan, mid, m, last)}, {"b_score_span", plan.bucket(kScoreSpan)},
          {"b_minus_max", plan.bucket(-m)}, {"c_minus_max", plan.position_index(-m)}};
}

// ---- exact vs HF float32 buckets ------------------------------------------------------------------------------

std::vector<std::int32_t> bucket_column(std::size_t bs, std::size_t mp, posenc::DebertaRegime regime) {
  DebertaSpec s;  // the CLI's spec without a preset: the defaults, then the flags
  s.position_buckets = bs;
  s.max_relative_positions = mp;
  s.regime = regime;
  return relative(index_plan(s), 4 * mp + 1, 1);  // b(a), a = 0 .. 4 max
}

Json exact_vs_float32() {
  Json rows = Json::array();
  for (const auto& [bs, mp] : kConfigs) {
    const auto exact = bucket_column(bs, mp, posenc::DebertaRegime::exact);
    const auto hf = bucket_column(bs, mp, posenc::DebertaRegime::hf);
    Json differ = Json::array();  // [a, exact bucket, hf bucket]
    for (std::size_t a = 0; a < exact.size(); ++a)
      if (exact[a] != hf[a]) differ.push_back({a, exact[a], hf[a]});
    rows.push_back({{"position_buckets", bs}, {"max_relative_positions", mp}, {"max_distance", 4 * mp},
                    {"differ", differ}});
  }
  return {{"rows", rows}};
}

// ---- small index matrices -------------------------------------------------------------------------------------

// [[offsets], bucket] for every bucket that several offsets i = 0 .. L - 1 of column 0 (rel = i) share.
Json shared_buckets(const std::vector<std::int32_t>& b) {
  std::map<std::int32_t, std::vector<std::size_t>> by;
  for (std::size_t i = 0; i < kSmallLength; ++i) by[b[i * kSmallLength]].push_back(i);
  Json out = Json::array();
  for (const auto& [v, offs] : by)
    if (offs.size() > 1) out.push_back({offs, v});
  return out;
}

// Facts of the square b and c: the offsets where b + span leaves [0, 2 span - 1], b odd (minus its transpose),
// c = clamp(b + span, 0, 2 span - 1) of this b, every c in [0, 2 span - 1].
Json square_facts(const std::vector<std::int32_t>& b, const std::vector<std::int32_t>& c, std::int64_t sp) {
  const std::size_t L = kSmallLength;
  std::set<std::int64_t> clamped;
  bool odd = true, own = true, in_range = true;
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) {
      const std::int64_t bij = b[i * L + j], cij = c[i * L + j];
      if (bij + sp < 0 || bij + sp > 2 * sp - 1)
        clamped.insert(static_cast<std::int64_t>(i) - static_cast<std::int64_t>(j));
      odd = odd && bij == -b[j * L + i];
      own = own && cij == std::clamp<std::int64_t>(bij + sp, 0, 2 * sp - 1);
      in_range = in_range && cij >= 0 && cij <= 2 * sp - 1;
    }
  return {{"clamped", clamped}, {"odd", odd}, {"c_is_clamp_of_b", own}, {"c_in_range", in_range}};
}

Json index_matrices() {
  DebertaSpec s = preset();
  s.position_buckets = 4;
  s.max_relative_positions = 4;
  const DebertaPlan plan = index_plan(s);
  const std::size_t L = kSmallLength, bs = *s.position_buckets, sp = posenc::deberta_span(s);
  const auto b = relative(plan, L, L), c = c2p(plan, L, L), first = c2p(plan, kFirstRows, L);
  Json facts = square_facts(b, c, static_cast<std::int64_t>(sp));
  facts["first_rows"] = std::equal(first.begin(), first.end(), c.begin());
  facts["span_is_position_buckets"] = sp == bs;
  facts["shared"] = shared_buckets(b);
  return {{"preset", kPreset}, {"position_buckets", bs}, {"max_relative_positions", s.max_relative_positions},
          {"mid", bs / 2}, {"max_minus_1", s.max_relative_positions - 1}, {"span", sp}, {"rows", 2 * sp},
          {"last_row", 2 * sp - 1}, {"regime", std::string(posenc::to_string(s.regime))}, {"length", L},
          {"first_length", kFirstRows}, {"relative", posenc::figures::rows(b, L)}, {"c2p", posenc::figures::rows(c, L)},
          {"c2p_first", posenc::figures::rows(first, L)}, {"facts", facts}};
}

}  // namespace deberta_figures

POSENC_FIGURES(deberta) {
  figures["buckets"] = deberta_figures::buckets();
  figures["score_offset"] = deberta_figures::score_offset();
  figures["exact_vs_float32"] = deberta_figures::exact_vs_float32();
  figures["index"] = deberta_figures::index_matrices();
}
