#include "schemes/alibi/measure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "posenc/reference/alibi.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::alibi {
namespace {

namespace rf = posenc::reference;
using R = AlibiRow;

bool emulated(const AlibiSpec& s) { return s.regime != AlibiRegime::exact; }

void masked_entry(const Sink& sink, double y, const Describe& what) {
  test::masked_entry(sink, budget(R::bias_identity), y, what);
}

}  // namespace

std::string spec_label(const AlibiSpec& s) { return "spec=" + to_json(s).dump(); }

void measure_slopes(const AlibiSpec& s, const Sink& sink) {
  const rf::AlibiOracle o(s);
  const AlibiPlan plan(s);
  const auto f = plan.slopes();
  for (std::size_t h = 0; h < f.size(); ++h) {
    auto what = [&] { return spec_label(s) + " h=" + std::to_string(h); };
    emit(sink, emulated(s) ? R::slope_emulated : R::slope_exact_f64, f[h], o.slope(h), what);
  }
}

void measure_bias(const AlibiSpec& s, const BiasGeometry& g, const Sink& sink, std::size_t max_heads,
                  std::size_t max_rows, std::size_t max_cols) {
  const AlibiPlan plan(s);
  const rf::AlibiOracle o(s);
  AlibiSpec exact_spec = s;
  exact_spec.regime = AlibiRegime::exact;
  const rf::AlibiOracle ex(exact_spec);
  const std::size_t n = alibi_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  std::vector<float> b32(n);
  std::vector<double> b64(n);
  plan.bias(g, std::span<float>(b32));
  plan.bias(g, std::span<double>(b64));
  const auto slopes = plan.slopes();
  for (std::size_t h : sample_indices(s.heads, max_heads)) {
    for (std::size_t i : sample_indices(Lq, max_rows)) {
      const std::size_t qi = Lk - Lq + i;
      std::vector<std::size_t> must{qi, qi + 1};
      if (qi > 0) must.push_back(qi - 1);
      for (std::size_t j : sample_indices(Lk, max_cols, must)) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return spec_label(s) + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) +
                 " j=" + std::to_string(j);
        };
        if (masked(g, i, j)) {
          masked_entry(sink, b32[at], what);
          masked_entry(sink, b64[at], what);
          continue;
        }
        const Real ref = o.bias(h, i, j, Lq, Lk, g.key_mask);
        if (emulated(s)) {
          emit(sink, R::bias_emulated, b32[at], ref, what);
          emit(sink, R::bias_emulated, b64[at], ref, what);
          const auto x = static_cast<double>(rf::alibi_multiplier(s, i, j, Lq, Lk, g.key_mask));
          const Real exact_ref = ex.bias(h, i, j, Lq, Lk, g.key_mask);
          const double m = static_cast<double>(ex.slope(h));
          emit(sink, R::emulated_vs_exact, b32[at], exact_ref, what,
               emulated_vs_exact_scale(x, slopes[h], m, b32[at]));
        } else {
          emit(sink, R::bias_exact_f32, b32[at], ref, what);
          emit(sink, R::bias_exact_f64, b64[at], ref, what);
        }
      }
    }
  }
}

void measure_scores(const AlibiSpec& s, const BiasGeometry& g, std::size_t d, std::span<const double> q,
                    std::span<const double> k, double scale, const Sink& sink, std::size_t max_rows,
                    std::size_t max_cols) {
  const AlibiPlan plan(s);
  const rf::AlibiOracle o(s);
  const std::size_t n = alibi_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  // scale <q, k> exactly: the oracle's score minus its own bias.
  auto dot = [&](std::size_t h, std::size_t i, std::size_t j, std::span<const double> qh, std::span<const double> kh) {
    return Real(o.score(h, i, j, Lq, Lk, qh, kh, scale, g.key_mask) - o.exact_bias(h, i, j, Lq, Lk, g.key_mask));
  };
  measure_plan_scores(plan, n, sink, budget(R::scores_f32), budget(R::scores_f64), budget(R::bias_identity), s.heads, g,
                      d, q, k, scale, dot, [&] { return spec_label(s); }, max_rows, max_cols);
}

}  // namespace posenc::test::alibi
