// The Shaw / BERT relative_key rows of THE budget table (verify/budget.hpp). Indices are integers
// (exact); scores and outputs are sums of products and exponentials, measured against the oracle's exact values
// as a ratio to an a-priori bound B computed per entry from the inputs' magnitudes (DESIGN.md §3).
//
// The algorithm analysed (schemes/shaw/fast.cpp, posenc/shaw.hpp), u the type's unit roundoff, gamma_n = n u / (1 - n u),
// alpha = RN(scale) (|alpha - scale| <= u |scale|):
//  * scores: p = gemm(alpha <q, a^K[c]>) and, with key_query, r = gemm(alpha <k, a^K[c]>): each a sum of d products
//    times alpha, |p~ - alpha sum q a| <= gamma_{d+1} |alpha| sum |q a| (any order, blocked, FMA or not); b~ =
//    RN(p~ + r~) (p~ itself without key_query); then the beta = 1 gemm s~ = alpha sum q k + b~ with |s~ - (alpha
//    sum q k + b~)| <= gamma_{d+2} (|alpha| sum |q k| + |b~|) + u |b~|. With |b~| <= (1 + 2 gamma_{d+2}) |scale| rel
//    (1 + u), the total against e = scale (sum q k + rel-terms):
//      B = (gamma_{d+2} + u)(1 + u) |scale| qk + (gamma_{d+2} + gamma_{d+1} + 4 u)(1.01) |scale| rel, times (1 + 1e-12).
//    The table a' the plan multiplies (in the call's type) may differ from the table a the exact value is taken over,
//    |a' - a| <= tau per entry: 0 for a user's float32 table; NEZHA's computed sinusoid in the exact regime is within
//    sinusoidal.table.exact.f64.scaled of the real sinusoid, so tau = E64 + 2^-54 from the oracle's correctly
//    rounded table (E64 = 4.51 * 2^-53), plus 2^-25 where the f32 path rounds it to float (|a| <= 1). The exact
//    value over a' differs from e by at most |scale| drift, drift = tau (sum |q| + [key_query] sum |k|), and the
//    analysis above over a' has rel' <= rel + drift:  B(drift) = B(rel + drift) + |scale| drift (1 + 1e-12).
//  * output: the scores s~_j = e_j + delta_j (|delta_j| <= Delta, the row's largest B); m = max s~; t~_j = RN(s~_j -
//    m) (error <= u |t_j| + 2 Delta); x_j = exp(t~_j) within 1 ulp (glibc expf / exp: < 1 ulp, counted as 2u);
//    the sum in double; alpha~_j = RN(x_j / sum). So alpha~_j = alpha_j (1 + eta_j) with |eta_j| <= expm1(2 Delta)
//    + u |t_j| + (4 + keys 2^-53 / u) u to first order. The output gemms (alpha~ V over `keys` keys, then beta = 1
//    C A^V over the table rows, C's far sums in double rounded once: u) add gamma_{keys + rows + 1} sum alpha~ (|v| +
//    |a|). Hence, per component,
//      B = (expm1(2 Delta) + (keys + rows + 8) u) mag + u tmag, times 1.01 (second-order terms),
//    mag = sum alpha_j (|v_jc| + |a_c|), tmag = sum alpha_j |t_j| (|v_jc| + |a_c|) from the oracle's exact values.
//    A values table within tau of the exact one (see scores) moves the output by sum alpha_j tau = tau: + 1.01 tau.
#include "schemes/shaw/budget.hpp"

#include "verify/bias_budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace shaw_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = ShawRow;

double unit(DType t) { return t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "max_relative_position 1 .. 2^20, both signs, clip or not, key lengths up to 2^31 - 1";
  add(R::index,
      {.quantity = "index clip(d, -k, k) + k of the relative position d (j - i or i - j)", .dtype = "int",
       .regime = "exact", .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "integer arithmetic in both the fast path and the oracle (which recomputes each index from the "
              "definition): the same integer."});
  for (DType t : {DType::f32, DType::f64}) {
    const bool f32 = t == DType::f32;
    add(f32 ? R::scores_f32 : R::scores_f64,
        {.quantity = std::string("scale (<q, k> + <q, a^K[idx]> + [key_query] <k, a^K[idx]>) from ShawPlan::scores (") +
                     (f32 ? "sgemm" : "dgemm") + "s: Q A^T, K A^T, gathered rows, then Q K^T with beta = 1)",
         .dtype = f32 ? "f32" : "f64", .regime = "exact", .domain = all + ", head_dim <= 256",
         .metric = {MetricKind::ratio, t, 0.0, "|score - exact| / B"},
         .bound = 1.0,
         .why = "three gemm sums of d products times alpha = RN(scale) and one rounding of p + r, then the beta = 1 "
                "gemm: B = (gamma_{d+2} + u)(1 + u)|scale| sum|q k| + (gamma_{d+2} + gamma_{d+1} + 4u) 1.01 |scale| "
                "(sum|q a| + [key_query] sum|k a|), times (1 + 1e-12) (derivation: schemes/shaw/budget.cpp). "
                "Where the plan's table is within tau of the exact value's (NEZHA's computed sinusoid: tau = "
                "sinusoidal.table.exact.f64.scaled + 2^-54, + 2^-25 in f32; a given float32 table: 0), rel grows by "
                "drift = tau (sum|q| + [key_query] sum|k|) and B by |scale| drift. Masked entries are -inf exactly."});
    add(f32 ? R::output_f32 : R::output_f64,
        {.quantity = std::string("attention output z_i = sum_j softmax(e)_ij (v_j + [values] a^V[idx]) from "
                                 "ShawPlan::attend, per component (") + (f32 ? "f32" : "f64") + ")",
         .dtype = f32 ? "f32" : "f64", .regime = "exact", .domain = all + ", head_dim <= 256, key_length <= 4096",
         .metric = {MetricKind::ratio, t, 0.0, "|z - exact| / B"},
         .bound = 1.0,
         .why = "the scores' error Delta moves each weight by a factor within exp(+-2 Delta); the subtraction of the "
                "row maximum, exp (< 1 ulp), the division and the two output gemms (over the keys and the table "
                "rows) add (keys + rows + 8) u relative and u |t_j| for a weight e^{t_j} below the maximum: B = "
                "(expm1(2 Delta) + (keys + rows + 8) u) sum alpha (|v| + |a|) + u sum alpha |t| (|v| + |a|), times "
                "1.01, plus 1.01 tau for a values table within tau of the exact one (as for the scores) (derivation: "
                "schemes/shaw/budget.cpp)."});
  }
  add(R::masked,
      {.quantity = "a score entry the causal / padding mask hides: -inf", .dtype = "f32, f64", .regime = "exact",
       .domain = all, .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (-inf)"},
       .bound = 0.0,
       .why = "the row writer stores -inf there and the beta = 1 gemm adds a finite product to it (or stops before "
              "it): -inf exactly."});
  add(R::check_index,
      {.quantity = "a user's index matrix entry vs clip(d, -k, k) + k (posenc check shaw)", .dtype = "int (any npy "
       "integer or float type holding integers)", .regime = "exact", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "indices are integers: a right matrix holds exactly the oracle's integer at every entry."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace shaw_rows

double shaw_scores_bound(DType t, std::size_t d, double abs_scale, double qk, double rel, double drift) {
  // the algorithm is the generic one (bias_budget.hpp), over the plan's own table (rel + drift), plus that table's
  // distance from the exact value's
  return gathered_scores_bound(t, d, abs_scale, qk, rel + drift) + abs_scale * drift * (1 + 1e-12);
}

double shaw_drift_sum(const ShawSpec& s, std::span<const double> q, std::span<const double> k) {
  double sum = 0;
  for (std::size_t c = 0; c < s.head_dim; ++c) sum += std::fabs(q[c]) + (s.key_query ? std::fabs(k[c]) : 0.0);
  return sum * (1 + 1e-15 * static_cast<double>(2 * s.head_dim + 2));
}

std::pair<double, double> shaw_score_sums(const ShawSpec& s, const ShawWeights& w, std::span<const double> q,
                                          std::span<const double> k, std::size_t idx) {
  double qk = 0, rel = 0;
  const std::size_t d = s.head_dim;
  for (std::size_t c = 0; c < d; ++c) {
    const double a = w.keys[idx * d + c];
    qk += std::fabs(q[c] * k[c]);
    rel += std::fabs(q[c] * a) + (s.key_query ? std::fabs(k[c] * a) : 0.0);
  }
  const double slack = 1 + 1e-15 * static_cast<double>(2 * d + 2);
  return {qk * slack, rel * slack};
}

double shaw_output_bound(DType t, double delta, std::size_t keys, std::size_t rows, double mag, double tmag,
                         double tau_values) {
  const double u = shaw_rows::unit(t);
  return ((std::expm1(2 * delta) + (static_cast<double>(keys + rows) + 8) * u) * mag + u * tmag + tau_values) * 1.01 +
         std::ldexp(1.0, -1000);
}

}  // namespace posenc::verify
