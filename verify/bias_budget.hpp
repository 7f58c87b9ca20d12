// verify/bias_budget.hpp — budget rows every additive-bias scheme (ALiBi, KERPLE, FIRE, ...) has in the
// same form: the fused scores (bias rows, then a beta = 1 gemm). The scheme's budget.cpp registers them under its
// own keys.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "verify/budget.hpp"

namespace posenc::verify {

// The row of <Plan>::scores in f32 or f64 (metric: the ratio to the gemm's a-priori bound B of
// support/bias_measure.hpp's fused_scores_error_scale). bias_note: what the bias b~ is taken as.
inline BudgetRow fused_scores_row(DType t, const std::string& plan, const std::string& regimes, const std::string& domain,
                                  const std::string& bias_note) {
  const bool f32 = t == DType::f32;
  return {.quantity = "scale <q, k> + bias from " + plan + "::scores (bias rows, then cblas " +
                      (f32 ? "sgemm" : "dgemm") + " with beta = 1)",
          .dtype = f32 ? "f32" : "f64",
          .regime = regimes,
          .domain = domain + ", head_dim <= 256",
          .metric = {MetricKind::ratio, t, 0.0, "|score - exact| / B"},
          .bound = 1.0,
          .why = "the exact score is scale <q, k> + b~, " + bias_note +
                 ". The gemm forms alpha sum q_c k_c + b~ with alpha = RN(scale) (|alpha - scale| <= u |scale|) in "
                 "any order, blocked, with or without FMA: a sum of d + 1 terms with d products and the alpha "
                 "multiply, |error| <= gamma_{d+2} (|alpha| sum |q_c k_c| + |b~|) + u |b~|, gamma_n = n u / (1 - n "
                 "u), u the type's unit roundoff; B = (gamma_{d+2} + u)(|scale| (1 + u) sum |q_c k_c| + |b~|) (1 + "
                 "1e-12) (support/bias_measure.hpp). Masked entries are -inf exactly."};
}

// B of scores formed as a gathered relative part plus a beta = 1 gemm (Shaw's scores with key_query, DeBERTa's c2p +
// p2c): p = gemm(alpha <q, a>) and r = gemm(alpha <k, a'>) over the table rows (each a sum of d products times alpha
// = RN(scale): |p~ - alpha sum q a| <= gamma_{d+1} |alpha| sum |q a|, any order, blocked, FMA or not), b~ = RN(p~ +
// r~) (or p~ / r~ alone: no rounding), then s~ = alpha sum q k + b~ by the beta = 1 gemm, |s~ - (alpha sum q k + b~)|
// <= gamma_{d+2} (|alpha| sum |q k| + |b~|) + u |b~|. With |b~| <= (1 + 2 gamma_{d+2}) |scale| rel (1 + u), against
// e = scale (sum q k + relative terms):
//   B = (gamma_{d+2} + u)(1 + u) |scale| qk + (gamma_{d+2} + gamma_{d+1} + 4 u)(1.01) |scale| rel, times (1 + 1e-12),
// qk = sum |q_c k_c|, rel = the relative terms' sum of |products| (u the type's unit roundoff, gamma_n = n u / (1 -
// n u)).
inline double gathered_scores_bound(DType t, std::size_t d, double abs_scale, double qk, double rel) {
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53), n = static_cast<double>(d);
  auto gamma = [u](double m) { return m * u / (1 - m * u); };
  return ((gamma(n + 2) + u) * (1 + u) * abs_scale * qk + (gamma(n + 2) + gamma(n + 1) + 4 * u) * 1.01 * abs_scale * rel) *
             (1 + 1e-12) +
         std::ldexp(1.0, -1000);
}

}  // namespace posenc::verify
