// verify/relative_budget.hpp — the scores budget the sinusoid-relative attentions (Transformer-XL, XLNet,
// TENER) share: one a-priori bound for the blas and the direct forms of posenc/relative_attention.hpp, from the
// magnitudes of the terms of one entry. Each scheme registers its rows under its own keys with relative_scores_row.
//
// The exact score (what the oracle computes) is e = scale (C + Pq + K + S) with
//   C  = <q + a, k>                         content (a the content bias)
//   Pq = <q + b, P[c]>, P[c]_e = sum_m W_em R[c]_m  (or P = R without a projection: TENER)
//   K  = <k, P[c']>                         TENER's key term
//   S  = <q + s, Seg>                       XLNet's segment term
// R the table of the regime: the real sinusoid (exact) or the float32 numbers (emulated); a, b, s, W the plan's
// weights (doubles); q, k the inputs (numbers of the output type). The fast path in type T (unit roundoff u; weights
// rounded once to T: relative error u; the table R~ within rho of R per entry) forms
//   P~ = gemm(R~ W~^T)          over dm terms: |P~_e - sum_m R_m W_em| <= gamma_{dm+1} A_e + rho (1 + gamma_{dm+1}) B_e,
//                                A_e = sum_m |R_m W_em|, B_e = sum_m |W_em| (any order, FMA or not; the +1: W~'s rounding)
//   each term's dot product      d products of (q + b~) rounded (two roundings on the bias part, one on the sum) times
//                                P~ (or k), summed in any order (d - 1 additions), times alpha = RN(scale) by the gemm
//                                (one rounding, and alpha's own), then added to the other terms in the output buffer
//                                (at most three more roundings: segment, key term, the beta = 1 content gemm): every
//                                product passes through at most d + 8 roundings (blas form), or t d + 8 in the direct
//                                form, whose one running sum holds all t dot products of the entry.
// So, with gamma_n = n u / (1 - n u), n1 = d + 8 (blas) or t d + 8 (direct), n2 = dm + 1 (0 without a projection):
//   |e~ - e| <= |scale| [ gamma_{n1} (Mc + Mp + Mk + Ms) + gamma_{n2} (1 + gamma_{n1}) Mp
//                         + rho (1 + gamma_{n2}) (1 + gamma_{n1}) Mw ]
// where Mc = sum_e |q_e + a_e||k_e| <= sum (|q_e| + |a_e|)|k_e|, Mp = sum_e (|q_e| + |b_e|) A_e, Mk = sum_e |k_e| |P[c']_e|,
// Ms = sum_e (|q_e| + |s_e|) |Seg_e| and Mw = sum_e (|q_e| + |b_e|) B_e (+ sum_e |k_e| B'_e with the key term): the
// magnitudes of the terms, as DESIGN.md §3's S = sum |a_i b_i|. The bound B is that, times (1 + 1e-9) for the
// magnitudes formed in double, plus 2^-1000 (an exact zero score). Underflow cannot occur for the weights and inputs
// the properties draw (grids of 1e-5 in [-1, 1]).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

#include "posenc/relative_attention.hpp"
#include "schemes/sinusoidal/budget.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

// The magnitudes of one entry (header), as doubles.
struct RelativeMagnitudes {
  double content = 0, position = 0, key = 0, segment = 0, weights = 0;
};

// B of the header: d = head size, dm = the projection's input size (0: none), terms = dot products of the entry
// (the direct form's running sum), rho = the table's per-entry error in T.
inline double relative_scores_bound(DType t, RelativeScoresForm form, std::size_t d, std::size_t dm, std::size_t terms,
                                    double abs_scale, const RelativeMagnitudes& m, double rho) {
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  auto gamma = [u](double n) { return n * u / (1 - n * u); };
  const double n1 = static_cast<double>(form == RelativeScoresForm::direct ? terms * d : d) + 8;
  const double g1 = gamma(n1), g2 = dm == 0 ? 0.0 : gamma(static_cast<double>(dm) + 1);
  const double b = abs_scale * (g1 * (m.content + m.position + m.key + m.segment) + g2 * (1 + g1) * m.position +
                                rho * (1 + g2) * (1 + g1) * m.weights);
  return b * (1 + 1e-9) + std::ldexp(1.0, -1000);
}

// The table's per-entry error rho in T: exact regime, the sinusoidal kernel's double entry (within
// sinusoidal::table_entry_abs_bound(f64) of the real value) rounded once to T (f32: <= 2^-25 more for |R| < 1);
// emulated, the float32 number or, where its double sin/cos lies within 2^-53 of a float32 midpoint, the neighbour:
// 1 ulp_f32 <= 2^-24 for |R| < 1 (|R| = 1 only where the value is exactly 1, and exact).
inline double relative_table_rho(DType t, bool emulated) {
  if (emulated) return std::ldexp(1.0, -24);
  const double e64 = sinusoidal::table_entry_abs_bound(DType::f64);
  return t == DType::f32 ? std::ldexp(1.0, -25) + e64 + std::ldexp(1.0, -90) : e64 + std::ldexp(1.0, -90);
}

// The row of <plan>::scores in f32 or f64 (metric: the ratio to B above).
inline BudgetRow relative_scores_row(DType t, const std::string& plan, const std::string& domain,
                                     const std::string& terms) {
  const bool f32 = t == DType::f32;
  return {.id = {},
          .scheme = {},
          .quantity = "pre-softmax score " + terms + " from " + plan + "::scores (blas and direct forms)",
          .dtype = f32 ? "f32" : "f64",
          .regime = "exact, emulated",
          .domain = domain,
          .metric = {MetricKind::ratio, t, 0.0, "|score - exact| / B"},
          .bound = 1.0,
          .why = "B = |scale| [gamma_{n1} (Mc + Mp + Mk + Ms) + gamma_{n2} (1 + gamma_{n1}) Mp + rho (1 + gamma_{n2}) "
                 "(1 + gamma_{n1}) Mw] (1 + 1e-9): the positional keys by a gemm over dm terms (gamma_{dm+1}, the "
                 "projection's weights rounded once to the type), every product of the score through at most n1 = d "
                 "+ 8 roundings in the blas form (biases added, the dot product in any order, alpha = RN(scale), the "
                 "terms added in the output buffer and by the beta = 1 content gemm) or t d + 8 in the direct form's "
                 "one running sum of t dot products, and the table within rho per entry (exact: the sinusoidal "
                 "kernel's entry rounded once; emulated: the float32 number or its neighbour, 2^-24); Mc, Mp, Mk, Ms, "
                 "Mw the sums of |products| of the terms (derivation: verify/relative_budget.hpp). Hidden "
                 "and undefined entries are -inf exactly (row *.scores.masked)."};
}

}  // namespace posenc::verify

namespace posenc::verify {

// The table rows every sinusoid-relative scheme has (its table is the sinusoidal plan's rows at the call's
// positions): exact f32, exact f64 (err_S with S = 1 against the oracle's real value) and emulated (ulp_f32 distance
// from the oracle's float32 number, f32 and f64 outputs). `quantity` names the entry, `domain` the positions.
struct RelativeTableRows {
  BudgetRow exact_f32, exact_f64, emulated;
};
inline RelativeTableRows relative_table_rows(const std::string& quantity, const std::string& domain,
                                             const std::string& emulated_steps) {
  const double e64 = sinusoidal::table_entry_abs_bound(DType::f64);
  return {
      {.id = {}, .scheme = {}, .quantity = quantity + " (float)", .dtype = "f32", .regime = "exact", .domain = domain,
       .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
       .bound = (std::ldexp(1.0, -25) + e64 + std::ldexp(1.0, -90)) / std::ldexp(1.0, -23),
       .why = "the sinusoidal kernel's double entry (within 4.51 2^-53 of the real value: sinusoidal.table.exact.f64) "
              "rounded once to float (<= 2^-25 for |y| < 1), plus the oracle's own 2^-(bits+60): (0.25 + 2^-26.8) "
              "ulp_f32(1)."},
      {.id = {}, .scheme = {}, .quantity = quantity + " (double)", .dtype = "f64", .regime = "exact", .domain = domain,
       .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
       .bound = (e64 + std::ldexp(1.0, -90)) / std::ldexp(1.0, -52),
       .why = "the sinusoidal kernel's entry fma(s_a, c_j, RN(c_a s_j)) from anchor and J values each within 2^-53 + "
              "2^-57: 4.51 2^-53 = 2.25 ulp_f64(1) (sinusoidal.table.exact.f64), plus the oracle's 2^-(bits+60)."},
      {.id = {}, .scheme = {}, .quantity = quantity + ", emulated: " + emulated_steps, .dtype = "f32, f64", .regime = "emulated",
       .domain = domain,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "ulp_f32 distance from the oracle's float32 number"},
       .bound = 1.0,
       .why = "the float32 steps (frequency, angle) are replayed with IEEE float arithmetic and the transcendental "
              "steps rounded once from binary128: the oracle's float32 numbers. sin/cos of the float32 angle are "
              "evaluated in double (relative error <= 2^-53, lib/src/core/trig.hpp) and rounded once to float: the "
              "correctly rounded float unless the double lies within 2^-53 relative of a float midpoint, where the "
              "neighbour may come out. So 0 (bit-identical) except in such a case, never more than 1 ulp; a double "
              "output holds the float exactly."},
  };
}

}  // namespace posenc::verify
