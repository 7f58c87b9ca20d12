#include "schemes/kerple/measure.hpp"

#include <cmath>
#include <sstream>
#include <vector>

#include "posenc/reference/kerple.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::kerple {
namespace {

namespace rf = posenc::reference;
using R = KerpleRow;

bool emulated(const KerpleSpec& s) { return s.regime != KerpleRegime::exact; }

KerpleSpec exact_of(KerpleSpec s) {
  s.regime = KerpleRegime::exact;
  return s;
}

// The megatron value against the exact one, with the analysis' scale.
void deviation(const Sink& sink, const KerpleSpec& s, const KerpleWeights& w, std::size_t h, std::int64_t d, float e,
               const Real& exact, const Describe& what) {
  const KerpleSpec es = exact_of(s);
  const double scale = emulated_vs_exact_scale(s.kernel, kerple_effective_p(es, w.p[h]), kerple_effective_a(es, w.a[h]),
                                               kerple_effective_p(s, w.p[h]), kerple_effective_a(s, w.a[h]), d, e);
  emit(sink, R::emulated_vs_exact, static_cast<double>(e), exact, what, scale);
}

}  // namespace

std::string spec_label(const KerpleSpec& s, const KerpleWeights& w) {
  std::ostringstream o;
  o << "spec=" << to_json(s).dump() << " bias_p=[";
  for (std::size_t h = 0; h < w.p.size(); ++h) o << (h ? "," : "") << format_real(w.p[h]);
  o << "] bias_a=[";
  for (std::size_t h = 0; h < w.a.size(); ++h) o << (h ? "," : "") << format_real(w.a[h]);
  o << "]";
  return o.str();
}

void measure_value(const KerpleSpec& s, const KerpleWeights& w, std::int64_t d, const Sink& sink) {
  const KerplePlan plan(s, w);
  const rf::KerpleOracle o(s, w);
  for (std::size_t h = 0; h < s.heads; ++h) {
    auto what = [&] { return spec_label(s, w) + " h=" + std::to_string(h) + " d=" + std::to_string(d); };
    const float y32 = plan.bias_value_f32(h, d);
    const double y64 = plan.bias_value_f64(h, d);
    const Real r = o.bias_at(h, d);
    if (emulated(s)) {
      emit(sink, R::bias_emulated, y32, r, what);
      emit(sink, R::bias_emulated, y64, r, what);
      deviation(sink, s, w, h, d, y32, o.exact_bias_at(h, d), what);
    } else {
      emit(sink, R::bias_exact_f32, y32, r, what);
      emit(sink, R::bias_exact_f64, y64, r, what);
    }
  }
}

void measure_bias(const KerpleSpec& s, const KerpleWeights& w, const BiasGeometry& g, const Sink& sink,
                  std::size_t max_heads, std::size_t max_rows, std::size_t max_cols) {
  const KerplePlan plan(s, w);
  const rf::KerpleOracle o(s, w);
  const std::size_t n = kerple_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  std::vector<float> b32(n);
  std::vector<double> b64(n);
  plan.bias(g, std::span<float>(b32));
  plan.bias(g, std::span<double>(b64));
  const BudgetRow& identity = budget(R::bias_identity);
  for (std::size_t h : sample_indices(s.heads, max_heads)) {
    for (std::size_t i : sample_indices(Lq, max_rows)) {
      const std::size_t qi = Lk - Lq + i;
      std::vector<std::size_t> must{qi, qi + 1};
      if (qi > 0) must.push_back(qi - 1);
      for (std::size_t j : sample_indices(Lk, max_cols, must)) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return spec_label(s, w) + " " + geometry_label(g) + " h=" + std::to_string(h) + " i=" + std::to_string(i) +
                 " j=" + std::to_string(j);
        };
        if (masked(g, i, j)) {
          masked_entry(sink, identity, b32[at], what);
          masked_entry(sink, identity, b64[at], what);
          continue;
        }
        const Real ref = o.bias(h, i, j, Lq, Lk);
        if (emulated(s)) {
          emit(sink, R::bias_emulated, b32[at], ref, what);
          emit(sink, R::bias_emulated, b64[at], ref, what);
          deviation(sink, s, w, h, rf::kerple_distance(i, j, Lq, Lk), b32[at], o.exact_bias(h, i, j, Lq, Lk), what);
        } else {
          emit(sink, R::bias_exact_f32, b32[at], ref, what);
          emit(sink, R::bias_exact_f64, b64[at], ref, what);
        }
      }
    }
  }
}

void measure_scores(const KerpleSpec& s, const KerpleWeights& w, const BiasGeometry& g, std::size_t d,
                    std::span<const double> q, std::span<const double> k, double scale, const Sink& sink,
                    std::size_t max_rows, std::size_t max_cols) {
  const KerplePlan plan(s, w);
  const rf::KerpleOracle o(exact_of(s), w);
  const std::size_t n = kerple_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  // scale <q, k> exactly: the oracle's score minus its own bias.
  auto dot = [&](std::size_t h, std::size_t i, std::size_t j, std::span<const double> qh, std::span<const double> kh) {
    return Real(o.score(h, i, j, Lq, Lk, qh, kh, scale) - o.exact_bias(h, i, j, Lq, Lk));
  };
  measure_plan_scores(plan, n, sink, budget(R::scores_f32), budget(R::scores_f64), budget(R::bias_identity), s.heads, g,
                      d, q, k, scale, dot, [&] { return spec_label(s, w); }, max_rows, max_cols);
}

}  // namespace posenc::test::kerple
