// TENER's figures (reports/figures/figures.hpp; drawn by schemes/tener/report.py):
//   index_query, index_key  TenerPlan::indices of a call of kL tokens: the row of the table the query term (_shift,
//                           L + j - i) and the key term (_transpose_shift, L + i - j) of each entry reads
//   direction               TENER's f64 scores' middle row against the signed offset j - i of a call of kScoreL
//                           tokens (d_head kDHead, one head, zero biases, every key zero, unscaled) for two queries
//                           (each with its q): R(kT0), and kDHead float32 N(0, 1) numbers of CPython's
//                           random.Random(kSeed).gauss; beside them the absolute encoding's PE(p).PE(p + k) against k
//                           (the marian table of positions 0 .. kScoreL - 1, p = kHalf, each dot product summed exactly
//                           and rounded once, as math.fsum); the plot's y range and the facts the caption quotes (each
//                           curve's largest |f(k) - f(-k)| and where)

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "figures.hpp"
#include "python_compat.hpp"
#include "posenc/sinusoidal.hpp"
#include "posenc/tener.hpp"

namespace tener_figures {

using posenc::figures::Json;
using Spec = posenc::TenerSpec;
constexpr std::size_t kL = 5;  // (a), (b)
// (c): the middle row (i = kHalf) of a call of kScoreL = 2 kHalf + 1 tokens sees j - i = -kHalf .. kHalf.
constexpr std::size_t kDHead = 16, kHalf = 40, kScoreL = 2 * kHalf + 1, kT0 = 6;
constexpr std::uint32_t kSeed = 20260313;
// (c): the absolute curve is symmetric when max |f(k) - f(-k)| is within kTol of its largest magnitude d/2; a TENER
// curve is direction-aware when that maximum exceeds kAsymMin (its scores here are O(1)).
constexpr double kTol = 1e-12, kAsymMin = 1e-3;

Spec spec() {
  Spec s;
  s.heads = 1;
  s.d_head = kDHead;
  return s;
}

posenc::TenerWeights zero_weights(const Spec& s) {
  return {std::vector<double>(s.heads * s.d_head, 0.0), std::vector<double>(s.heads * s.d_head, 0.0)};
}

Json index_matrix(bool key) {
  const Spec s;
  std::vector<std::int32_t> idx(kL * kL);
  posenc::TenerPlan(s, zero_weights(s)).indices(posenc::BiasGeometry{kL, kL}, idx, key);
  return {{"query_length", kL}, {"key_length", kL}, {"indices", posenc::figures::rows(idx, kL)}};
}

// sum_c a_c b_c with every product rounded to double and their sum exact, rounded once (math.fsum's value).
double exact_dot(const double* a, const double* b, std::size_t n) {
  std::vector<double> products(n);
  for (std::size_t c = 0; c < n; ++c) products[c] = a[c] * b[c];
  return posenc::figures::fsum(products);
}

// The middle row's scores, index j - i + kHalf, of q in every row and zero keys, unscaled.
std::vector<double> middle_row(const std::vector<double>& q) {
  const Spec s = spec();
  std::vector<double> qs, k(kScoreL * kDHead, 0.0), out(kScoreL * kScoreL);
  for (std::size_t i = 0; i < kScoreL; ++i) qs.insert(qs.end(), q.begin(), q.end());
  posenc::TenerPlan(s, zero_weights(s)).scores(qs, k, posenc::BiasGeometry{kScoreL, kScoreL}, 1.0, out);
  return {out.begin() + kHalf * kScoreL, out.begin() + (kHalf + 1) * kScoreL};
}

// {"max": max |f(k) - f(-k)| over k > 0, "at": the first k where it is largest} of a curve indexed k + kHalf.
Json asymmetry(const std::vector<double>& f) {
  double m = 0.0;
  std::size_t at = 0;
  for (std::size_t k = 1; k <= kHalf; ++k)
    if (std::abs(f[kHalf + k] - f[kHalf - k]) > m) m = std::abs(f[kHalf + k] - f[kHalf - k]), at = k;
  return {{"max", m}, {"at", at}};
}

// PE(p).PE(p + k) for k = -kHalf .. kHalf (index k + kHalf), p = kHalf: the marian table of positions 0 .. kScoreL - 1.
std::vector<double> absolute_curve() {
  std::vector<double> t(kScoreL * kDHead), out(kScoreL);
  posenc::sinusoidal_table(posenc::marian_spec(kDHead), 0, kScoreL, t);
  for (std::size_t k = 0; k < kScoreL; ++k) out[k] = exact_dot(&t[kHalf * kDHead], &t[k * kDHead], kDHead);
  return out;
}

Json curve(const std::vector<double>& q, const std::vector<double>& f, const std::vector<std::int64_t>& offsets) {
  return {{"q", q}, {"points", posenc::figures::points(offsets, f)}, {"asymmetry", asymmetry(f)}};
}

Json direction() {
  std::vector<double> table(2 * kScoreL * kDHead);  // row c: t = c - kScoreL
  posenc::tener_table(spec(), kScoreL, table);
  const std::vector<double> qr(table.begin() + (kScoreL + kT0) * kDHead, table.begin() + (kScoreL + kT0 + 1) * kDHead);
  posenc::figures::CpythonRandom rng(kSeed);
  std::vector<double> qn(kDHead);
  for (double& v : qn) v = static_cast<float>(rng.gauss(0.0, 1.0));
  const std::vector<double> fr = middle_row(qr), fn = middle_row(qn), fa = absolute_curve();
  std::vector<std::int64_t> offsets(kScoreL);
  for (std::size_t x = 0; x < kScoreL; ++x) offsets[x] = static_cast<std::int64_t>(x) - std::int64_t{kHalf};
  double lo = fr[0], hi = fr[0];
  for (const auto* f : {&fr, &fn, &fa})
    for (double v : *f) lo = std::min(lo, v), hi = std::max(hi, v);
  const double pad = 0.05 * (hi - lo != 0.0 ? hi - lo : 1.0);
  const Json ar = asymmetry(fr), an = asymmetry(fn), aa = asymmetry(fa);
  const double abs_asym = aa["max"];
  return {{"d_head", kDHead}, {"half", kHalf}, {"length", kScoreL}, {"t0", kT0}, {"seed", kSeed},
          {"tener", Json::array({curve(qr, fr, offsets), curve(qn, fn, offsets)})},
          {"absolute", posenc::figures::points(offsets, fa)}, {"absolute_asymmetry", abs_asym},
          {"absolute_symmetric", abs_asym <= kTol * (kDHead / 2)}, {"tolerance", kTol}, {"asym_min", kAsymMin},
          {"direction_aware", ar["max"].get<double>() > kAsymMin && an["max"].get<double>() > kAsymMin},
          {"yrange", {lo - pad, hi + pad}}};
}

}  // namespace tener_figures

POSENC_FIGURES(tener) {
  figures["index_query"] = tener_figures::index_matrix(false);
  figures["index_key"] = tener_figures::index_matrix(true);
  figures["direction"] = tener_figures::direction();
}
