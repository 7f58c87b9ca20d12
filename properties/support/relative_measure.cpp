#include "support/relative_measure.hpp"

#include <rapidcheck.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "support/bias_measure.hpp"

namespace posenc::test {

namespace relative {

std::vector<double> random_values(std::size_t n, int scale) {
  // One drawn seed per vector (not one RapidCheck choice per value): a failing case then shrinks in seconds instead
  // of re-running the oracle over thousands of per-value shrink steps; the case still prints its seed to replay.
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  std::uniform_int_distribution<int> pick(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = static_cast<float>(pick(rng) * (1.0 / scale));
  return v;
}

std::string Call::label() const {
  std::string t;
  for (auto v : types) t += static_cast<char>('0' + v);
  return geometry_label(view()) + (types.empty() ? "" : " types=" + t);
}

rc::Gen<Call> call_gen(std::size_t max_q, std::size_t max_m, std::span<const std::size_t> hard_q,
                       std::span<const std::size_t> hard_m, bool types) {
  const std::vector<std::size_t> hq(hard_q.begin(), hard_q.end()), hm(hard_m.begin(), hard_m.end());
  return rc::gen::exec([max_q, max_m, hq, hm, types] {
    Call c;
    c.Lq = *rc::gen::inRange(0, 3) == 0 && !hq.empty() ? *rc::gen::elementOf(hq) : *rc::gen::inRange<std::size_t>(1, max_q + 1);
    c.Lq = std::min(c.Lq, max_q);
    std::size_t M = *rc::gen::inRange(0, 3) == 0 && !hm.empty() ? *rc::gen::elementOf(hm)
                                                                 : *rc::gen::inRange<std::size_t>(0, max_m + 1);
    c.Lk = c.Lq + std::min(M, max_m);
    if (*rc::gen::inRange(0, 4) == 0) {
      c.key_mask.resize(c.Lk);
      for (auto& v : c.key_mask) v = static_cast<std::uint8_t>(*rc::gen::inRange(0, 8) != 0);
    }
    if (types && *rc::gen::arbitrary<bool>()) {
      c.types.resize(c.Lq);
      for (auto& v : c.types) v = *rc::gen::inRange<std::int64_t>(0, 3);
    }
    return c;
  });
}

bool Scores::same_bits(const Scores& o) const {
  return s32.size() == o.s32.size() && s64.size() == o.s64.size() &&
         std::memcmp(s32.data(), o.s32.data(), s32.size() * sizeof(float)) == 0 &&
         std::memcmp(s64.data(), o.s64.data(), s64.size() * sizeof(double)) == 0;
}

double sum_abs(std::span<const double> x, std::span<const double> y, std::span<const double> z) {
  double s = 0;
  for (std::size_t e = 0; e < z.size(); ++e) s += (std::fabs(x[e]) + (y.empty() ? 0.0 : std::fabs(y[e]))) * std::fabs(z[e]);
  return s;
}

void measure_scores(const Sink& sink, const BudgetRow& row32, const BudgetRow& row64, const BudgetRow& masked_row,
                    std::size_t H, std::size_t Lq, std::size_t Lk, const EntryFn& entry, const BoundParams& b,
                    std::span<const float> s32, std::span<const double> s64,
                    const std::function<std::string()>& label, std::size_t max_rows, std::size_t max_cols) {
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i : sample_indices(Lq, max_rows, {255, 256, 511, 512}))
      for (std::size_t j : [&] {
             const std::size_t qi = Lk - Lq + i;
             return sample_indices(Lk, max_cols, {qi, qi + 1, qi > 0 ? qi - 1 : 0, i, i + 1});
           }()) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return label() + " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        };
        const Entry e = entry(h, i, j);
        if (!e.visible) {
          masked_entry(sink, masked_row, s32[at], what);
          masked_entry(sink, masked_row, s64[at], what);
          continue;
        }
        emit(sink, row32, s32[at], e.exact, what,
             relative_scores_bound(DType::f32, b.form, b.d, b.dm, b.terms, b.abs_scale, e.magnitudes, b.rho32));
        emit(sink, row64, s64[at], e.exact, what,
             relative_scores_bound(DType::f64, b.form, b.d, b.dm, b.terms, b.abs_scale, e.magnitudes, b.rho64));
      }
}

}  // namespace relative
}  // namespace posenc::test
