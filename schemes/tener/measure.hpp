// schemes/tener/measure.hpp — what the TENER claims and the accuracy sweep both hold a score entry to: the
// oracle's view of entry (h, i, j) of a call (visible, the exact score, and the magnitudes of its terms that the
// bound of verify/relative_budget.hpp is formed from), written once. Header-only test support.
#pragma once

#include <cmath>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "posenc/reference/tener.hpp"
#include "posenc/tener.hpp"
#include "support/relative_measure.hpp"

namespace posenc::test::tener_measure {

namespace rf = posenc::reference;
using relative::Call;

inline relative::EntryFn entry_fn(const rf::TenerOracle& o, const TenerWeights& w, const Call& c,
                                  const std::vector<double>& table, const std::vector<double>& q,
                                  const std::vector<double>& k, std::optional<double> scale) {
  const TenerSpec s = o.spec();
  return [&o, &w, &c, &table, &q, &k, scale, s](std::size_t h, std::size_t i, std::size_t j) {
    relative::Entry e;
    e.visible = o.visible(c.key_mask, i, j, c.Lk);
    if (!e.visible) return e;
    const std::size_t d = s.d_head, L = c.Lk;
    const auto qi = std::span<const double>(q).subspan((h * L + i) * d, d);
    const auto kj = std::span<const double>(k).subspan((h * L + j) * d, d);
    e.exact = o.score(qi, kj, h, i, j, L, scale);
    const auto a = std::span<const double>(w.r_r_bias).subspan(h * d, d);
    const auto b = std::span<const double>(w.r_w_bias).subspan(h * d, d);
    const auto rq = std::span<const double>(table).subspan((L + j - i) * d, d);
    const auto rk = std::span<const double>(table).subspan((L + i - j) * d, d);
    e.magnitudes.content = relative::sum_abs(qi, a, kj);
    e.magnitudes.position = relative::sum_abs(qi, b, rq);
    e.magnitudes.key = relative::sum_abs(kj, {}, rk);
    const std::vector<double> ones(d, 1.0);
    e.magnitudes.weights = relative::sum_abs(qi, b, ones) + relative::sum_abs(kj, {}, ones);
    return e;
  };
}

}  // namespace posenc::test::tener_measure
