#include "support/bias_measure.hpp"

#include <cmath>
#include <limits>
#include <set>

#include "posenc/reference/mp.hpp"

namespace posenc::test {

std::string geometry_label(const BiasGeometry& g) {
  std::string m;
  for (auto v : g.key_mask) m += static_cast<char>('0' + v);
  return "Lq=" + std::to_string(g.query_length) + " Lk=" + std::to_string(g.key_length) +
         " mask=" + std::string(to_string(g.mask)) + (m.empty() ? "" : " key_mask=" + m);
}

bool masked(const BiasGeometry& g, std::size_t i, std::size_t j) {
  if (g.mask != BiasMask::causal) return false;
  const std::size_t qi = g.key_length - g.query_length + i;
  return j > qi || (!g.key_mask.empty() && g.key_mask[j] == 0);
}

std::vector<std::size_t> sample_indices(std::size_t size, std::size_t n, std::vector<std::size_t> must) {
  std::set<std::size_t> out;
  if (size == 0) return {};
  if (size <= n) {
    for (std::size_t i = 0; i < size; ++i) out.insert(i);
  } else {
    out.insert(0);
    out.insert(size - 1);
    for (std::size_t m : must)
      if (m < size) out.insert(m);
    for (std::size_t i = 1; out.size() < n && i + 1 < n; ++i) out.insert(i * (size - 1) / (n - 1));
  }
  return {out.begin(), out.end()};
}

void masked_entry(const Sink& sink, const BudgetRow& identity_row, double y, const Describe& what) {
  const double v = y == -std::numeric_limits<double>::infinity() ? 0.0 : (y == 0 ? 1.0 : y);
  emit(sink, identity_row, v, reference::make_real(0.0, 53),
       [&] { return what() + " (masked: must be -inf, is " + format_real(y) + ")"; });
}

double fused_scores_error_scale(DType t, std::size_t d, double abs_scale, double sum_abs_qk, double abs_bias) {
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double n = static_cast<double>(d) + 2;
  const double gamma = n * u / (1 - n * u);
  return (gamma + u) * (abs_scale * (1 + u) * sum_abs_qk + abs_bias) * (1 + 1e-12) + std::ldexp(1.0, -1000);
}

void measure_fused_scores(const Sink& sink, const BudgetRow& row32, const BudgetRow& row64, const BudgetRow& identity,
                          std::size_t H, const BiasGeometry& g, std::size_t d, std::span<const double> q,
                          std::span<const double> k, double scale, const FusedScoresRun& run, const ExactDot& dot,
                          const std::function<std::string()>& label, std::size_t max_rows, std::size_t max_cols) {
  const std::size_t Lq = g.query_length, Lk = g.key_length;
  const reference::PrecisionGuard guard(320);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i : sample_indices(Lq, max_rows ? max_rows : Lq, {255, 256, 511, 512}))  // causal gemm seams
      for (std::size_t j : [&] {
             const std::size_t qi = Lk - Lq + i;
             return sample_indices(Lk, max_cols ? max_cols : Lk, {qi, qi + 1, qi > 0 ? qi - 1 : 0});
           }()) {
        const std::size_t at = (h * Lq + i) * Lk + j;
        auto what = [&] {
          return label() + " " + geometry_label(g) + " d=" + std::to_string(d) + " scale=" + format_real(scale) +
                 " h=" + std::to_string(h) + " i=" + std::to_string(i) + " j=" + std::to_string(j);
        };
        if (masked(g, i, j)) {
          masked_entry(sink, identity, run.s32[at], what);
          masked_entry(sink, identity, run.s64[at], what);
          continue;
        }
        const auto qh = q.subspan((h * Lq + i) * d, d), kh = k.subspan((h * Lk + j) * d, d);
        double sum_abs = 0;
        for (std::size_t c = 0; c < d; ++c) sum_abs += std::fabs(qh[c] * kh[c]);
        sum_abs *= 1 + 1e-15 * static_cast<double>(d);
        const Real exact_dot = dot(h, i, j, qh, kh);
        const Real r32 = Real(exact_dot + reference::make_real(static_cast<double>(run.b32[at]), 53));
        const Real r64 = Real(exact_dot + reference::make_real(run.b64[at], 53));
        emit(sink, row32, run.s32[at], r32, what,
             fused_scores_error_scale(DType::f32, d, std::fabs(scale), sum_abs, std::fabs(run.b32[at])));
        emit(sink, row64, run.s64[at], r64, what,
             fused_scores_error_scale(DType::f64, d, std::fabs(scale), sum_abs, std::fabs(run.b64[at])));
      }
}

}  // namespace posenc::test
