// The KERPLE rows of THE budget table (verify/budget.hpp). Notation: u32 = 2^-24, u = 2^-53, d the
// integer distance (0 <= d < 2^31), (p, a) a head's clamped parameters.
//
// The algorithm analysed (schemes/kerple/fast.cpp):
//  * exact regime, float output: v = -p log1p(a d) or -a pow(d, p) in double. glibc's log1p and pow are within
//    1 ulp (libm-test-ulps), a d and the final product round once each, and log1p's condition number
//    x / ((1 + x) ln(1 + x)) is <= 1, so |v - X| <= 4 u |X| (1 + 2u) < 2^-50 |X|. v is rounded to float unless it
//    lies within 2^-48 |v| of a float rounding boundary; then X is re-evaluated in binary128 (log1pq / powq, relative
//    error < 2^-108; a d exact in 84 bits) and that is rounded. Either way the float is RN32(X) unless X itself lies
//    within 2^-108 |X| of a boundary: error <= 0.5 ulp + 2^-84 ulp.
//  * exact regime, double output: binary128 as above, rounded once: <= 0.5 ulp + 2^-108 / 2^-53 = 0.5 + 2^-55 ulp.
//  * megatron: each float32 step in IEEE float32 arithmetic (products, 1 + t: correctly rounded by the hardware,
//    no contraction) and log / pow evaluated in double and rounded to float32 unless within 2^-48 relative of a
//    float32 boundary (then binary128): every step correctly rounded; the oracle replays the same steps in MPFR.
#include "schemes/kerple/budget.hpp"
#include "verify/bias_budget.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace kerple_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = KerpleRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "heads 1 .. 65536, both kernels, finite weights |v| <= 1e6 (clamped), 0 <= d < 2^31";

  add(R::bias_exact_f32,
      {.quantity = "bias -p ln(1 + a d) / -a d^p, float32 output, exact regime", .dtype = "f32", .regime = "exact",
       .domain = all, .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel (ulp_f32 of the bias)"},
       .bound = 0.5 + std::ldexp(1.0, -60),
       .why = "the double evaluation is within 2^-50 relative (log1p / pow <= 1 ulp, two products, condition <= 1); "
              "it is rounded to float only when it lies farther than 2^-48 relative from a float rounding boundary, "
              "so the rounding is that of the real value; otherwise binary128 (< 2^-108 relative) decides: "
              "<= 0.5 + 2^-84 ulp_f32 < 0.5 + 2^-60. d = 0 gives -0 exactly."});
  add(R::bias_exact_f64,
      {.quantity = "bias -p ln(1 + a d) / -a d^p, float64 output, exact regime", .dtype = "f64", .regime = "exact",
       .domain = all, .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of the bias)"},
       .bound = 0.5 + std::ldexp(1.0, -50),
       .why = "binary128: a d exact (53 + 31 bits), log1pq / powq within ~1 ulp_128, one product: < 2^-108 "
              "relative, then one rounding to double: <= 0.5 + 2^-108 / 2^-53 = 0.5 + 2^-55 ulp_f64 < 0.5 + 2^-50."});
  add(R::bias_emulated,
      {.quantity = "bias of the megatron regime (f32 and f64 outputs)", .dtype = "f32, f64", .regime = "megatron",
       .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "every step RN32: the float32 products and the sum 1 + t are IEEE operations (no contraction in "
              "lib/); RN32(ln u) and RN32(D^p) are the double values rounded where they are farther than 2^-48 "
              "relative from a float32 boundary, binary128 otherwise (a float32 log / pow value within 2^-108 of a "
              "float32 midpoint does not occur for these arguments: the oracle's Ziv loop would disagree). f64 "
              "outputs hold the float32 number exactly, -0 at d = 0." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_identity,
      {.quantity = "exact equalities of the fast path: Toeplitz rows (b(i, j) = b(i+1, j+1)), the same value for a "
                   "(head, d) in every geometry, row, thread count and store path, -0 at d = 0 and above the "
                   "diagonal, masked entries -inf, monotone (b(d + 1) <= b(d)), clamped parameters (p < 0.01 is "
                   "0.01, power p > 2 is 2), the power kernel with p = 1, a = m_h is ALiBi's relative bias",
       .dtype = "f32, f64", .regime = "exact, megatron", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp distance in the output type)"},
       .bound = 0.0,
       .why = "every row is a slice of one per-head vector of value(d) computed by the same instructions, which "
              "depend only on the head's parameters and d; each regime's value is a composition of correctly "
              "rounded monotone steps (RN of a monotone function is monotone), so monotonicity holds exactly; the "
              "clamp happens before any arithmetic; with p = 1 and a dyadic slope -a d is exact in both schemes."});
  add(R::emulated_vs_exact,
      {.quantity = "float32 bias of the megatron regime vs the exact bias (the deviation of the real float32 code)",
       .dtype = "f32", .regime = "megatron (against exact)", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|e - X| / S (S: the analysis in budget.cpp)"},
       .bound = 1.0,
       .why = "log: t = a32 D (1 + d1), u = (1 + t)(1 + d2), l = ln u (1 + d3), e = -p32 l (1 + d4), |d_k| <= u32, D = "
              "RN32(d): |u - (1 + a d)| <= |a32 - a| D + a |D - d| + u32 (t + u), so |l - ln(1 + a d)| <= that / "
              "min(u, 1 + a d) + u32 |l|, and |e - X| <= |p32 - p| ln(1 + a d) + p32 (that) + u32 |e|. "
              "power: |D^p32 - d^p| <= p32 max(D, d)^(p32 - 1) |D - d| + max(d^p, d^p32) ln(d) |p32 - p| "
              "exp(|p32 - p| ln d), w = D^p32 (1 + d3), e = -a32 w (1 + d4): |e - X| <= a (that) + |a32 - a| w + "
              "a32 u32 w + u32 |e|. S is that sum times (1 + 2^-20) (second-order terms), plus 2^-149. The "
              "cancellation in 1 + a d is what makes small a d cost ulps (15 ulp at a = 0.01, d = 3)."});
  add(R::cpd,
      {.quantity = "conditional positive definiteness: c^T K c for integer c with sum c = 0, K_ij = b_h(|x_i - x_j|) "
                   "from the fast path (f64), random point sets",
       .dtype = "f64", .regime = "exact", .domain = "N <= 24 integer points in [0, 10^6], |c_i| <= 100",
       .metric = {MetricKind::value, DType::f64, 1.0, "max(0, -c^T K c) / (2^-51 sum |c_i c_j K_ij|)"},
       .bound = 1.0,
       .why = "the kernels -p ln(1 + a |m - n|) (p, a > 0) and -a |m - n|^p (0 < p <= 2) are conditionally positive "
              "definite (Chi et al. 2022, Prop. 1-2): sum c_i c_j k(x_i, x_j) >= 0 when sum c_i = 0. The quadratic "
              "form is evaluated exactly (MPFR) from the fast values, each within 0.5 + 2^-50 ulp of K_ij: the "
              "computed form is >= -2^-52 (1 + 2^-49) sum |c_i c_j K_ij| > -2^-51 sum |c_i c_j K_ij|."});
  for (DType t : {DType::f32, DType::f64})
    add(t == DType::f32 ? R::scores_f32 : R::scores_f64,
        fused_scores_row(t, "KerplePlan", "exact, megatron", all,
                         "b~ the plan's own bias value (held to its own rows)"));
  // ---- what `posenc check kerple` holds a user's numbers to --------------------------------------------------
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(kerple::check_exact_row(t),
        {.quantity = "a user's bias entry (posenc check kerple), exact regime, with the weights given", .dtype = ts,
         .regime = "exact", .domain = "every spec, weights and geometry posenc accepts",
         .metric = {MetricKind::kernel, t, 1.0, "kernel (ulp_" + ts + " of the bias)"},
         .bound = 4.0,
         .why = "what a careful implementation in " + ts + " with the same weights achieves: log1p (or pow) within "
                "1 ulp, a d rounded once (condition of log1p <= 1: 0.5 ulp more), the product with p or a rounded "
                "once (0.5), the final rounding (0.5), and d itself rounded to the type beyond its integers (2^24 "
                "in f32; pow's condition in d is p <= 2: <= 1 ulp): <= 3.5 ulp, bound 4. Computing ln(1 + a d) as log of a "
                "rounded 1 + a d (the reference's float32 code) loses up to ulp(1) / ln(1 + a d) relative and is "
                "held to the emulation envelope instead; a wrong sign, distance or parameter order is off by far "
                "more."});
  }
  add(R::check_envelope,
      {.quantity = "a user's float32 bias vs posenc's emulation of the reference (posenc check kerple)",
       .dtype = "f32 (any type holding float32 numbers)", .regime = "megatron",
       .domain = "every spec, weights and geometry posenc accepts",
       .metric = {MetricKind::ratio, DType::f32, 0.0,
                  "|y - e| / E, E = |p| (A ulp32(l) + F ulp32(u) / u) + ulp32(|e|) (log), |a| A ulp32(w) + ulp32(|e|) (power)"},
       .bound = 1.0,
       .why = "posenc rounds every float32 step correctly; a real float32 log or pow (torch / Sleef) may be A ulp off "
              "(allowance A, default 2), which moves the bias by |p| A ulp32(l) (log) or |a| A ulp32(w) (power); a "
              "fused a D + 1 (F = 1, the default) changes u by <= 1 ulp32(u) and ln u by <= ulp32(u) / u; the last "
              "product may then round to the other neighbour: ulp32(|e|) (of the larger magnitude)."});
  return r;
}

const BudgetRegistration<KerpleRow> kRegistration(make_rows);

}  // namespace
}  // namespace kerple_rows

namespace kerple {
using namespace kerple_rows;

double emulated_vs_exact_scale(KerpleKernel k, double p, double a, double p32, double a32, std::int64_t d, double e) {
  const double u32 = std::ldexp(1.0, -24);
  const auto dd = static_cast<double>(d);
  const double D = static_cast<float>(dd);
  const double dD = std::fabs(D - dd);
  double s = 0;
  if (k == KerpleKernel::log) {
    const double t = a32 * D, u = 1 + t, x = 1 + a * dd;
    const double du = std::fabs(a32 - a) * D + a * dD + u32 * (t + u);
    const double l = std::log(u);
    const double dl = du / std::min(u, x) + u32 * std::fabs(l);
    s = std::fabs(p32 - p) * std::log(x) + p32 * dl + u32 * std::fabs(e);
  } else {
    const double ld = d > 0 ? std::log(dd) : 0.0;
    const double w = d > 0 ? std::pow(D, p32) : 0.0;
    const double m = std::max(D, dd);
    const double dw = (d > 0 ? p32 * std::pow(m, p32 - 1) * dD : 0.0) +
                      std::max(std::pow(dd, p), w) * ld * std::fabs(p32 - p) * std::exp(std::fabs(p32 - p) * ld);
    s = a * dw + std::fabs(a32 - a) * w + a32 * u32 * w + u32 * std::fabs(e);
  }
  return s * (1 + std::ldexp(1.0, -20)) + std::ldexp(1.0, -149);
}

KerpleRow check_exact_row(DType t) {
  return row_of_dtype(t, R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64);
}

}  // namespace kerple
}  // namespace posenc::verify
