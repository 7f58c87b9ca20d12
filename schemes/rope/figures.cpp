// RoPE's figures (reports/figures/figures.hpp; drawn by schemes/rope/report.py):
//   score_vs_distance   <R(m)q, R(m+d)q> against d for m = 0 and 100000 (hf-llama frequencies, exact regime, f64
//                       scores of one float32 unit vector q, Python seed kSeed) and their largest difference
//   score_error         |score(regime) - score(exact)| against d, query at the end of a 1M and a 4K context (hf-llama
//                       hf, ggml-neox ggml; seeds kSeed + 1, kSeed + 2): the points where it is > 0, and the largest
//   scaled_frequencies  theta'_k / theta_k per pair of every scaling of a Llama-3-like head and of Phi-3.5-mini's
//                       LongRoPE (short and long factors), with the pair counts and attention factors the caption quotes
//   long_context        max over pairs of |hf - exact| of the cos/sin cache per quarter-octave position bucket over
//                       0 .. 131071, two config fixtures scaled and unscaled: points, the largest error below 1k, 8k,
//                       32k and 128k, where it passes ulp(1), and the scaled / unscaled ratio of the largest errors
//   xpos_overflow       per scale_base and side: the first distance from the centre where xPos' scale of pair 0
//                       exceeds the float16 and float32 maxima (exact) and where torchscale's float32 cache is inf
//                       (hf), by bisection, with the closed form ceil(sb ln max / ln 3.5)
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "figures.hpp"
#include "posenc/rope.hpp"
#include "posenc/rope_config.hpp"
#include "python_compat.hpp"

namespace rope_figures {

using posenc::figures::Json;
using posenc::RopeRegime;
using posenc::RopeScaling;
using posenc::RopeSpec;

constexpr std::size_t kHeadDim = 128;
constexpr std::uint64_t kSeed = 20261124;            // Python's random.Random(seed): the same q, k as before
constexpr std::int64_t kContext = (1 << 20) - 1;     // the query's position in the 1M context ...
constexpr std::int64_t kShort = 4095;                // ... and in the 4K one
constexpr const char* kConfigDir = "cli/tests/data/configs";

// One vector of `dim` float32 numbers, iid N(0, 1) / sqrt(dim) (random.Random(seed).gauss, then rounded to float).
std::vector<double> unit_vector(std::size_t dim, std::uint64_t seed) {
  posenc::figures::CpythonRandom rng(seed);
  std::vector<double> v(dim);
  for (double& x : v) x = static_cast<float>(rng.gauss(0.0, 1.0) / std::sqrt(static_cast<double>(dim)));
  return v;
}

// 0 .. 15, then 12 points per octave (round(16 * 2^(i/12))) below `limit`, and `limit`; increasing.
std::vector<std::int64_t> distances(std::int64_t limit) {
  std::set<std::int64_t> out{limit};
  for (std::int64_t d = 0; d < 16; ++d) out.insert(d);
  for (int i = 0; 16 * std::pow(2.0, i / 12.0) < static_cast<double>(limit); ++i)
    out.insert(static_cast<std::int64_t>(std::nearbyint(16 * std::pow(2.0, i / 12.0))));
  std::vector<std::int64_t> v;
  for (std::int64_t d : out)
    if (d <= limit) v.push_back(d);
  return v;
}

// <R(q_pos) q, R(k_pos[j]) k> for every j (RopePlan::scores, f64; `posenc scores rope` gives the same values).
std::vector<double> scores(const char* preset, RopeRegime regime, const std::vector<double>& q, std::int64_t q_pos,
                           const std::vector<double>& k, const std::vector<std::int64_t>& k_pos) {
  RopeSpec s = posenc::rope_preset(preset, q.size());
  s.regime = regime;
  std::vector<double> keys;
  for (std::size_t j = 0; j < k_pos.size(); ++j) keys.insert(keys.end(), k.begin(), k.end());
  std::vector<double> out(k_pos.size());
  const std::vector<std::int64_t> qp{q_pos};
  posenc::make_plan(s).scores(std::span<const double>(q), qp, std::span<const double>(keys), k_pos,
                              std::span<double>(out));
  return out;
}

Json score_vs_distance() {
  const std::vector<double> q = unit_vector(kHeadDim, kSeed);
  const std::vector<std::int64_t> ds = distances(1 << 16);
  Json series = Json::array();
  std::vector<double> first;
  double worst = 0.0;
  for (std::int64_t m : {std::int64_t{0}, std::int64_t{100000}}) {
    std::vector<std::int64_t> kp;
    for (std::int64_t d : ds) kp.push_back(m + d);
    const std::vector<double> row = scores("hf-llama", RopeRegime::exact, q, m, q, kp);
    if (first.empty()) first = row;
    else
      for (std::size_t i = 0; i < row.size(); ++i) worst = std::max(worst, std::abs(first[i] - row[i]));
    series.push_back({{"query", m}, {"points", posenc::figures::points(ds, row)}});
  }
  return {{"head_dim", kHeadDim}, {"seed", kSeed}, {"series", series}, {"largest_difference", worst}};
}

Json score_error() {
  const std::vector<double> q = unit_vector(kHeadDim, kSeed + 1), k = unit_vector(kHeadDim, kSeed + 2);
  Json contexts = Json::array();
  for (const auto& [n, label] : {std::pair{kContext, "1M"}, std::pair{kShort, "4K"}}) {
    const std::vector<std::int64_t> ds = distances(n);
    std::vector<std::int64_t> kp;
    for (std::int64_t d : ds) kp.push_back(n - d);
    const std::vector<double> exact = scores("hf-llama", RopeRegime::exact, q, n, k, kp);
    Json series = Json::array();
    for (const auto& [preset, regime, name] : {std::tuple{"hf-llama", RopeRegime::hf, "hf"},
                                               std::tuple{"ggml-neox", RopeRegime::ggml, "ggml"}}) {
      const std::vector<double> got = scores(preset, regime, q, n, k, kp);
      Json pts = Json::array();
      double largest = 0.0;
      for (std::size_t i = 0; i < ds.size(); ++i) {
        const double e = std::abs(got[i] - exact[i]);
        largest = std::max(largest, e);
        if (e > 0) pts.push_back({ds[i], e});  // log axes
      }
      series.push_back({{"preset", preset}, {"regime", name}, {"points", pts}, {"largest", largest}});
    }
    contexts.push_back({{"query", n}, {"label", label}, {"series", series}});
  }
  return {{"head_dim", kHeadDim}, {"seeds", {kSeed + 1, kSeed + 2}}, {"contexts", contexts}};
}

std::string read_config(const std::string& file) {
  const std::string path = std::string(POSENC_SOURCE_DIR) + "/" + kConfigDir + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// [[k, theta'_k / theta_k]] of a spec against the same spec unscaled, and the smallest ratio.
Json ratios(const RopeSpec& s, double* smallest = nullptr) {
  const posenc::RopePlan plan = posenc::make_plan(s), plain = posenc::make_plan(posenc::without_scaling(s));
  Json pts = Json::array();
  for (std::size_t k = 0; k < plan.frequencies().size(); ++k) {
    const double r = plan.frequencies()[k] / plain.frequencies()[k];
    if (smallest && (k == 0 || r < *smallest)) *smallest = r;
    pts.push_back({k, r});
  }
  return pts;
}

Json scaling_series(const char* label, const RopeSpec& s) {
  const posenc::RopePlan plan = posenc::make_plan(s);
  std::size_t kept = 0, interpolated = 0;
  for (double w : plan.interpolation()) kept += w == 0.0, interpolated += w == 1.0;
  return {{"label", label}, {"points", ratios(s)}, {"pairs_kept", kept},
          {"pairs_blended", plan.interpolation().size() - kept - interpolated}, {"pairs_interpolated", interpolated},
          {"attention_factor", plan.attention_factor()}};
}

Json longrope_series(const char* label, RopeSpec s, std::int64_t seq_len) {
  s.seq_len = seq_len;
  double smallest = 0.0;
  Json pts = ratios(s, &smallest);
  return {{"label", label}, {"points", pts}, {"factors", s.seq_len > s.original_context ? "long_factor" : "short_factor"},
          {"divided_first", 1.0 / pts[0][1].get<double>()}, {"divided_most", 1.0 / smallest},
          {"attention_factor", posenc::make_plan(s).attention_factor()}};
}

// A Llama-3-like head (d = 128, base 5e5, L0 = 8192) extended 8x by each scaling, and Phi-3.5-mini's LongRoPE.
Json scaled_frequencies() {
  auto head = [](RopeScaling scaling) {
    return RopeSpec{.head_dim = kHeadDim, .rotary_dim = kHeadDim, .base = 500000.0, .scaling = scaling, .factor = 8.0};
  };
  RopeSpec dynamic = head(RopeScaling::dynamic), yarn = head(RopeScaling::yarn), llama3 = head(RopeScaling::llama3);
  dynamic.max_context = 8192, dynamic.seq_len = 65536;
  yarn.original_context = llama3.original_context = 8192;
  Json series = Json::array({scaling_series("linear", head(RopeScaling::linear)),
                             scaling_series("ntk", head(RopeScaling::ntk)),
                             scaling_series("dynamic (L = 8 L0)", dynamic), scaling_series("yarn", yarn),
                             scaling_series("llama3", llama3)});
  const RopeSpec phi = posenc::rope_spec_from_hf_config(read_config("phi-3.5-mini-instruct.json"));
  Json longrope = Json::array({longrope_series("longrope short (Phi-3.5, L <= L0)", phi, 0),
                               longrope_series("longrope long (Phi-3.5, L = 128k)", phi, 131072)});
  return {{"head_dim", kHeadDim}, {"series", series}, {"longrope", longrope},
          {"longrope_config", std::string(kConfigDir) + "/phi-3.5-mini-instruct.json"}};
}


// ---- long_context: HF's float32 cos/sin cache against the exact one at every position 0 .. kLongEnd - 1 ----------
constexpr std::int64_t kLongEnd = 131072;
constexpr std::int64_t kChunk = 16384;                   // positions per cache call
constexpr std::int64_t kMarks[] = {1024, 8192, 32768, 131072};
constexpr double kUlpF32One = 0x1p-23;

struct Bucket {
  std::int64_t lo = 0, end = 0;  // positions [lo, end)
  double error = 0.0;            // max over its positions and pairs of |hf - exact| (cos and sin)
  std::size_t pair = 0;          // where (the first pair reaching it)
};

// {0}, then quarter octaves [ceil 2^(j/4), ceil 2^((j+1)/4)) up to `end`.
std::vector<Bucket> buckets(std::int64_t end) {
  std::set<std::int64_t> cuts{0, 1, end};
  for (int j = 0;; ++j) {
    const auto c = static_cast<std::int64_t>(std::ceil(std::pow(2.0, j / 4.0)));
    if (c >= end) break;
    cuts.insert(std::max<std::int64_t>(c, 1));
  }
  std::vector<Bucket> out;
  for (auto it = cuts.begin(); std::next(it) != cuts.end(); ++it) out.push_back({*it, *std::next(it)});
  return out;
}

// Per bucket, max |hf - exact| of the pairs-form cache (RopePlan::cache, f64; `posenc table rope ... --regime hf|exact
// --form pairs --dtype f64` gives the same values), chunk by chunk.
std::vector<Bucket> cache_error(const RopeSpec& s) {
  RopeSpec hf = s, exact = s;
  hf.regime = RopeRegime::hf, exact.regime = RopeRegime::exact;
  const posenc::RopePlan plan_hf = posenc::make_plan(hf), plan_exact = posenc::make_plan(exact);
  const std::size_t h = posenc::pair_count(s), cols = 2 * h;
  std::vector<Bucket> out = buckets(kLongEnd);
  std::size_t b = 0;
  for (std::int64_t a = 0; a < kLongEnd; a += kChunk) {
    const std::int64_t z = std::min(a + kChunk, kLongEnd);
    std::vector<std::int64_t> pos;
    for (std::int64_t p = a; p < z; ++p) pos.push_back(p);
    std::vector<double> got(pos.size() * cols), want(pos.size() * cols);
    plan_hf.cache(posenc::RopeCacheForm::pairs, pos, std::span<double>(got));
    plan_exact.cache(posenc::RopeCacheForm::pairs, pos, std::span<double>(want));
    for (std::size_t i = 0; i < pos.size(); ++i) {
      while (pos[i] >= out[b].end) ++b;
      std::size_t at = 0;
      double m = -1.0;
      for (std::size_t c = 0; c < cols; ++c)
        if (const double e = std::abs(got[i * cols + c] - want[i * cols + c]); e > m) m = e, at = c;
      if (m > out[b].error) out[b].error = m, out[b].pair = at % h;
    }
  }
  return out;
}

Json long_context_series(const std::string& model, const std::string& scaling, const RopeSpec& s) {
  const std::vector<Bucket> bs = cache_error(s);
  Json pts = Json::array(), below = Json::array();
  const Bucket* largest = &bs.front();
  for (const Bucket& b : bs) {
    if (b.end - 1 > 0 && b.error > 0) pts.push_back({b.end - 1, b.error});  // at its last position (log axes)
    if (b.error > largest->error) largest = &b;
  }
  for (std::int64_t mark : kMarks) {
    double m = 0.0;
    for (const Bucket& b : bs)
      if (b.end - 1 < mark) m = std::max(m, b.error);
    if (mark <= kLongEnd) below.push_back({mark, m});
  }
  const bool scaled = s.scaling != RopeScaling::none;
  return {{"label", model + (scaled ? " (" + scaling + ")" : " head unscaled")}, {"model", model},
          {"scaling", scaled ? scaling : "none"}, {"factor", s.factor}, {"base", s.base}, {"head_dim", s.head_dim},
          {"attention_factor", posenc::make_plan(s).attention_factor()}, {"points", pts}, {"below", below},
          {"largest", largest->error}, {"largest_pair", largest->pair}};
}

// Where the series pass ulp(1): the first point after the last one at or below it, the latest over the series.
std::int64_t above_ulp_from(const Json& series) {
  std::int64_t cross = 1;
  for (const Json& s : series) {
    std::int64_t last_below = 0, first_after = -1;
    for (const Json& p : s["points"])
      if (p[1].get<double>() <= kUlpF32One) last_below = std::max(last_below, p[0].get<std::int64_t>());
    for (const Json& p : s["points"])
      if (const auto x = p[0].get<std::int64_t>(); x > last_below && (first_after < 0 || x < first_after)) first_after = x;
    cross = std::max(cross, first_after < 0 ? last_below : first_after);
  }
  return cross;
}

Json long_context() {
  Json series = Json::array(), changes = Json::array();
  for (const auto& [model, file, scaling] : {std::tuple{"Llama 3.1 8B", "llama-3.1-8b.json", "llama3"},
                                             std::tuple{"Qwen2.5 7B", "qwen2.5-7b-instruct-yarn.json", "yarn"}}) {
    const RopeSpec s = posenc::rope_spec_from_hf_config(read_config(file));
    const Json a = long_context_series(model, scaling, s);
    const Json b = long_context_series(model, scaling, posenc::without_scaling(s));
    if (b["largest"].get<double>() > 0)
      changes.push_back({{"model", model}, {"scaling", scaling},
                         {"ratio", a["largest"].get<double>() / b["largest"].get<double>()},
                         {"attention_factor", a["attention_factor"]}, {"pair", a["largest_pair"]},
                         {"pair_unscaled", b["largest_pair"]}});
    series.push_back(a);
    series.push_back(b);
  }
  std::int64_t top = 1;
  for (const Json& s : series)
    for (const Json& p : s["points"]) top = std::max(top, p[0].get<std::int64_t>());
  const std::int64_t span = std::int64_t{1} << std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint64_t>(top - 1))));
  return {{"positions", {0, kLongEnd - 1}}, {"configs", kConfigDir}, {"ulp_f32_one", kUlpF32One}, {"top", top},
          {"xrange", {1, span}}, {"above_ulp_from", above_ulp_from(series)}, {"changes", changes}, {"series", series}};
}

// ---- xpos_overflow: bisection on the head_dim 2 caches (pair 0: zeta_0 = 2/7, the fastest-changing scale) ------
constexpr std::int64_t kXposCenter = std::int64_t{1} << 20;
constexpr double kF16Max = 65504.0, kF32Max = 3.4028234663852886e38;

RopeSpec xpos_spec(posenc::RopeXpos side, double scale_base, RopeRegime regime) {
  return RopeSpec{.regime = regime, .head_dim = 2, .rotary_dim = 2, .xpos = side, .xpos_scale_base = scale_base,
                  .xpos_center = kXposCenter};
}

// The least d in [0, hi] with pred(d) (pred monotone in d), hi + 1 if none.
template <class Pred>
std::int64_t first_beyond(Pred pred, std::int64_t hi) {
  std::int64_t lo = 0, top = hi + 1;
  while (lo < top) {
    const std::int64_t mid = (lo + top) / 2;
    if (pred(mid)) top = mid;
    else lo = mid + 1;
  }
  return lo;
}

Json xpos_row(posenc::RopeXpos side, std::int64_t sb) {
  const bool query = side == posenc::RopeXpos::query;  // queries grow below the centre, keys above it
  const auto at = [&](std::int64_t d) { return std::vector<std::int64_t>{query ? kXposCenter - d : kXposCenter + d}; };
  const posenc::RopePlan exact = posenc::make_plan(xpos_spec(side, static_cast<double>(sb), RopeRegime::exact));
  const posenc::RopePlan hf = posenc::make_plan(xpos_spec(side, static_cast<double>(sb), RopeRegime::hf));
  const auto exact_over = [&](double limit) {
    return [&, limit](std::int64_t d) {
      double cs[2];
      exact.cache(posenc::RopeCacheForm::pairs, at(d), std::span<double>(cs));
      return std::hypot(cs[0], cs[1]) > limit;  // the scale, as |(cos, sin)|
    };
  };
  const auto hf_inf = [&](std::int64_t d) {
    float cs[2];
    hf.cache(posenc::RopeCacheForm::pairs, at(d), std::span<float>(cs));
    return !std::isfinite(cs[0]) || !std::isfinite(cs[1]);
  };
  const std::int64_t reach = 553 * sb;  // the spec's position range around the centre
  const std::int64_t f16 = first_beyond(exact_over(kF16Max), reach), f32 = first_beyond(exact_over(kF32Max), reach);
  const auto closed = [&](double m) {
    return static_cast<std::int64_t>(std::ceil(static_cast<double>(sb) * std::log(m) / std::log(3.5)));
  };
  return {{"scale_base", sb}, {"side", query ? "query" : "key"}, {"f16", f16}, {"f32", f32},
          {"hf_inf", first_beyond(hf_inf, reach)}, {"closed_f16", closed(kF16Max)}, {"closed_f32", closed(kF32Max)},
          {"sequence_f16", 2 * f16}, {"sequence_f32", 2 * f32}};
}

Json xpos_overflow() {
  Json rows = Json::array();
  for (std::int64_t sb : {64, 512})
    for (posenc::RopeXpos side : {posenc::RopeXpos::query, posenc::RopeXpos::key}) rows.push_back(xpos_row(side, sb));
  return {{"center", kXposCenter}, {"rows", rows}};
}

}  // namespace rope_figures

POSENC_FIGURES(rope) {
  figures["score_vs_distance"] = rope_figures::score_vs_distance();
  figures["score_error"] = rope_figures::score_error();
  figures["scaled_frequencies"] = rope_figures::scaled_frequencies();
  figures["long_context"] = rope_figures::long_context();
  figures["xpos_overflow"] = rope_figures::xpos_overflow();
}
