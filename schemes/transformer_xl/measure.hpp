// schemes/transformer_xl/measure.hpp — what the Transformer-XL claims and the accuracy sweep both hold a score entry
// to: the oracle's view of entry (h, i, j) of a call (visible, the exact score, and the magnitudes of its terms that
// the bound of verify/relative_budget.hpp is formed from), written once. Header-only test support.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/transformer_xl.hpp"
#include "posenc/transformer_xl.hpp"
#include "support/relative_measure.hpp"

namespace posenc::test::transformer_xl_measure {

namespace rf = posenc::reference;
using relative::Call;

// The oracle's view of entry (h, i, j) of a call: visible, exact score, magnitudes of its terms.
inline relative::EntryFn entry_fn(const rf::TransformerXlOracle& o, const TransformerXlWeights& w, const Call& c,
                                  const std::vector<double>& table, const std::vector<double>& q,
                                  const std::vector<double>& k, std::optional<double> scale) {
  const TransformerXlSpec& s = o.spec();
  return [&o, &w, &c, &table, &q, &k, scale, s](std::size_t h, std::size_t i, std::size_t j) {
    relative::Entry e;
    e.visible = o.visible(c.key_mask, i, j, c.Lq, c.Lk);
    if (!e.visible) return e;
    const std::size_t d = s.d_head, dm = s.d_model;
    const auto qi = std::span<const double>(q).subspan((h * c.Lq + i) * d, d);
    const auto kj = std::span<const double>(k).subspan((h * c.Lk + j) * d, d);
    e.exact = o.score(qi, kj, h, i, j, c.Lq, c.Lk, scale);
    const auto u = std::span<const double>(w.r_w_bias).subspan(h * d, d);
    const auto v = std::span<const double>(w.r_r_bias).subspan(h * d, d);
    const std::size_t row = c.Lk - 1 - (c.Lk - c.Lq + i - j);
    e.magnitudes.content = relative::sum_abs(qi, u, kj);
    for (std::size_t x = 0; x < d; ++x) {
      double A = 0, B = 0;
      for (std::size_t m = 0; m < dm; ++m) {
        const double wm = std::fabs(w.r_net[(h * d + x) * dm + m]);
        A += wm * std::fabs(table[row * dm + m]);
        B += wm;
      }
      const double qv = std::fabs(qi[x]) + std::fabs(v[x]);
      e.magnitudes.position += qv * A;
      e.magnitudes.weights += qv * B;
    }
    return e;
  };
}

}  // namespace posenc::test::transformer_xl_measure
