// KERPLE's figures (reports/figures/figures.hpp; drawn by schemes/kerple/report.py):
//   log_bias, power_bias  the exact-regime f64 bias of kLogHeads / kPowerHeads (p, a) at d = 0 .. kCurveL ([d, b]
//                         points, one query row at position kCurveL), ALiBi's gpt-neox relative bias of head
//                         kAlibiHead of kAlibiHeads for reference, whether every curve is 0 at d = 0 and
//                         non-increasing, the largest relative difference from -p ln(1 + a d) / -a d^p evaluated in
//                         float64 (std::log1p, std::pow); power: whether the head (1, m) equals ALiBi's row bit for
//                         bit, and the lowest value at d = kCurveL
//   megatron_deviation    |megatron - exact| in float32 ulps of the exact bias for d = 1 .. kDevL, at the plotted
//                         distances (1 .. kDense, then kPerOctave per octave; zeros left out), with each head's
//                         largest, its largest for d >= kFarFrom, its exact distances and (log) whether every d lies
//                         within the carried half ulp of 1 + a d plus kSlack; the carried half ulp as a curve
//   clamp                 the (p, a) each kernel and regime uses for the (bias_p, bias_a) of kClampRows
//                         (KerplePlan::p(), a()), which of them the clamp changed, and whether every bias at d = 0 is 0
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "figures.hpp"
#include "posenc/alibi.hpp"
#include "posenc/kerple.hpp"

namespace kerple_figures {

using posenc::KerpleKernel;
using posenc::KerpleRegime;
using posenc::figures::Json;
using Params = std::vector<std::pair<double, double>>;  // (bias_p, bias_a) per head

double f32(double x) { return static_cast<float>(x); }

constexpr std::size_t kCurveL = 128;                    // (a), (a'): d = 0 .. kCurveL
const Params kLogHeads = {{1.0, 1.0}, {1.0, 0.1}, {1.0, 0.01}, {2.0, 0.1}, {0.5, 1.0}};
const Params kPowerHeads = {{0.5, 1.0}, {1.0, 0.0625}, {1.5, 0.01}, {2.0, 0.01}};
constexpr std::size_t kAlibiHeads = 8, kAlibiHead = 3;  // ALiBi's m_3 = 2^-4 of 8 heads
// (b): d = 0 .. kDevL; float32 parameters, so that megatron - exact is the arithmetic alone.
constexpr std::size_t kDevL = 4096, kDense = 64, kPerOctave = 24, kFarFrom = 1000;
const Params kDevLog = {{1.0, f32(0.01)}, {1.0, f32(0.1)}};
const Params kDevPower = {{f32(0.7), f32(0.3)}};
constexpr double kSlack = 1.0;  // (b): the other roundings (a D, the logarithm) on top of the carried half ulp
// (c): (bias_p, bias_a) around the clamps (schemes/kerple/cases.hpp kHardP, kHardA).
const Params kClampRows = {{-1.0, -1.0}, {0.0, 0.0},   {0.005, 0.005}, {0.01, 0.01},  {0.0100001, 0.05},
                           {0.5, 0.25},  {1.0, 1.0},   {2.0, 3.0},     {2.5, 100.0},  {7.0, 1e6}};

std::string name_of(KerpleKernel k) { return std::string(posenc::to_string(k)); }
std::string name_of(KerpleRegime r) { return std::string(posenc::to_string(r)); }

posenc::KerplePlan plan_of(KerpleKernel k, KerpleRegime r, const Params& params) {
  posenc::KerpleSpec s;
  s.heads = params.size();
  s.kernel = k;
  s.regime = r;
  posenc::KerpleWeights w;
  for (const auto& [p, a] : params) {
    w.p.push_back(p);
    w.a.push_back(a);
  }
  return posenc::KerplePlan(s, w);
}

// The f64 bias of every head at d = 0 .. limit: one query row at position `limit` (key j at distance limit - j).
std::vector<std::vector<double>> by_distance(const posenc::KerplePlan& plan, std::size_t limit) {
  const posenc::BiasGeometry g{.query_length = 1, .key_length = limit + 1};
  std::vector<double> m(posenc::kerple_bias_size(plan.spec(), g));
  plan.bias(g, std::span<double>(m));
  std::vector<std::vector<double>> rows(plan.spec().heads, std::vector<double>(limit + 1));
  for (std::size_t h = 0; h < rows.size(); ++h)
    for (std::size_t d = 0; d <= limit; ++d) rows[h][d] = m[h * (limit + 1) + limit - d];
  return rows;
}

// ALiBi's gpt-neox relative bias -m d of head kAlibiHead at d = 0 .. limit (exact regime).
std::vector<double> alibi_by_distance(std::size_t limit) {
  posenc::AlibiSpec s;
  s.heads = kAlibiHeads;
  const posenc::BiasGeometry g{.query_length = 1, .key_length = limit + 1};
  std::vector<double> m(posenc::alibi_bias_size(s, g));
  posenc::AlibiPlan(s).bias(g, std::span<double>(m));
  std::vector<double> row(limit + 1);
  for (std::size_t d = 0; d <= limit; ++d) row[d] = m[kAlibiHead * (limit + 1) + limit - d];
  return row;
}

Json by_d(const std::vector<double>& row) {
  Json pts = Json::array();
  for (std::size_t d = 0; d < row.size(); ++d) pts.push_back({d, row[d]});
  return pts;
}

bool non_increasing(const std::vector<double>& row) {
  for (std::size_t d = 0; d + 1 < row.size(); ++d)
    if (!(row[d + 1] <= row[d])) return false;
  return true;
}

// -p ln(1 + a d) / -a d^p in float64.
double float64_bias(KerpleKernel k, double p, double a, std::size_t d) {
  const double x = static_cast<double>(d);
  return k == KerpleKernel::log ? -p * std::log1p(a * x) : -a * std::pow(x, p);
}

// ---- (a), (a') the bias against the distance -------------------------------------------------------------

Json curves(KerpleKernel k, const Params& params) {
  const posenc::KerplePlan plan = plan_of(k, KerpleRegime::exact, params);
  for (std::size_t h = 0; h < params.size(); ++h)
    if (plan.p()[h] != params[h].first || plan.a()[h] != params[h].second)
      throw std::runtime_error("kerple curves: a parameter lies outside the clamp");
  const auto rows = by_distance(plan, kCurveL);
  const std::vector<double> alibi = alibi_by_distance(kCurveL);
  const double m = -alibi[1];
  bool shape = non_increasing(alibi), alibi_equal = false, found = false;
  double worst = 0, lowest = 0;
  Json heads = Json::array();
  for (std::size_t h = 0; h < rows.size(); ++h) {
    const auto [p, a] = params[h];
    shape = shape && rows[h][0] == 0 && non_increasing(rows[h]);
    for (std::size_t d = 1; d <= kCurveL; ++d) {
      const double want = float64_bias(k, p, a, d);
      worst = std::max(worst, std::fabs(rows[h][d] - want) / std::max(std::fabs(want), 1e-300));
    }
    lowest = std::min(lowest, rows[h][kCurveL]);
    if (p == 1 && a == m && !found) {  // the first head of ALiBi's line
      found = true;
      alibi_equal = rows[h] == alibi;
    }
    heads.push_back({{"p", p}, {"a", a}, {"points", by_d(rows[h])}, {"at_end", rows[h][kCurveL]}});
  }
  Json out = {{"kernel", name_of(k)}, {"length", kCurveL}, {"heads", heads}, {"shape_ok", shape},
              {"worst_relative", worst},
              {"alibi", {{"heads", kAlibiHeads}, {"head", kAlibiHead}, {"m", m}, {"points", by_d(alibi)},
                         {"at_end", alibi[kCurveL]}}}};
  if (k == KerpleKernel::power) {
    out["alibi_equal"] = alibi_equal;
    out["lowest_at_end"] = lowest;
  }
  return out;
}


// ---- (b) megatron - exact ------------------------------------------------------------------------------

// The spacing of binary32 numbers at |x| (normal range): 2^(floor(log2 |x|) - 23).
double ulp32(double x) {
  int e = 0;
  std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, e - 24);
}

// |got - exact| in float32 ulps of the exact value (0 where both are 0).
double ulps32(double got, double exact) {
  if (exact == 0) return got == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs((got - exact) / ulp32(exact));
}

// The log kernel's main float32 loss in ulps of the bias: half an ulp of the float32 u = 1 + a d carried into
// ln(u) as an absolute error of half_ulp(u) / u, times p, over ulp32(p ln u).
double carried_half_ulp(double p, double a, std::size_t d) {
  const double u = 1.0 + a * static_cast<double>(d);
  return p * (ulp32(u) / 2) / u / ulp32(p * std::log(u));
}

// 1 .. kDense, then kPerOctave distances per octave (rounded to nearest, ties to even) up to kDevL, and kDevL.
std::vector<std::size_t> plot_distances() {
  std::set<std::size_t> out{kDevL};
  for (std::size_t d = 1; d <= std::min(kDense, kDevL); ++d) out.insert(d);
  for (std::size_t i = 0;; ++i) {
    const double x = static_cast<double>(kDense) * std::pow(2.0, static_cast<double>(i) / kPerOctave);
    if (!(x < static_cast<double>(kDevL))) break;
    out.insert(static_cast<std::size_t>(std::nearbyint(x)));
  }
  std::vector<std::size_t> v;
  for (std::size_t d : out)
    if (d >= 1 && d <= kDevL) v.push_back(d);
  return v;
}

Json deviation_head(KerpleKernel k, double p, double a, const std::vector<double>& exact,
                    const std::vector<double>& megatron, const std::vector<std::size_t>& sample) {
  std::vector<double> dev(kDevL + 1);
  for (std::size_t d = 0; d <= kDevL; ++d) dev[d] = ulps32(megatron[d], exact[d]);
  std::size_t at = 1, zeros = 0;
  double far = 0;
  bool within = true;
  for (std::size_t d = 1; d <= kDevL; ++d) {
    if (dev[d] > dev[at]) at = d;
    if (d >= kFarFrom) far = std::max(far, dev[d]);
    zeros += dev[d] == 0;
    within = within && (k != KerpleKernel::log || dev[d] <= carried_half_ulp(p, a, d) + kSlack);
  }
  Json pts = Json::array();
  for (std::size_t d : sample)
    if (dev[d] > 0) pts.push_back({d, dev[d]});
  Json out = {{"kernel", name_of(k)}, {"p", p}, {"a", a}, {"points", pts}, {"largest", dev[at]},
              {"largest_at", at}, {"far_max", far}, {"zeros", zeros}};
  if (k == KerpleKernel::log) out["within_carried"] = within;
  return out;
}

Json megatron_deviation() {
  const std::vector<std::size_t> sample = plot_distances();
  Json heads = Json::array();
  bool zero_at_0 = true;
  for (const auto& [k, params] : {std::pair{KerpleKernel::log, kDevLog}, std::pair{KerpleKernel::power, kDevPower}}) {
    const posenc::KerplePlan exact = plan_of(k, KerpleRegime::exact, params);
    const posenc::KerplePlan megatron = plan_of(k, KerpleRegime::megatron, params);
    const auto e = by_distance(exact, kDevL), m = by_distance(megatron, kDevL);
    for (std::size_t h = 0; h < params.size(); ++h) {
      const auto [p, a] = params[h];
      if (megatron.p()[h] != p || megatron.a()[h] != a)
        throw std::runtime_error("kerple megatron deviation: the megatron regime does not use the float32 "
                                 "parameters as given");
      zero_at_0 = zero_at_0 && e[h][0] == 0 && m[h][0] == 0;
      heads.push_back(deviation_head(k, p, a, e[h], m[h], sample));
    }
  }
  const auto [p0, a0] = kDevLog[0];
  Json carried = Json::array();
  for (std::size_t d : sample) carried.push_back({d, carried_half_ulp(p0, a0, d)});
  return {{"length", kDevL}, {"dense", kDense}, {"per_octave", kPerOctave}, {"far_from", kFarFrom},
          {"slack", kSlack}, {"one_rounding", 0.5}, {"zero_at_0", zero_at_0}, {"heads", heads},
          {"carried", {{"p", p0}, {"a", a0}, {"points", carried}}}};
}

// ---- (c) the clamp ---------------------------------------------------------------------------------------

// Whether the clamp changed a parameter: the effective value differs from the given one rounded to the regime's
// type (megatron: float32; rounding alone is not a clamp).
bool clamped(KerpleRegime r, double given, double effective) {
  return effective != (r == KerpleRegime::megatron ? f32(given) : given);
}

Json clamp_table() {
  Json rows = Json::array();
  for (const auto& [p, a] : kClampRows) rows.push_back({{"bias_p", p}, {"bias_a", a}, {"cells", Json::array()}});
  bool zero_at_0 = true;
  for (KerpleRegime r : {KerpleRegime::exact, KerpleRegime::megatron})
    for (KerpleKernel k : {KerpleKernel::log, KerpleKernel::power}) {
      const posenc::KerplePlan plan = plan_of(k, r, kClampRows);
      const auto bias = by_distance(plan, 0);
      for (std::size_t h = 0; h < kClampRows.size(); ++h) {
        const double p = plan.p()[h], a = plan.a()[h];
        zero_at_0 = zero_at_0 && bias[h][0] == 0;
        rows[h]["cells"].push_back({{"kernel", name_of(k)}, {"regime", name_of(r)}, {"p", p}, {"a", a},
                                    {"p_clamped", clamped(r, kClampRows[h].first, p)},
                                    {"a_clamped", clamped(r, kClampRows[h].second, a)}});
      }
    }
  return {{"rows", rows}, {"bias_zero_at_0", zero_at_0}};
}

}  // namespace kerple_figures

POSENC_FIGURES(kerple) {
  figures["log_bias"] = kerple_figures::curves(posenc::KerpleKernel::log, kerple_figures::kLogHeads);
  figures["power_bias"] = kerple_figures::curves(posenc::KerpleKernel::power, kerple_figures::kPowerHeads);
  figures["megatron_deviation"] = kerple_figures::megatron_deviation();
  figures["clamp"] = kerple_figures::clamp_table();
}
