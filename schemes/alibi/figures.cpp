// ALiBi's figures (reports/figures/figures.hpp; drawn by schemes/alibi/report.py):
//   slopes           the exact-regime slopes m_h of n = kSlopeHeads heads ([h, m_h] points), c = 2^floor(log2 n),
//                    the jump after head c - 1, whether slopes(n) = slopes(c) + slopes(2c)[0::2][:n-c] bit for bit
//                    (interleave_fails: the n where not); and the table of n = kTableHeads: the exponents
//                    e_h = e_num/e_den, k = b e_h as a reduced fraction, the doubles, whether n = 1 and 3 give
//                    ALIBI-SLOPE-3's examples and whether every integer k gives exactly 2^-k
//   bias_rows        query row kRowQuery of head 0 of kRowHeads heads, kRowL keys, f64, per variant ([j, b]
//                    points), its steps before / after the query, its offset from relative at the visible keys,
//                    and whether the causal mask keeps the visible values and puts -inf after the query
//   softmax          max over rows of max_j |softmax(variant row) - softmax(reference row)| (float64: std::exp and
//                    an exactly rounded sum) for kSoftHeads heads, kSoftL x kSoftL, causal and unmasked, with
//                    "same" (<= kEquivalent); BLOOM's key_counted with kSoftPad left-padding keys vs relative
//   slope_deviation  per emulated regime, max_h |s_regime - s_exact| / s_exact for every n = 1 .. kMaxHeads (the
//                    nonzero ones as [n, dev] points) and the largest (value, n, h); the MPFR oracle's largest
//                    BLOOM deviation (reference::alibi_slope, alibi_emulated_slope) and whether they agree
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "figures.hpp"
#include "python_compat.hpp"
#include "posenc/alibi.hpp"
#include "posenc/reference/alibi.hpp"

namespace alibi_figures {

using posenc::AlibiRegime;
using posenc::AlibiVariant;
using posenc::figures::Json;
namespace rf = posenc::reference;

constexpr std::size_t kSlopeHeads[] = {8, 12, 40, 66, 72, 128};  // (a)
constexpr std::size_t kTableHeads[] = {1, 3, 6, 12};             // (a')
constexpr std::size_t kRowHeads = 8, kRowL = 16, kRowQuery = 10;  // (b): head 0 (m_0 = 1/2), query row 10
constexpr std::size_t kSoftHeads = 8, kSoftL = 64, kSoftPad = 4;  // (c)
constexpr std::size_t kMaxHeads = 160;                            // (d)
constexpr double kEquivalent = 1e-12;       // (c): "same softmax rows" at or below this (rounding is ~1e-16)
constexpr double kConventionsBloom = 4.8e-7;  // CONVENTIONS.md §2.13: "float32 results differ by <= 4.8e-7 relative"
constexpr double kOracleAgreement = 0.005;  // (d): relative difference of the two largest BLOOM deviations
constexpr AlibiVariant kVariants[] = {AlibiVariant::relative, AlibiVariant::key, AlibiVariant::key_shifted,
                                      AlibiVariant::key_counted, AlibiVariant::symmetric};
constexpr AlibiRegime kEmulated[] = {AlibiRegime::ofirpress, AlibiRegime::bloom, AlibiRegime::mpt};
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

posenc::AlibiSpec spec_of(std::size_t n, AlibiVariant v = AlibiVariant::relative,
                          AlibiRegime r = AlibiRegime::exact) {
  posenc::AlibiSpec s;
  s.heads = n;
  s.variant = v;
  s.regime = r;
  return s;
}

std::vector<double> slopes(std::size_t n, AlibiRegime r = AlibiRegime::exact) {
  return posenc::alibi_slopes(spec_of(n, AlibiVariant::relative, r));
}

std::string name_of(AlibiVariant v) { return std::string(posenc::to_string(v)); }
std::string name_of(AlibiRegime r) { return std::string(posenc::to_string(r)); }

// ---- (a) the slopes --------------------------------------------------------------------------------------

Json slope_curve(std::size_t n) {
  const std::size_t c = posenc::alibi_power_of_two_floor(n);
  const std::vector<double> s = slopes(n);
  std::vector<std::size_t> h(n);
  std::iota(h.begin(), h.end(), std::size_t{0});
  Json out = {{"n", n}, {"c", c}, {"points", posenc::figures::points(h, s)}};
  if (n != c) {
    std::vector<double> rule = slopes(c);
    const std::vector<double> twice = slopes(2 * c);
    for (std::size_t j = 0; j < n - c; ++j) rule.push_back(twice[2 * j]);
    out["interleaved"] = rule == s;
    out["jump"] = {{"before_head", c - 1}, {"before", s[c - 1]}, {"after_head", c}, {"after", s[c]}};
  }
  return out;
}

// One row of the table: e_h = e_num/e_den as `posenc freqs alibi` gives it, k = b e_h reduced, the doubles.
Json table_row(std::size_t n, bool& dyadic_exact) {
  const std::size_t c = posenc::alibi_power_of_two_floor(n);
  const std::vector<double> s = slopes(n);
  const double b = spec_of(n).bias_max;
  if (b != std::floor(b)) throw std::runtime_error("alibi slopes table: bias_max is not an integer");
  Json num = Json::array(), den = Json::array(), k = Json::array();
  for (std::size_t h = 0; h < n; ++h) {
    const std::int64_t e_num = static_cast<std::int64_t>(h < c ? h + 1 : 2 * (h - c) + 1);
    const std::int64_t e_den = static_cast<std::int64_t>(h < c ? c : 2 * c);
    const std::int64_t k_num = static_cast<std::int64_t>(b) * e_num, g = std::gcd(k_num, e_den);
    num.push_back(e_num);
    den.push_back(e_den);
    k.push_back({k_num / g, e_den / g});
    if (e_den / g == 1) dyadic_exact = dyadic_exact && s[h] == std::ldexp(1.0, static_cast<int>(-k_num / g));
  }
  return {{"n", n}, {"c", c}, {"e_num", num}, {"e_den", den}, {"k", k}, {"slopes", s}};
}

Json slope_figure() {
  Json curves = Json::array(), table = Json::array();
  for (std::size_t n : kSlopeHeads) curves.push_back(slope_curve(n));
  Json fails = Json::array();
  for (const Json& cv : curves)
    if (cv.contains("interleaved") && !cv["interleaved"].get<bool>()) fails.push_back(cv["n"]);
  bool dyadic_exact = true;
  for (std::size_t n : kTableHeads) table.push_back(table_row(n, dyadic_exact));
  const bool examples = slopes(1) == std::vector<double>{0x1p-8} &&
                        slopes(3) == std::vector<double>{1.0 / 16, 1.0 / 256, 1.0 / 4};
  return {{"curves", curves}, {"table", table}, {"interleave_fails", fails},
          {"examples_hold", examples}, {"dyadic_exact", dyadic_exact}};
}

// ---- (b) one query's bias row ----------------------------------------------------------------------------

std::vector<double> bias_matrix(std::size_t n, AlibiVariant v, std::size_t length, bool causal,
                                const std::vector<std::uint8_t>& key_mask = {}) {
  const posenc::AlibiPlan plan(spec_of(n, v));
  const posenc::BiasGeometry g{.query_length = length, .key_length = length, .key_mask = key_mask,
                               .mask = causal ? posenc::BiasMask::causal : posenc::BiasMask::none};
  std::vector<double> out(posenc::alibi_bias_size(plan.spec(), g));
  plan.bias(g, std::span<double>(out));
  return out;
}

// Row kRowQuery of head 0, with its steps and its offset from the relative row at the visible keys.
Json bias_row(AlibiVariant v, const std::vector<double>& relative, bool& causal_same) {
  const std::vector<double> all = bias_matrix(kRowHeads, v, kRowL, false);
  const std::vector<double> masked = bias_matrix(kRowHeads, v, kRowL, true);
  const std::vector<double> row(all.begin() + kRowQuery * kRowL, all.begin() + (kRowQuery + 1) * kRowL);
  const double* causal = masked.data() + kRowQuery * kRowL;
  std::set<double> before, after;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t j = 0; j + 1 < kRowL; ++j) (j < kRowQuery ? before : after).insert(row[j + 1] - row[j]);
  for (std::size_t j = 0; j <= kRowQuery; ++j) {
    lo = std::min(lo, row[j] - relative[j]);
    hi = std::max(hi, row[j] - relative[j]);
  }
  for (std::size_t j = 0; j < kRowL; ++j)
    causal_same = causal_same && causal[j] == (j <= kRowQuery ? row[j] : kNegInf);
  std::vector<std::size_t> js(kRowL);
  std::iota(js.begin(), js.end(), std::size_t{0});
  return {{"variant", name_of(v)}, {"points", posenc::figures::points(js, row)},
          {"steps_before", std::vector<double>(before.begin(), before.end())},
          {"steps_after", std::vector<double>(after.begin(), after.end())},
          {"offset_constant", lo == hi}, {"offset_min", lo}, {"offset_max", hi}};
}

Json bias_rows() {
  const std::vector<double> rel = bias_matrix(kRowHeads, AlibiVariant::relative, kRowL, false);
  const std::vector<double> relative(rel.begin() + kRowQuery * kRowL, rel.begin() + (kRowQuery + 1) * kRowL);
  Json variants = Json::array();
  bool causal_same = true;
  for (AlibiVariant v : kVariants) variants.push_back(bias_row(v, relative, causal_same));
  return {{"heads", kRowHeads}, {"key_length", kRowL}, {"query", kRowQuery}, {"m0", slopes(kRowHeads)[0]},
          {"variants", variants}, {"causal_same", causal_same}};
}

// ---- (c) softmax equivalence -----------------------------------------------------------------------------

// float64 softmax of a row; -inf entries get 0; empty for a row with no finite entry.
std::vector<double> softmax(const double* row, std::size_t n) {
  double top = kNegInf;
  for (std::size_t j = 0; j < n; ++j) top = std::max(top, row[j]);
  if (top == kNegInf) return {};
  std::vector<double> e(n);
  for (std::size_t j = 0; j < n; ++j) e[j] = row[j] == kNegInf ? 0.0 : std::exp(row[j] - top);
  const double sum = posenc::figures::fsum(e);
  for (double& x : e) x /= sum;
  return e;
}

struct Difference {
  double worst = 0;
  std::size_t compared = 0, skipped = 0;  // rows compared; rows masked entirely in both
};

// Max over the rows of two [heads][L][L] matrices of max_j |softmax(a row) - softmax(b row)|.
Difference softmax_difference(const std::vector<double>& a, const std::vector<double>& b, std::size_t length) {
  Difference d;
  for (std::size_t r = 0; r * length < a.size(); ++r) {
    const std::vector<double> pa = softmax(a.data() + r * length, length), pb = softmax(b.data() + r * length, length);
    if (pa.empty() && pb.empty()) {
      ++d.skipped;
      continue;
    }
    if (pa.empty() || pb.empty()) throw std::runtime_error("alibi softmax: a row is masked in one matrix only");
    ++d.compared;
    for (std::size_t j = 0; j < length; ++j) d.worst = std::max(d.worst, std::fabs(pa[j] - pb[j]));
  }
  return d;
}

Json same(double worst) { return {{"max", worst}, {"same", worst <= kEquivalent}}; }

Json softmax_figure() {
  std::vector<std::vector<double>> causal, free;
  for (AlibiVariant v : kVariants) {
    causal.push_back(bias_matrix(kSoftHeads, v, kSoftL, true));
    free.push_back(bias_matrix(kSoftHeads, v, kSoftL, false));
  }
  Json rows = Json::array();
  double causal_max = 0;
  std::size_t compared = 0;
  for (std::size_t v = 0; v < std::size(kVariants); ++v) {
    const Difference c = softmax_difference(causal[v], causal[0], kSoftL);
    causal_max = std::max(causal_max, c.worst);
    compared = c.compared;
    rows.push_back({{"variant", name_of(kVariants[v])}, {"causal_vs_relative", same(c.worst)},
                    {"unmasked_vs_relative", same(softmax_difference(free[v], free[0], kSoftL).worst)},
                    {"unmasked_vs_key", same(softmax_difference(free[v], free[1], kSoftL).worst)}});
  }
  std::vector<std::uint8_t> mask(kSoftL, 1);
  std::fill(mask.begin(), mask.begin() + kSoftPad, std::uint8_t{0});
  const Difference p = softmax_difference(bias_matrix(kSoftHeads, AlibiVariant::key_counted, kSoftL, true, mask),
                                          bias_matrix(kSoftHeads, AlibiVariant::relative, kSoftL, true, mask), kSoftL);
  Json padded = same(p.worst);
  padded["rows"] = p.compared;
  padded["skipped"] = p.skipped;
  return {{"heads", kSoftHeads}, {"length", kSoftL}, {"pad", kSoftPad}, {"same_at_most", kEquivalent},
          {"rows_compared", compared}, {"variants", rows}, {"padded", padded}, {"causal_max", causal_max},
          {"causal_zero", causal_max == 0}};
}

// ---- (d) emulated vs exact slopes ------------------------------------------------------------------------

struct Worst {
  double value = 0;
  std::size_t n = 0, h = 0;
  Json json() const { return {{"value", value}, {"n", n}, {"h", h}}; }
};

// max_h |s_regime - s_exact| / s_exact per n (the nonzero ones as points) and the largest over n.
Json regime_deviation(AlibiRegime r, const std::vector<std::vector<double>>& exact, Worst& worst) {
  Json pts = Json::array();
  for (std::size_t n = 1; n <= kMaxHeads; ++n) {
    const std::vector<double> got = slopes(n, r);
    std::size_t h = 0;
    std::vector<double> dev(n);
    for (std::size_t i = 0; i < n; ++i) {
      dev[i] = std::fabs(got[i] - exact[n][i]) / exact[n][i];
      if (dev[i] > dev[h]) h = i;
    }
    if (dev[h] > worst.value) worst = {dev[h], n, h};
    if (dev[h] > 0) pts.push_back({n, dev[h]});
  }
  return pts;
}

// The largest relative BLOOM deviation over n <= kMaxHeads, h < n, in MPFR (the oracle's slopes).
Worst oracle_bloom() {
  constexpr unsigned kBits = 256;
  const rf::PrecisionGuard guard(kBits + 64);
  rf::Real best = rf::make_real(0.0, kBits + 64);
  Worst w;
  for (std::size_t n = 1; n <= kMaxHeads; ++n) {
    const posenc::AlibiSpec s = spec_of(n, AlibiVariant::relative, AlibiRegime::bloom);
    for (std::size_t h = 0; h < n; ++h) {
      const rf::Real e = rf::alibi_slope(s, h, kBits);
      const rf::Real d = abs(rf::alibi_emulated_slope(s, h, kBits) - e) / e;
      if (d > best) {
        best = d;
        w = {rf::round_to_double(d), n, h};
      }
    }
  }
  return w;
}

Json slope_deviation() {
  std::vector<std::vector<double>> exact(kMaxHeads + 1);
  for (std::size_t n = 1; n <= kMaxHeads; ++n) exact[n] = slopes(n);
  Json regimes = Json::array();
  std::size_t first = kMaxHeads + 1;
  Worst ofirpress, bloom;
  for (AlibiRegime r : kEmulated) {
    Worst w;
    Json pts = regime_deviation(r, exact, w);
    if (!pts.empty()) first = std::min(first, pts[0][0].get<std::size_t>());
    if (r == AlibiRegime::ofirpress) ofirpress = w;
    if (r == AlibiRegime::bloom) bloom = w;
    regimes.push_back({{"regime", name_of(r)}, {"points", pts}, {"worst", w.json()}});
  }
  const double half_ulp = 0x1p-24;
  const Worst oracle = oracle_bloom();
  const bool agrees = bloom.n == oracle.n && bloom.h == oracle.h &&
                      std::fabs(bloom.value - oracle.value) <= kOracleAgreement * oracle.value;
  return {{"max_heads", kMaxHeads}, {"half_ulp", half_ulp}, {"conventions_bloom", kConventionsBloom},
          {"first_nonzero", first}, {"regimes", regimes}, {"ofirpress_within_half_ulp", ofirpress.value <= half_ulp},
          {"oracle_bloom", oracle.json()}, {"bloom_agrees_with_oracle", agrees}};
}

}  // namespace alibi_figures

POSENC_FIGURES(alibi) {
  figures["slopes"] = alibi_figures::slope_figure();
  figures["bias_rows"] = alibi_figures::bias_rows();
  figures["softmax"] = alibi_figures::softmax_figure();
  figures["slope_deviation"] = alibi_figures::slope_deviation();
}
