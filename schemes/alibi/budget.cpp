// The ALiBi rows of THE budget table (verify/budget.hpp). Notation: u = 2^-53, x the integer a bias
// variant multiplies (|x| < 2^31), m_h the exact slope 2^(-b e).
//
// The algorithm analysed (schemes/alibi/fast.cpp):
//  * exact regime: m_h = exp2q(-(b num) / den) in binary128 (exponent rounded once, |b e| <= 128: relative error
//    of m <= 2^-112 * 128 * ln 2 + 2^-112 < 2^-103), split into double-double hi + lo. A bias is
//    v = RN64(p + e), p = RN64(hi x), e = RN64(fma(hi, x, -p) + RN64(lo x)): the fma is exact (hi x - p is a
//    double), the two roundings in e move it by <= 2^-105 |m x|, so p + e = m x (1 + d), |d| <= 2^-102, and v is
//    one rounding of that (f64 output), or v rounded again to float32 (f32 output: a double rounding only when
//    m x lies within 2^-53 |m x| of a float32 midpoint).
//  * emulated regimes: the float32 slope of the named code's steps (binary128 pow / exp2 rounded once per step),
//    then RN32(RN32(x) * slope) in IEEE float32 arithmetic; the oracle replays the same steps in MPFR.
#include "schemes/alibi/budget.hpp"
#include "verify/bias_budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace alibi_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = AlibiRow;

double ulp32(double v) { return ulp(v, DType::f32); }  // verify/accuracy.hpp

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "heads 1 .. 65536, b in (0, 128], every variant, 0 <= key position < 2^31";

  add(R::slope_exact_f64,
      {.quantity = "m_h = 2^(-b e_h) as AlibiPlan::slopes returns it (exact regime)", .dtype = "f64",
       .regime = "exact", .domain = all,
       .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of m_h)"},
       .bound = 0.5 + std::ldexp(1.0, -40),
       .why = "m_h is exp2q of the binary128 exponent -(b num)/den (one rounding, |b e| <= 128), within 2^-103 "
              "relative, then rounded once to double: <= 0.5 + 2^-103 / 2^-53 = 0.5 + 2^-50 ulp < 0.5 + 2^-40."});
  add(R::slope_emulated,
      {.quantity = "float32 slope of the ofirpress, bloom and mpt regimes", .dtype = "f32",
       .regime = "ofirpress, bloom, mpt", .domain = all,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "each step (Python float pow and product, float32 cast, torch float32 pow / exp2 / reciprocal) is "
              "rounded once from a binary128 value within ~2^-110 relative (fast path) or from MPFR at 256 bits "
              "(oracle): the same binary64 / binary32 numbers unless an intermediate lies within 2^-110 relative of "
              "a rounding boundary." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_exact_f32,
      {.quantity = "bias m_h x, float32 output, exact regime", .dtype = "f32", .regime = "exact", .domain = all,
       .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel (ulp_f32 of m_h x)"},
       .bound = 0.5 + std::ldexp(1.0, -28),
       .why = "the double v = RN64(m x (1 + d)), |d| <= 2^-102, is within 2^-53 (1 + 2^-49) |m x| of m x; "
              "rounding it to float32 adds <= 0.5 ulp_f32: <= 0.5 + 2^-53 / 2^-24 (1 + 2^-49) < 0.5 + 2^-28 ulp_f32 "
              "(on the subnormal grid the ulp is larger, the bound smaller). x = 0 gives +0 exactly."});
  add(R::bias_exact_f64,
      {.quantity = "bias m_h x, float64 output, exact regime", .dtype = "f64", .regime = "exact", .domain = all,
       .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of m_h x)"},
       .bound = 0.5 + std::ldexp(1.0, -40),
       .why = "v = RN64(p + e) with p + e = m x (1 + d), |d| <= 2^-102: <= 0.5 + 2^-102 / 2^-53 = 0.5 + 2^-49 ulp "
              "< 0.5 + 2^-40."});
  add(R::bias_emulated,
      {.quantity = "bias of the ofirpress, bloom and mpt regimes (f32 and f64 outputs)", .dtype = "f32, f64",
       .regime = "ofirpress, bloom, mpt", .domain = all,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "RN32(RN32(x) * slope32): int-to-float conversion and one IEEE float32 multiply (no contraction), "
              "with the slope of alibi.slope.emulated.bitwise: the oracle's two roundings of the same numbers. "
              "f64 outputs hold the float32 number exactly." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_identity,
      {.quantity = "exact equalities of the fast path: Toeplitz rows (b(i, j) = b(i+1, j+1)), the same value for "
                   "a (head, x) in every geometry, row, thread count and store path, masked entries -inf, "
                   "per-key rows identical for every query",
       .dtype = "f32, f64", .regime = "exact, ofirpress, bloom, mpt", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp distance in the output type)"},
       .bound = 0.0,
       .why = "every row is a slice of one per-head vector of value(x) computed by the same instructions; the "
              "value depends only on the head's slope and x, never on the row, the thread or the store path."});
  add(R::emulated_vs_exact,
      {.quantity = "float32 bias of an emulated regime vs the exact m_h x (the deviation of the real code)",
       .dtype = "f32", .regime = "ofirpress, bloom, mpt (against exact)", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|b32 - m x| / (|x32| |s32 - m| + m |x32 - x| + ulp32(b32))"},
       .bound = 1.0,
       .why = "b32 = RN32(x32 s32): |b32 - m x| <= |RN32(x32 s32) - x32 s32| + |x32| |s32 - m| + m |x32 - x| and "
              "the first term is <= 0.5 ulp32(x32 s32) <= ulp32(b32). The slope error |s32 - m| (up to ~k ulp for "
              "BLOOM's pow of a rounded base, 0.5 ulp for ofirpress) times |x| is what grows with distance; above "
              "2^24 the distance itself is rounded (x32 != x)."});
  add(R::softmax_exact,
      {.quantity = "softmax rows of two bias variants under their masks (exact regime, f32 and f64), evaluated "
                   "in MPFR from the fast path's numbers",
       .dtype = "f32, f64", .regime = "exact", .domain = all + ", rows of <= 160 keys",
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|p_a - p_b| / (p_b (exp(2 delta) - 1))"},
       .bound = 1.0,
       .why = "the exact biases of two equivalent variants differ by a constant c_i over the visible keys of row "
              "i (the identity is checked on the oracle), so their softmax rows are equal; each fast bias is "
              "within its row's bound of m x (<= 0.5 + 2^-28 ulp, taken as a whole ulp delta_j = ulp(|b_j|)), so "
              "the logits differ from equivalent ones by <= delta = max_j (ulp(|a_j|) + ulp(|b_j|)) and "
              "|log p_a,j - log p_b,j| <= 2 delta: |p_a - p_b| <= p_b (exp(2 delta) - 1)."});
  for (DType t : {DType::f32, DType::f64})
    add(t == DType::f32 ? R::scores_f32 : R::scores_f64,
        fused_scores_row(t, "AlibiPlan", "exact, ofirpress, bloom, mpt", all,
                         "b~ the spec's own bias m x (exact or emulated) as the plan rounds it; the exact-regime bias is within u |b~| of m x"));
  add(R::identity_oracle,
      {.quantity = "an identity evaluated on the oracle at 256 bits (slope rules, linearity in distance, softmax "
                   "equivalence of the exact variants)",
       .dtype = "mp", .regime = "exact", .domain = all,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "absolute"},
       .bound = std::ldexp(1.0, -200),
       .why = "both sides are formed at 256 bits from values correct to 2^-250 relative with |m x| < 2^31: their "
              "difference is below 2^-200 unless the identity is false."});
  // ---- what `posenc check alibi` holds a user's numbers to ---------------------------------------------------
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(alibi::check_exact_row(t),
        {.quantity = "a user's bias entry or slope (posenc check alibi), exact regime", .dtype = ts,
         .regime = "exact", .domain = "every spec and geometry posenc accepts",
         .metric = {MetricKind::kernel, t, 1.0, "kernel (ulp_" + ts + " of m_h x)"},
         .bound = 1.5,
         .why = "what a careful implementation in " + ts + " achieves: the slope rounded once to " + ts +
                " (|s - m| <= 0.5 ulp(m)) times the exact integer, rounded once: |b - m x| <= 0.5 ulp(b) + 0.5 |x| "
                "ulp(m), and |x| ulp(m) <= 2 ulp(m x) (m x may sit in the binade below m's times |x|'s): <= 1.5 ulp. "
                "The exact regime itself is within 0.5 + 2^-28. A wrong head order, the wrong non-power-of-two "
                "rule, an off-by-one distance or a bias of the wrong sign is off by far more (a relative 2^-b/n or "
                "1/|x|)."});
  }
  add(R::check_envelope,
      {.quantity = "a user's float32 bias or slope vs posenc's emulation of its regime (posenc check alibi)",
       .dtype = "f32 (any type holding float32 numbers)", .regime = "ofirpress, bloom, mpt",
       .domain = "every spec and geometry posenc accepts",
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|y - e| / E, E = |x32| (A + 1) ulp32(s_e) + ulp32(|e| + |x32| (A + 1) ulp32(s_e))"},
       .bound = 1.0,
       .why = "posenc rounds every float32 step correctly; a real pow (torch / Sleef float32 pow, glibc double "
              "pow) may be A ulp off (allowance A, default 2; HF BLOOM's torch.pow was measured 1 ulp off for 4 of "
              "1234 slopes, properties/heldout), and the steps after it (cast, reciprocal) may flip one more "
              "rounding: |s_u - s_e| <= (A + 1) ulp32(s_e). The bias RN32(x32 s) then moves by <= |x32| |s_u - s_e| "
              "plus one flip of its own rounding: ulp32 of the larger magnitude. A slope is checked as the bias at "
              "x = 1."});
  return r;
}

const BudgetRegistration<AlibiRow> kRegistration(make_rows);

}  // namespace
}  // namespace alibi_rows

namespace alibi {
using namespace alibi_rows;

double softmax_scale(double p, double delta) { return p * std::expm1(2 * delta) * (1 + 1e-9) + std::ldexp(1.0, -1000); }
double emulated_vs_exact_scale(double x, double slope32, double exact_slope, double bias32) {
  const double x32 = static_cast<float>(x);
  return std::fabs(x32) * std::fabs(slope32 - exact_slope) + exact_slope * std::fabs(x32 - x) + ulp32(bias32) +
         std::ldexp(1.0, -149);
}
AlibiRow check_exact_row(DType t) {
  return row_of_dtype(t, R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64);
}

}  // namespace alibi
}  // namespace posenc::verify
