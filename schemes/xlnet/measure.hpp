// schemes/xlnet/measure.hpp — what the XLNet claims and the accuracy sweep both hold a score entry to: the
// oracle's view of entry (h, i, j) of a call (visible, the exact score, and the magnitudes of its terms that the
// bound of verify/relative_budget.hpp is formed from), written once. Header-only test support.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/xlnet.hpp"
#include "posenc/xlnet.hpp"
#include "support/relative_measure.hpp"

namespace posenc::test::xlnet_measure {

namespace rf = posenc::reference;
using relative::Call;

inline relative::EntryFn entry_fn(const rf::XlnetOracle& o, const XlnetWeights& w, const Call& c,
                                  const std::vector<double>& table, const std::vector<double>& q,
                                  const std::vector<double>& k, std::optional<double> scale) {
  const XlnetSpec s = o.spec();
  return [&o, &w, &c, &table, &q, &k, scale, s](std::size_t h, std::size_t i, std::size_t j) {
    relative::Entry e;
    e.visible = o.visible(c.key_mask, i, j, c.Lq, c.Lk);
    if (!e.visible) return e;
    const std::size_t d = s.d_head, dm = s.d_model, H = s.heads;
    const auto qi = std::span<const double>(q).subspan((h * c.Lq + i) * d, d);
    const auto kj = std::span<const double>(k).subspan((h * c.Lk + j) * d, d);
    e.exact = o.score(qi, kj, h, i, j, c.Lq, c.Lk, c.types, scale);
    const auto u = std::span<const double>(w.r_w_bias).subspan(h * d, d);
    const std::size_t row = c.Lq - i + j;
    e.magnitudes.content = relative::sum_abs(qi, u, kj);
    for (std::size_t x = 0; x < d; ++x) {
      double A = 0, B = 0;
      for (std::size_t m = 0; m < dm; ++m) {
        const double wm = std::fabs(w.r[(m * H + h) * d + x]);
        A += wm * std::fabs(table[row * dm + m]);
        B += wm;
      }
      const double qv = std::fabs(qi[x]) + std::fabs(w.r_r_bias[h * d + x]);
      e.magnitudes.position += qv * A;
      e.magnitudes.weights += qv * B;
    }
    if (!c.types.empty()) {
      const std::size_t M = c.Lk - c.Lq;
      const std::int64_t tj = j < M ? 0 : c.types[j - M];
      const std::size_t seg = c.types[i] != tj ? 1 : 0;
      e.magnitudes.segment = relative::sum_abs(qi, std::span<const double>(w.r_s_bias).subspan(h * d, d),
                                               std::span<const double>(w.seg_embed).subspan((seg * H + h) * d, d));
    }
    return e;
  };
}

}  // namespace posenc::test::xlnet_measure
