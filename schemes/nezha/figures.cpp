// NEZHA's figures (reports/figures/figures.hpp; drawn by schemes/nezha/report.py), all of the
// nezha-cn-base preset's shape (K = 64, depth 64), its tables from nezha_table (what `posenc table nezha` writes):
//   table         columns 0, 1, 2t, 2t + 1 (t = depth/8, w_t = 0.1) of the exact f64 table against the row r; rows 0,
//                 K, K +- 1 as the caption quotes them; the table's largest difference from std::sin / std::cos of
//                 r 10000^(-2t/depth) in double, and where
//   score_offset  the relative term q.T[r(u)] / sqrt(depth) of three fixed queries (T[K], (1, ..., 1) / sqrt(depth),
//                 e_0) against u = j - q_i in [-2K, 2K] over the preset's (hf) f64 table, summed in column order; the
//                 y range drawn; the facts the caption quotes (flat beyond +-K, the largest difference from the
//                 closed form sum_t cos(clip(u) w_t) / sqrt(depth), the symmetry, the peak, three values)
//   hf_vs_exact   per row r, the largest |T_hf - T_exact| over the columns and NEZHA-TABLE-2's envelope (only the rows
//                 where it is > 0: a log axis); the largest difference and where; the identical rows; whether every
//                 entry of HF's table is a float32 number
//   index         NezhaPlan::indices at K = 3 (8 x 8, and the last 3 queries of 8 keys), whether the second is the
//                 last rows of the first, and the table rows the preset's 160 x 160 matrix reads
//   presets       the preset (hf) and its exact regime: K, depth, regime, rows, T[K][0..1], the largest difference
//                 from sin / cos in double; whether the preset's f32 table holds the f64 one's numbers
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/describe.hpp"
#include "posenc/nezha.hpp"

namespace nezha_figures {

using posenc::NezhaRegime;
using posenc::NezhaSpec;
using posenc::figures::Json;
constexpr const char* kPreset = "nezha-cn-base";
// index: the small matrices (K = kSmallK, kSmallL x kSmallL and the last kAlignLq queries) and the preset's square
// length (> 2K + 1, so that every table row is read).
constexpr std::size_t kSmallK = 3, kSmallL = 8, kAlignLq = 3, kPresetL = 160;

NezhaSpec preset(std::optional<NezhaRegime> regime = std::nullopt) {
  NezhaSpec s = posenc::find_preset<NezhaSpec>(kPreset).spec;
  if (regime) s.regime = *regime;
  return s;
}

struct Table {  // [rows][depth], row-major
  std::size_t rows = 0, depth = 0;
  std::vector<double> v;
  double at(std::size_t r, std::size_t c) const { return v[r * depth + c]; }
};

Table table_of(const NezhaSpec& s) {
  Table t{posenc::nezha_table_rows(s), s.depth, {}};
  t.v.resize(t.rows * t.depth);
  posenc::nezha_table(s, std::span<double>(t.v));
  return t;
}

// w_t = 10000^(-2t/depth) in double.
double frequency(std::size_t t, std::size_t depth) {
  return std::pow(10000.0, -2.0 * static_cast<double>(t) / static_cast<double>(depth));
}

// HF's float32 frequency: RN32(exp(RN32(RN32(2t) RN32(-ln 10000 / depth)))), exp in double.
double hf_frequency(std::size_t t, std::size_t depth) {
  const auto c = static_cast<float>(-std::log(10000.0) / static_cast<double>(depth));
  const auto x = static_cast<float>(static_cast<double>(static_cast<float>(2 * t)) * static_cast<double>(c));
  return static_cast<float>(std::exp(static_cast<double>(x)));
}

// sin(r w_t) at c = 2t, cos(r w_t) at c = 2t + 1, in double (libm; not correctly rounded).
double libm_entry(std::size_t r, std::size_t c, std::size_t depth) {
  const double a = static_cast<double>(r) * frequency(c / 2, depth);
  return c % 2 == 0 ? std::sin(a) : std::cos(a);
}

struct Worst {  // the first largest difference, and where
  double value = 0;
  std::size_t r = 0, c = 0;
};

Worst libm_deviation(const Table& t) {
  Worst w;
  for (std::size_t r = 0; r < t.rows; ++r)
    for (std::size_t c = 0; c < t.depth; ++c)
      if (const double e = std::fabs(t.at(r, c) - libm_entry(r, c, t.depth)); e > w.value) w = {e, r, c};
  return w;
}

bool is_zero_one_row(const Table& t, std::size_t r) {  // (0, 1, 0, 1, ...)
  for (std::size_t c = 0; c < t.depth; ++c)
    if (t.at(r, c) != (c % 2 == 0 ? 0.0 : 1.0)) return false;
  return true;
}

Json table_curves() {
  const NezhaSpec s = preset(NezhaRegime::exact);
  const Table t = table_of(s);
  const std::size_t k = s.max_relative_position, d = s.depth;
  const std::size_t tl = std::min(std::max<std::size_t>(d / 8, 1), d / 2 - 1);  // the low-frequency pair
  Json cols = Json::array();
  for (const std::size_t c : {std::size_t{0}, std::size_t{1}, 2 * tl, 2 * tl + 1}) {
    Json pts = Json::array();
    for (std::size_t r = 0; r < t.rows; ++r) pts.push_back({r, t.at(r, c)});
    cols.push_back({{"c", c}, {"points", pts}});
  }
  const Worst dev = libm_deviation(t);
  const double plus = t.at(k + 1, 0), minus = t.at(k - 1, 0);
  return {{"preset", kPreset},
          {"k", k},
          {"depth", d},
          {"low_pair", tl},
          {"low_frequency", frequency(tl, d)},
          {"columns", cols},
          {"row_0_is_0_1", is_zero_one_row(t, 0)},
          {"row_k_is_0_1", is_zero_one_row(t, k)},
          {"row_k", Json::array({t.at(k, 0), t.at(k, 1)})},
          {"plus_1", plus},
          {"minus_1", minus},
          {"sin_1", std::sin(1.0)},
          {"antisymmetric", plus == -minus},
          {"libm_difference", {{"max", dev.value}, {"r", dev.r}, {"c", dev.c}}}};
}

// q . T[r] / sqrt(depth), summed in column order.
double relative_term(const Table& t, const std::vector<double>& q, std::size_t r) {
  double sum = 0;
  for (std::size_t c = 0; c < t.depth; ++c) sum += q[c] * t.at(r, c);
  return sum / std::sqrt(static_cast<double>(t.depth));
}

// T[K] . T[r(u)] / sqrt(depth) in the reals: sum_t cos(clip(u) w_t) / sqrt(depth), evaluated in double.
double cosine_sum(std::int64_t clipped, std::size_t depth) {
  double sum = 0;
  for (std::size_t t = 0; t < depth / 2; ++t) sum += std::cos(static_cast<double>(clipped) * frequency(t, depth));
  return sum / std::sqrt(static_cast<double>(depth));
}

// curve[u + 2K] is constant for u >= K and for u <= -K.
bool flat_beyond(const std::vector<double>& curve, std::int64_t k) {
  for (std::int64_t u = -2 * k; u <= 2 * k; ++u) {
    const double v = curve[static_cast<std::size_t>(u + 2 * k)];
    if ((u >= k && v != curve[static_cast<std::size_t>(3 * k)]) || (u <= -k && v != curve[static_cast<std::size_t>(k)]))
      return false;
  }
  return true;
}

Json points_of(const std::vector<double>& curve, std::int64_t k) {  // [[u, curve[u + 2K]], ...]
  Json pts = Json::array();
  for (std::int64_t u = -2 * k; u <= 2 * k; ++u) pts.push_back({u, curve[static_cast<std::size_t>(u + 2 * k)]});
  return pts;
}

// What the caption quotes of the curves: tk (q = T[K]), ones, e0, each over u = -2K .. 2K.
Json score_facts(const posenc::NezhaPlan& plan, const std::vector<std::vector<double>>& curves, std::int64_t k) {
  const std::size_t d = plan.spec().depth;
  const auto at = [k](const std::vector<double>& c, std::int64_t u) { return c[static_cast<std::size_t>(u + 2 * k)]; };
  const std::vector<double>& tk = curves[0];
  double closed = 0, symmetric = 0, lo = tk[0], hi = tk[0];
  std::int64_t peak = -2 * k;
  for (std::int64_t u = -2 * k; u <= 2 * k; ++u) {
    closed = std::max(closed, std::fabs(at(tk, u) - cosine_sum(plan.index(u) - k, d)));
    symmetric = std::max(symmetric, std::fabs(at(tk, u) - at(tk, -u)));
    if (at(tk, u) > at(tk, peak)) peak = u;
  }
  for (const auto& c : curves)
    for (const double v : c) lo = std::min(lo, v), hi = std::max(hi, v);
  const double pad = 0.05 * (hi - lo != 0 ? hi - lo : 1);
  bool flat = true;
  for (const auto& c : curves) flat = flat && flat_beyond(c, k);
  return {{"y_range", Json::array({lo - pad, hi + pad})},
          {"flat_beyond_k", flat},
          {"closed_form_difference", closed},
          {"symmetry", symmetric},
          {"peak_u", peak},
          {"peak", at(tk, peak)},
          {"half_sqrt_depth", std::sqrt(static_cast<double>(d)) / 2},
          {"ones_at_minus_1", at(curves[1], -1)},
          {"ones_at_1", at(curves[1], 1)},
          {"e0_at_0", at(curves[2], 0)}};
}

Json score_offset() {
  const NezhaSpec s = preset();
  const posenc::NezhaPlan plan(s);
  const Table t = table_of(s);
  const auto k = static_cast<std::int64_t>(s.max_relative_position);
  const std::size_t d = s.depth;
  std::vector<double> e0(d, 0.0);
  e0[0] = 1.0;
  const auto row_k = t.v.begin() + k * static_cast<std::int64_t>(d);
  const std::vector<std::vector<double>> queries{std::vector<double>(row_k, row_k + static_cast<std::int64_t>(d)),
                                                 std::vector<double>(d, 1 / std::sqrt(static_cast<double>(d))), e0};
  std::vector<std::vector<double>> curves(queries.size());
  for (std::size_t q = 0; q < queries.size(); ++q)
    for (std::int64_t u = -2 * k; u <= 2 * k; ++u)
      curves[q].push_back(relative_term(t, queries[q], static_cast<std::size_t>(plan.index(u))));
  Json fig = score_facts(plan, curves, k);
  fig["preset"] = kPreset;
  fig["k"] = k;
  fig["depth"] = d;
  fig["regime"] = std::string(posenc::to_string(s.regime));
  fig["curves"] = {
      {"row_k", points_of(curves[0], k)}, {"ones", points_of(curves[1], k)}, {"e0", points_of(curves[2], k)}};
  return fig;
}

double ulp32(double x) {  // the spacing of float32 numbers at |x| (2^-149 at 0 and in the subnormal range)
  if (x == 0) return std::ldexp(1.0, -149);
  int e = 0;
  (void)std::frexp(std::fabs(x), &e);
  return std::ldexp(1.0, std::max(e - 24, -149));
}

// NEZHA-TABLE-2's bound on |T_hf[r][c] - T_exact[r][c]|: ulp32(T_hf)/2 + ulp32(a32)/2 + r |w32 - w| + 2^-50 r w,
// plus 2^-52 for the exact table's own rounding to double.
double envelope(std::size_t r, std::size_t c, std::size_t depth, double t_hf) {
  const double w = frequency(c / 2, depth), w32 = hf_frequency(c / 2, depth), rr = static_cast<double>(r);
  const double a32 = static_cast<float>(static_cast<double>(static_cast<float>(rr)) * w32);
  return ulp32(t_hf) / 2 + ulp32(a32) / 2 + rr * std::fabs(w32 - w) + std::ldexp(1.0, -50) * rr * w +
         std::ldexp(1.0, -52);
}

Json hf_vs_exact() {
  const NezhaSpec s = preset(NezhaRegime::hf);
  const Table hf = table_of(s), ex = table_of(preset(NezhaRegime::exact));
  std::vector<double> diff(hf.rows, 0.0), env(hf.rows, 0.0);
  Worst worst;
  Json zero_rows = Json::array(), diff_pts = Json::array(), env_pts = Json::array();
  bool floats = true;
  for (std::size_t r = 0; r < hf.rows; ++r) {
    for (std::size_t c = 0; c < hf.depth; ++c) {
      const double e = std::fabs(hf.at(r, c) - ex.at(r, c));
      diff[r] = std::max(diff[r], e);
      env[r] = std::max(env[r], envelope(r, c, hf.depth, hf.at(r, c)));
      if (e > worst.value) worst = {e, r, c};
      floats = floats && static_cast<double>(static_cast<float>(hf.at(r, c))) == hf.at(r, c);
    }
    if (diff[r] == 0) zero_rows.push_back(r);
    if (diff[r] > 0) diff_pts.push_back({r, diff[r]});
    if (env[r] > 0) env_pts.push_back({r, env[r]});
  }
  return {{"k", s.max_relative_position},
          {"depth", s.depth},
          {"differences", diff_pts},
          {"envelope", env_pts},
          {"largest", {{"difference", worst.value}, {"r", worst.r}, {"c", worst.c},
                       {"hf", hf.at(worst.r, worst.c)}, {"exact", ex.at(worst.r, worst.c)}}},
          {"identical_rows", zero_rows},
          {"float32_entries", floats}};
}

std::vector<std::int32_t> indices(const NezhaSpec& s, std::size_t lq, std::size_t lk) {
  std::vector<std::int32_t> m(lq * lk);
  posenc::NezhaPlan(s).indices(posenc::BiasGeometry{.query_length = lq, .key_length = lk}, std::span<std::int32_t>(m));
  return m;
}

Json index_matrices() {
  NezhaSpec small = preset();
  small.max_relative_position = kSmallK;
  const auto square = indices(small, kSmallL, kSmallL), last = indices(small, kAlignLq, kSmallL);
  const bool last_rows = std::equal(last.begin(), last.end(), square.end() - kAlignLq * kSmallL);
  const NezhaSpec s = preset();
  const auto full = indices(s, kPresetL, kPresetL);
  const std::set<std::int32_t> used(full.begin(), full.end());
  return {{"preset", kPreset},
          {"small_k", kSmallK},
          {"square", posenc::figures::rows(square, kSmallL)},
          {"last", posenc::figures::rows(last, kSmallL)},
          {"last_rows_of_square", last_rows},
          {"preset_k", s.max_relative_position},
          {"preset_length", kPresetL},
          {"rows_read", used.size()},
          {"first_row_read", *used.begin()},
          {"last_row_read", *used.rbegin()},
          {"table_rows", posenc::nezha_table_rows(s)}};
}

Json preset_row(const NezhaSpec& s, const std::string& label) {
  const Table t = table_of(s);
  const std::size_t k = s.max_relative_position;
  return {{"label", label},
          {"k", k},
          {"depth", s.depth},
          {"regime", std::string(posenc::to_string(s.regime))},
          {"table_rows", t.rows},
          {"row_k", Json::array({t.at(k, 0), t.at(k, 1)})},
          {"libm_difference", libm_deviation(t).value}};
}

Json presets() {
  const NezhaSpec s = preset();
  const Table t64 = table_of(s);
  std::vector<float> t32(t64.v.size());
  posenc::nezha_table(s, std::span<float>(t32));
  bool same = true;
  for (std::size_t i = 0; i < t32.size(); ++i) same = same && static_cast<double>(t32[i]) == t64.v[i];
  return {{"preset", kPreset},
          {"rows", Json::array({preset_row(s, kPreset),
                                preset_row(preset(NezhaRegime::exact), std::string(kPreset) + " --regime exact")})},
          {"f32_holds_f64", same}};
}

}  // namespace nezha_figures

POSENC_FIGURES(nezha) {
  figures["table"] = nezha_figures::table_curves();
  figures["score_offset"] = nezha_figures::score_offset();
  figures["hf_vs_exact"] = nezha_figures::hf_vs_exact();
  figures["index"] = nezha_figures::index_matrices();
  figures["presets"] = nezha_figures::presets();
}
