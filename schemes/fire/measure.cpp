#include "schemes/fire/measure.hpp"

#include <cmath>
#include <sstream>
#include <vector>

#include "posenc/reference/fire.hpp"
#include "posenc/spec_json.hpp"

namespace posenc::test::fire {
namespace {

namespace rf = posenc::reference;
using R = FireRow;

bool emulated(const FireSpec& s) { return s.regime != FireRegime::exact; }

FireSpec exact_of(FireSpec s) {
  s.regime = FireRegime::exact;
  s.mlp_sum = FireMlpSum::fma;  // the exact regime has no float32 order
  return s;
}

void list(std::ostringstream& o, const char* name, const std::vector<double>& v) {
  o << " " << name << "=[";
  for (std::size_t k = 0; k < v.size(); ++k) o << (k ? "," : "") << format_real(v[k]);
  o << "]";
}

// One compared entry: (h, q, j) with the plan's f32 and f64 values.
void compare(const Sink& sink, const FireSpec& s, const FireWeights& w, const rf::FireOracle& o,
             const rf::FireOracle& ex, std::size_t h, std::int64_t q, std::int64_t j, float y32, double y64,
             const Describe& what) {
  const Real r = o.bias_at(h, q, j);
  const double x = static_cast<double>(ex.x(q, j));
  if (emulated(s)) {
    const R row = s.mlp_sum == FireMlpSum::unfused ? R::bias_emulated_unfused : R::bias_emulated;
    emit(sink, row, y32, r, what);
    emit(sink, row, y64, r, what);
    emit(sink, R::emulated_vs_exact, y32, ex.bias_at(h, q, j), what, emulated_vs_exact_scale(s, w, h, q, j, x));
  } else {
    emit(sink, R::bias_exact_f32, y32, r, what, exact_f32_scale(s, w, h, x, static_cast<double>(r)));
    emit(sink, R::bias_exact_f64, y64, r, what, exact_f64_scale(s, w, h, x));
  }
}

}  // namespace

std::string spec_label(const FireSpec& s, const FireWeights& w) {
  std::ostringstream o;
  o << "spec=" << to_json(s).dump() << " c=" << format_real(w.c) << " L_multiplier=" << format_real(w.L_multiplier)
    << " init_L=" << format_real(w.init_L);
  list(o, "w1", w.w1);
  list(o, "b1", w.b1);
  list(o, "w2", w.w2);
  list(o, "b2", w.b2);
  return o.str();
}

void measure_value(const FireSpec& s, const FireWeights& w, std::int64_t q, std::int64_t j, const Sink& sink) {
  const FirePlan plan(s, w);
  const rf::FireOracle o(s, w), ex(exact_of(s), w);
  for (std::size_t h = 0; h < s.heads; ++h) {
    auto what = [&] {
      return spec_label(s, w) + " h=" + std::to_string(h) + " q=" + std::to_string(q) + " j=" + std::to_string(j);
    };
    compare(sink, s, w, o, ex, h, q, j, plan.bias_value_f32(h, q, j), plan.bias_value_f64(h, q, j), what);
  }
}

void measure_bias(const FireSpec& s, const FireWeights& w, const BiasGeometry& g, const Sink& sink,
                  std::size_t max_heads, std::size_t max_rows, std::size_t max_cols) {
  const FirePlan plan(s, w);
  const rf::FireOracle o(s, w), ex(exact_of(s), w);
  const std::size_t n = fire_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  std::vector<float> b32(n);
  std::vector<double> b64(n);
  plan.bias(g, std::span<float>(b32));
  plan.bias(g, std::span<double>(b64));
  const BudgetRow& identity = budget(R::bias_identity);
  for (std::size_t h : sample_indices(s.heads, max_heads)) {
    for (std::size_t i : sample_indices(Lq, max_rows)) {
      const std::size_t qi = Lk - Lq + i;
      std::vector<std::size_t> must{qi, qi + 1, 255, 256};  // the diagonal and the MLP's 256-key chunk seam
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
        compare(sink, s, w, o, ex, h, static_cast<std::int64_t>(qi), static_cast<std::int64_t>(j), b32[at], b64[at],
                what);
      }
    }
  }
}

void measure_scores(const FireSpec& s, const FireWeights& w, const BiasGeometry& g, std::size_t d,
                    std::span<const double> q, std::span<const double> k, double scale, const Sink& sink,
                    std::size_t max_rows, std::size_t max_cols) {
  const FirePlan plan(s, w);
  const rf::FireOracle o(exact_of(s), w);
  const std::size_t n = fire_bias_size(s, g), Lq = g.query_length, Lk = g.key_length;
  // scale <q, k> exactly: the oracle's score minus its own bias.
  auto dot = [&](std::size_t h, std::size_t i, std::size_t j, std::span<const double> qh, std::span<const double> kh) {
    return Real(o.score(h, i, j, Lq, Lk, qh, kh, scale) - o.exact_bias(h, i, j, Lq, Lk));
  };
  measure_plan_scores(plan, n, sink, budget(R::scores_f32), budget(R::scores_f64), budget(R::bias_identity), s.heads, g,
                      d, q, k, scale, dot, [&] { return spec_label(s, w); }, max_rows, max_cols);
}

}  // namespace posenc::test::fire
