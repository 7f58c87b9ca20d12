// XLNet's figures (reports/figures/figures.hpp; drawn by schemes/xlnet/report.py):
//   index_bi, index_uni  XlnetPlan::indices of kLq queries after kLk - kLq memory keys, attn_type bi and uni: the row
//                        of the table each entry reads, -1 where it is undefined (uni: j > q_i)
//   score_direction      the f64 scores' middle row against the signed distance delta = q_i - j of a bi call of kL x
//                        kL (no memory), forward and backward (d_model = d_head = kDModel, one head, r the identity,
//                        zero biases, every key zero, no token types, q = R(kT0) in every row), the plot's y range, and
//                        the facts the caption quotes (the peaks, the asymmetry of the forward curve, how far the
//                        backward curve is from the forward one mirrored)
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "figures.hpp"
#include "posenc/xlnet.hpp"

namespace xlnet_figures {

using posenc::figures::Json;
using Spec = posenc::XlnetSpec;
constexpr std::size_t kLq = 4, kLk = 7;  // (a), (b): 3 memory keys
// (c): a bi call of kL = 2 kHalf + 1 queries and keys; the middle row (q_i = kHalf) sees delta = kHalf .. -kHalf.
constexpr std::size_t kDModel = 16, kHalf = 40, kL = 2 * kHalf + 1;
constexpr std::int64_t kT0 = 12;
// (c): "mirrored" holds to within kTol of the largest scale sum_c |q_c R_c| (DESIGN.md §3).
constexpr double kTol = 1e-12;

posenc::XlnetWeights zero_weights(const Spec& s) {
  const std::size_t hd = s.heads * s.d_head;
  return {std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0), std::vector<double>(hd, 0.0),
          std::vector<double>(2 * hd, 0.0), std::vector<double>(s.d_model * hd, 0.0)};
}

Json index_matrix(posenc::XlnetAttnType attn) {
  Spec s;
  s.attn_type = attn;
  std::vector<std::int32_t> idx(kLq * kLk);
  posenc::XlnetPlan(s, zero_weights(s)).indices(posenc::BiasGeometry{kLq, kLk}, idx);
  return {{"query_length", kLq}, {"key_length", kLk}, {"indices", posenc::figures::rows(idx, kLk)}};
}

Spec score_spec(posenc::XlnetDirection direction) {
  Spec s;
  s.d_model = kDModel;
  s.heads = 1;
  s.d_head = kDModel;
  s.direction = direction;
  return s;
}

// The forward table's row of position p (pos_seq[c] = kL - c): R(p), f64.
std::vector<double> forward_row(const std::vector<double>& table, std::int64_t p) {
  const Spec s = score_spec(posenc::XlnetDirection::forward);
  const auto c = static_cast<std::size_t>(static_cast<std::int64_t>(kL) - p);
  if (posenc::xlnet_position(s, c, kL, kL) != p)
    throw std::logic_error("xlnet figures: R(" + std::to_string(p) + ") is not row kL - p of the forward table");
  const auto first = table.begin() + static_cast<std::ptrdiff_t>(c * kDModel);
  return {first, first + static_cast<std::ptrdiff_t>(kDModel)};
}

// The middle row's scores, index delta + kHalf, of q in every row, zero keys, r the identity.
std::vector<double> middle_row(posenc::XlnetDirection direction, const std::vector<double>& q) {
  const Spec s = score_spec(direction);
  posenc::XlnetWeights w = zero_weights(s);
  for (std::size_t a = 0; a < kDModel; ++a) w.r[a * kDModel + a] = 1.0;  // r [d_model][1][d_head]
  std::vector<double> qs, k(kL * kDModel, 0.0), out(kL * kL);
  for (std::size_t i = 0; i < kL; ++i) qs.insert(qs.end(), q.begin(), q.end());
  posenc::XlnetPlan(s, w).scores(qs, k, posenc::BiasGeometry{kL, kL}, {},
                                 1.0 / std::sqrt(static_cast<double>(kDModel)), out);
  std::vector<double> by_delta(kL);  // delta = kHalf - j
  for (std::size_t j = 0; j < kL; ++j) by_delta[kL - 1 - j] = out[kHalf * kL + j];
  return by_delta;
}

// The first delta (ascending) where the curve (index delta + kHalf) is largest.
std::int64_t peak(const std::vector<double>& curve) {
  return (std::max_element(curve.begin(), curve.end()) - curve.begin()) - std::int64_t{kHalf};
}

Json score_direction() {
  std::vector<double> table(2 * kL * kDModel);
  posenc::xlnet_table(score_spec(posenc::XlnetDirection::forward), kL, kL, table);
  const std::vector<double> q = forward_row(table, kT0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kDModel));
  const std::vector<double> fwd = middle_row(posenc::XlnetDirection::forward, q),
                            bwd = middle_row(posenc::XlnetDirection::backward, q);
  double mag = 0.0, asym = 0.0, mirror = 0.0, lo = fwd[0], hi = fwd[0];
  std::vector<std::int64_t> deltas(kL);
  for (std::size_t x = 0; x < kL; ++x) {
    deltas[x] = static_cast<std::int64_t>(x) - std::int64_t{kHalf};
    const std::vector<double> r = forward_row(table, deltas[x]);
    double m = 0.0;
    for (std::size_t c = 0; c < kDModel; ++c) m += std::abs(q[c] * r[c]);
    mag = std::max(mag, scale * m);
    asym = std::max(asym, std::abs(fwd[x] - fwd[kL - 1 - x]));
    mirror = std::max(mirror, std::abs(bwd[x] - fwd[kL - 1 - x]));
    lo = std::min({lo, fwd[x], bwd[x]});
    hi = std::max({hi, fwd[x], bwd[x]});
  }
  const double pad = 0.05 * (hi - lo != 0.0 ? hi - lo : 1.0);
  return {{"d_model", kDModel}, {"half", kHalf}, {"length", kL}, {"t0", kT0},
          {"forward", posenc::figures::points(deltas, fwd)}, {"backward", posenc::figures::points(deltas, bwd)},
          {"yrange", {lo - pad, hi + pad}}, {"peak_forward", peak(fwd)}, {"peak_backward", peak(bwd)},
          {"peak_forward_at_t0", peak(fwd) == kT0}, {"peak_backward_at_minus_t0", peak(bwd) == -kT0},
          {"score_t0", fwd[kHalf + kT0]}, {"score_minus_t0", fwd[kHalf - kT0]}, {"asymmetry", asym},
          {"mirror", mirror}, {"mirror_ok", mirror <= kTol * mag}, {"tolerance", kTol}};
}

}  // namespace xlnet_figures

POSENC_FIGURES(xlnet) {
  figures["index_bi"] = xlnet_figures::index_matrix(posenc::XlnetAttnType::bi);
  figures["index_uni"] = xlnet_figures::index_matrix(posenc::XlnetAttnType::uni);
  figures["score_direction"] = xlnet_figures::score_direction();
}
