// T5's figures (reports/figures/figures.hpp; drawn by schemes/t5/report.py):
//   buckets          the bucket of every r in [-kSpan, kSpan] for t5-encoder and t5-decoder (HF float32 buckets)
//   exact_vs_float32 per (num_buckets, max_distance) of the case table and direction: the log buckets whose first
//                    distance differs between the exact and the hf regime
//   bias_distance    bias of kHeads heads of a synthetic table against r for query row 0 at position kSide, with the
//                    facts the caption quotes (levels, flatness beyond max_distance, exact-vs-hf differences)
#include <cmath>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/t5.hpp"

namespace t5_figures {

using posenc::figures::Json;
constexpr std::int64_t kSpan = 300;
constexpr std::size_t kHeads = 4;
constexpr std::int64_t kSide = 149;
// (num_buckets, max_distance) of schemes/t5/cases.hpp.
constexpr std::pair<std::size_t, std::int64_t> kConfigs[] = {{32, 128}, {32, 256}, {64, 128}, {128, 1024}, {8, 16},
                                                             {16, 64},  {64, 256}, {128, 128}, {34, 27},   {96, 81},
                                                             {19, 25},  {31, 532}};

posenc::T5Spec spec_of(std::size_t nb, std::int64_t md, bool bi, posenc::T5Regime regime) {
  posenc::T5Spec s;
  s.num_buckets = nb;
  s.max_distance = md;
  s.bidirectional = bi;
  s.heads = 1;
  s.regime = regime;
  return s;
}

std::vector<std::int64_t> thresholds(posenc::T5Spec s) {
  s.heads = 1;
  const posenc::T5Plan plan(s, posenc::T5Weights{std::vector<double>(s.num_buckets, 0.0)});
  return {plan.thresholds().begin(), plan.thresholds().end()};
}

Json bucket_curves() {
  Json out = Json::array();
  for (const char* preset : {"t5-encoder", "t5-decoder"}) {
    const posenc::T5Spec s = posenc::t5_preset(preset, 1);
    const posenc::T5Plan plan(s, posenc::T5Weights{std::vector<double>(s.num_buckets, 0.0)});
    Json pts = Json::array();
    std::set<int> used;
    for (std::int64_t r = -kSpan; r <= kSpan; ++r) {
      pts.push_back({r, plan.bucket(r)});
      used.insert(plan.bucket(r));
    }
    out.push_back({{"preset", preset}, {"num_buckets", s.num_buckets}, {"bidirectional", s.bidirectional},
                   {"buckets_used", used.size()}, {"thresholds", thresholds(s)}, {"points", pts}});
  }
  return {{"span", kSpan}, {"presets", out}};
}

Json exact_vs_float32() {
  Json rows = Json::array();
  for (const auto& [nb, md] : kConfigs)
    for (bool bi : {true, false}) {
      const auto exact = thresholds(spec_of(nb, md, bi, posenc::T5Regime::exact));
      const auto hf = thresholds(spec_of(nb, md, bi, posenc::T5Regime::hf));
      const std::size_t me = posenc::t5_max_exact(spec_of(nb, md, bi, posenc::T5Regime::hf));
      Json differ = Json::array();  // [bucket, first distance exact, first distance hf]
      for (std::size_t t = 0; t < exact.size() && t < hf.size(); ++t)
        if (exact[t] != hf[t]) differ.push_back({me + t + 1, exact[t], hf[t]});
      rows.push_back({{"num_buckets", nb}, {"max_distance", md}, {"bidirectional", bi},
                      {"log_buckets", exact.size()}, {"differ", differ}});
    }
  return {{"rows", rows}};
}

// table[b][h] = RN32(cos(pi (h + 1/2)(b + 1/2) / nb)): the DCT-IV basis, head 0 strictly decreasing in b.
std::vector<double> synthetic_table(std::size_t nb) {
  std::vector<double> t(nb * kHeads);
  for (std::size_t b = 0; b < nb; ++b)
    for (std::size_t h = 0; h < kHeads; ++h)
      t[b * kHeads + h] = static_cast<float>(std::cos(std::numbers::pi * (h + 0.5) * (b + 0.5) / nb));
  return t;
}

std::size_t distinct(const std::vector<double>& row, std::int64_t from, std::int64_t to) {  // r in [from, to]
  std::set<double> v;
  for (std::int64_t r = from; r <= to; ++r) v.insert(row[static_cast<std::size_t>(r + kSide)]);
  return v.size();
}

Json bias_of(const char* preset, const std::vector<double>& table) {
  posenc::T5Spec s = posenc::t5_preset(preset, kHeads);
  const posenc::T5Plan plan(s, posenc::T5Weights{table});
  const std::size_t lk = 2 * kSide + 1, lq = kSide + 1;
  std::vector<double> bias(kHeads * lq * lk);
  plan.bias(posenc::BiasGeometry{lq, lk}, bias);
  std::vector<std::vector<double>> row(kHeads);  // query row 0 sits at position kSide: r = j - kSide
  for (std::size_t h = 0; h < kHeads; ++h) row[h].assign(bias.begin() + h * lq * lk, bias.begin() + h * lq * lk + lk);
  const auto me = static_cast<std::int64_t>(posenc::t5_max_exact(s));
  const std::int64_t md = s.max_distance;
  bool flat = true, collapsed = true;
  for (std::size_t h = 0; h < kHeads; ++h) {
    flat = flat && distinct(row[h], md, kSide) <= 1 && distinct(row[h], -kSide, -md) <= 1;
    for (std::int64_t r = 0; r <= kSide; ++r) collapsed = collapsed && row[h][r + kSide] == table[h];
  }
  const bool exact_steps = distinct(row[0], -me + 1, 0) == static_cast<std::size_t>(me) &&
                           (!s.bidirectional || distinct(row[0], 1, me - 1) == static_cast<std::size_t>(me - 1));
  posenc::T5Spec es = s;
  es.regime = posenc::T5Regime::exact;
  std::size_t differ = 0;
  for (std::int64_t r = -kSide; r <= kSide; ++r) differ += posenc::t5_bucket(s, r) != posenc::t5_bucket(es, r);
  Json heads = Json::array();
  for (std::size_t h = 0; h < kHeads; ++h) {
    Json pts = Json::array();
    for (std::int64_t r = -kSide; r <= kSide; ++r) pts.push_back({r, row[h][r + kSide]});
    heads.push_back(pts);
  }
  return {{"preset", preset}, {"bidirectional", s.bidirectional}, {"num_buckets", s.num_buckets},
          {"max_distance", md}, {"regime", std::string(posenc::to_string(s.regime))}, {"max_exact", me},
          {"levels_past", distinct(row[0], -kSide, -1)}, {"levels_future", distinct(row[0], 1, kSide)},
          {"exact_steps", exact_steps}, {"flat_beyond_max_distance", flat}, {"future_reads_bucket_0", collapsed},
          {"thresholds", thresholds(s)}, {"exact_regime_differs_at", differ}, {"heads", heads}};
}

Json bias_distance() {
  const std::size_t nb = posenc::t5_preset("t5-encoder", 1).num_buckets;
  const std::vector<double> table = synthetic_table(nb);
  return {{"heads", kHeads}, {"side", kSide}, {"num_buckets", nb},
          {"presets", Json::array({bias_of("t5-encoder", table), bias_of("t5-decoder", table)})}};
}

}  // namespace t5_figures

POSENC_FIGURES(t5) {
  figures["buckets"] = t5_figures::bucket_curves();
  figures["exact_vs_float32"] = t5_figures::exact_vs_float32();
  figures["bias_distance"] = t5_figures::bias_distance();
}
