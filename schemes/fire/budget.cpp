// The FIRE rows of THE budget table (verify/budget.hpp). Notation: u = 2^-53, u32 = 2^-24, w the MLP's
// width, x the exact normalized distance ln(|c| d + 1) / (ln(|c| N + 1) + eps), h_k = W1[k] x + b1[k],
// S = |b2[h]| + sum_k |W2[h][k]| (|W1[k]| x + |b1[k]|) >= |b_h| (the condition scale of the MLP's sum: S / |b_h| is
// how much the sum cancels).
//
// The algorithm analysed (schemes/fire/fast.cpp):
//  * exact regime, double: l = log1p(fl(|c| d)), den = log1p(fl(|c| N)) + eps, x^ = l / den. log1p is within 1 ulp
//    (glibc, libm-test-ulps) with condition <= 1, the products round once, N = the threshold rounded to double
//    (relative u) or q (exact), eps >= 0 adds without cancellation: |x^ - x| <= 10 u x. Then per unit
//    h^_k = fma(W1[k], x^, b1[k]): |h^_k - h_k| <= |W1[k]| 10 u x + u |h^_k|; ReLU is 1-Lipschitz; the sum
//    acc = fma(r_k, W2, acc) over k ascending rounds w times (recursive summation with exact products:
//    gamma_w sum |W2 r_k|), then + b2 once more: |out - b| <= (11 + w + 1) u S (1 + O(wu)) <= (w + 16) u S.
//  * exact regime, float: the double above rounded to float unless it lies within (w + 16) u S of a float rounding
//    boundary; then binary128 (log1pq, relative error of x < 10 2^-112; the same sum: (w + 16) 2^-112 S) decides.
//  * cramming: every float32 step is an IEEE float32 operation (no contraction: -ffp-contract=off; the fused step is
//    std::fma) or RN32(ln u) (double log rounded, binary128 near a float32 boundary): each correctly rounded; the
//    oracle replays the same steps in MPFR, in the spec's mlp_sum order (fma or unfused) of the second Linear.
//  * a real run (PyTorch: addmm on the BLAS) sums the second Linear in its kernel's order (OpenBLAS's FMA kernels:
//    fma; its kernels without FMA: unfused; Prescott's SSE3 kernel: neither) with Sleef's float32 log: the envelope
//    row fire.check.envelope bounds any order, with or without FMA, by gamma_{w+1} = (w + 1) u32 / (1 - (w + 1) u32)
//    per side (Higham, Accuracy and Stability, §3.1: a sum of n = w + 1 products, b2 the (w + 1)-th, in any order).
#include "schemes/fire/budget.hpp"
#include "verify/bias_budget.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace fire_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = FireRow;

using Rows = BudgetRows<R>;

const std::string kAllDomain =
    "heads 1 .. 65536, width 1 .. 4096, weights |v| <= 1e6, eps in [1e-12, 1], positions 0 <= q, j < 2^24";

// The bias: exact, the cramming float32 steps (fused and unfused), identities, the emulated bias against the exact one, its magnitude.
void bias_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::bias_exact_f32,
      {.quantity = "bias MLP_h(x), float32 output, exact regime", .dtype = "f32", .regime = "exact", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|y - b| / (ulp32(b) / 2 + (w + 16) 2^-112 S)"},
       .bound = 1.0,
       .why = "the double evaluation is within (w + 16) u S of b (analysis above); it is rounded to float only when "
              "it lies farther than that from a float rounding boundary, so the rounding is that of b; otherwise "
              "binary128 (within (w + 16) 2^-112 S) decides: the float is RN32(b) unless b lies within (w + 16) "
              "2^-112 S of a boundary, and then within ulp32(b) / 2 + (w + 16) 2^-112 S of b. In words: correctly "
              "rounded unless the MLP's sum cancels by more than ~2^80."});
  add(R::bias_exact_f64,
      {.quantity = "bias MLP_h(x), float64 output, exact regime", .dtype = "f64", .regime = "exact", .domain = all,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|y - b| / ((w + 16) 2^-53 S)"},
       .bound = 1.0,
       .why = "the double evaluation: x within 10 u relative (two log1p within 1 ulp with condition <= 1, two "
              "products, + eps, one quotient), one fma per unit and one per term of the sum, then + b2: "
              "<= (w + 16) u S. Not correctly rounded: with S ~ |b| (no cancellation) that is (w + 16) / 2 ulp at "
              "most, 24 ulp for the reference's width 32 (measured: see the sweep)."});
  add(R::bias_emulated,
      {.quantity = "bias of the cramming regime, second Linear as an fma chain (--mlp-sum fma; f32 and f64 outputs)",
       .dtype = "f32, f64", .regime = "cramming (mlp_sum fma)",
       .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = std::string("every step RN32: the float32 products, sums, quotient and fma are IEEE operations (no "
                          "contraction in lib/); RN32(ln u) is the double log rounded where it lies farther than 2^-48 "
                          "relative from a float32 boundary, binary128 otherwise; the second Linear acc = RN32(r_k W2 + "
                          "acc) over k ascending, then RN32(acc + b2): the order in which OpenBLAS's Haswell sgemm "
                          "kernel (PyTorch's addmm) sums 99.96-100 % of held-out entries. f64 outputs hold the float32 "
                          "number exactly.") +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_emulated_unfused,
      {.quantity = "bias of the cramming regime, second Linear with each product rounded (--mlp-sum unfused; f32 and "
                   "f64 outputs)",
       .dtype = "f32, f64", .regime = "cramming (mlp_sum unfused)",
       .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = std::string("the steps of fire.bias.emulated.bitwise with the second Linear acc = RN32(acc + RN32(r_k "
                          "W2)) over k ascending, then RN32(acc + b2): the order of OpenBLAS's Sandybridge sgemm "
                          "kernel (no FMA), bit for bit on every held-out entry. Two IEEE float32 operations per term (lib/ is built with "
                          "-ffp-contract=off, so the product is not fused into the sum); the oracle rounds the same "
                          "two in MPFR.") +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_identity,
      {.quantity = "exact equalities of the fast path: every matrix entry is bias_value(h, q_i, j) in every geometry, "
                   "thread count and store path; symmetry b(q, q - t) = b(q, q + t); rows at or below the threshold "
                   "are one function of the distance; masked entries -inf",
       .dtype = "f32, f64", .regime = "exact, cramming", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp distance in the output type)"},
       .bound = 0.0,
       .why = "an entry's value is computed by the same instructions from (h, q, d) alone: l(d), the row's "
              "denominator (the same for every row whose normalizer is the threshold), the quotient and the MLP in a "
              "fixed order; chunking and threads only decide where it is computed."});
  add(R::emulated_vs_exact,
      {.quantity = "float32 bias of the cramming regime vs the exact bias (the deviation of the real float32 code)",
       .dtype = "f32", .regime = "cramming (against exact)", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|e - b| / B (B: the analysis in budget.cpp)"},
       .bound = 1.0,
       .why = "weights rounded to float32 (relative u32 each), t = RN32(|c32| D): 2 u32; u = RN32(t + 1): |u - (1 + "
              "|c| d)| <= 2 u32 t + u32 u, so |l - ln(1 + |c| d)| <= E_l = 3 u32 + u32 l; the threshold's product (3 "
              "u32) and |c32| N (2 u32 more): E_n = 6 u32 + u32 n; den adds eps32 (u32 (eps + den)); x = RN32(l / den): E_x = E_l / "
              "den + l (E_n + u32 (eps + den)) / den^2 + u32 x. Per unit |dh_k| <= |W1| E_x + 4 u32 (|W1| x + |b1|) "
              "(W1, b1 rounded, product, sum); the fused accumulation and + b2 (with W2, b2 rounded): (w + 3) u32 S. "
              "B = 1.25 (Q E_x + (w + 7) u32 S) + 2^-149, Q = sum |W2 W1|, the factor covering second-order terms."});
  add(R::bounded,
      {.quantity = "causal biases stay in the MLP's range over [0, 1] at every length (x = normalized distance in "
                   "[0, 1] for keys at or before the query)",
       .dtype = "f32, f64", .regime = "exact",
       .domain = "random weights, query positions up to 2^24 - 1",
       .metric = {MetricKind::value, DType::f64, 1.0,
                  "max(0, lo - y, y - hi) / ((w + 16) 2^-53 S_max + ulp_out(y)), [lo, hi] = MLP_h([0, 1])"},
       .bound = 1.0,
       .why = "for j <= q: d <= q <= N, so ln(|c| d + 1) <= ln(|c| N + 1) and 0 <= x < 1: the exact bias lies in "
              "MLP_h([0, 1]) (a piecewise-linear function: its extremes are at 0, 1 or a kink -b1/W1 in between, "
              "evaluated in MPFR). The fast value is within (w + 16) u S of the exact one (f64), or its float rounding "
              "(ulp32 more): FIRE's length generalisation (Li et al. 2023, §3: progressive interpolation) as a "
              "checkable bound."});
  for (DType t : {DType::f32, DType::f64})
    add(t == DType::f32 ? R::scores_f32 : R::scores_f64,
        fused_scores_row(t, "FirePlan", "exact, cramming", all,
                         "b~ the plan's own bias value (held to its own rows)"));
}

// What `posenc check fire` holds a user's numbers to.
void check_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  // ---- what `posenc check fire` holds a user's numbers to ------------------------------------------------------
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(fire::check_exact_row(t),
        {.quantity = "a user's bias entry (posenc check fire), exact regime, with the weights given", .dtype = ts,
         .regime = "exact", .domain = "every spec, weights and geometry posenc accepts",
         .metric = {MetricKind::ratio, t, 0.0, "|y - b| / (ulp_" + ts + "(b) / 2 + (w + 16) 2^-53 S)"},
         .bound = 1.0,
         .why = "what an implementation computing in double and storing in " + ts + " achieves: the double bias "
                "within (w + 16) 2^-53 S (the analysis of fire.bias.exact.f64, any summation order: gamma_w S), "
                "rounded once to the stored type. A float32 computation (the reference) is held to the emulation "
                "envelope instead; a wrong sign, |c|, threshold or weight layout is off by far more."});
  }
  add(R::check_envelope,
      {.quantity = "a user's float32 bias vs posenc's emulation of the reference (posenc check fire)",
       .dtype = "f32 (any type holding float32 numbers)", .regime = "cramming (either mlp_sum)",
       .domain = "every spec, weights and geometry posenc accepts",
       .metric = {MetricKind::ratio, DType::f32, 0.0,
                  "|y - e| / E, E = 1.01 (Q32 E'_x + (2 gamma_{w+1} + 4 u32 (1 + u32)) S32) + (2w + 2) 2^-149 (any "
                  "order; --fixed-order: 1.01 Q32 E'_x + ulp32(|e|))"},
       .bound = 1.0,
       .why = "posenc rounds every float32 step correctly in one order; a real run's float32 log (torch / Sleef) may "
              "be A ulp off (allowance A, default 2): E'_x = A ulp32(l) / den + l A ulp32(n) / den^2 + ulp32(x) (the "
              "quotient may then round to the other neighbour), moved through the MLP by Q32 = sum |W2 W1| (float32 "
              "weights; ReLU is 1-Lipschitz). Any order (the default): per unit, posenc's RN32(RN32(x W1) + b1) and a "
              "real first Linear (the same two roundings, or one fused) are each within 2 u32 (1 + u32) (|W1| x + "
              "|b1|) of W1 x + b1, so the two r_k differ by 4 u32 (1 + u32) of it, 4 u32 (1 + u32) S32 through |W2|; "
              "the second Linear is a sum of w products and b2, n = w + 1 terms, and any order of it, blocked, "
              "pairwise, with or without FMA (a fused product rounds less), lies within gamma_{w+1} = (w + 1) u32 / "
              "(1 - (w + 1) u32) of the sum of |terms| <= S32 (Higham §3.1; the same bound as the gemm rows of "
              "verify/bias_budget.hpp), once for posenc's order and once for the real one: 2 gamma_{w+1} S32. S32 = "
              "|b2| + sum |W2| (|W1| x + |b1|) with float32 weights and posenc's x; the other side's own scale "
              "exceeds it by second-order terms (<= gamma_{w+1} Q32 E'_x, u32 S32), which the factor 1.01 covers "
              "for w <= 4096 (gamma_{w+1} < 2.5e-4). Products or sums in the subnormal range add up to 2^-150 each "
              "on either side: (2w + 2) 2^-149. Measured (held-out, Debian PyTorch 1.13 + OpenBLAS, generate_fire.py): "
              "Sandybridge equals --mlp-sum unfused bit for bit where torch's x equals posenc's, Haswell --mlp-sum fma "
              "on 99.96-100 % of entries; Haswell's other entries, Prescott's order and torch's log lie inside E. --fixed-order: the real run's MLP in "
              "posenc's own order, only x allowed to differ."});
  add(R::check_reference_exact,
      {.quantity = "the exact bias as `posenc check fire` evaluates it (binary128) vs the MPFR oracle",
       .dtype = "binary128", .regime = "exact", .domain = all,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|b128 - b| / ((w + 16) 2^-112 S)"},
       .bound = 1.0,
       .why = "binary128 (u = 2^-113): x = log1pq / (log1pq + eps) within 4 u relative; the MLP as its linear piece "
              "A_s x + B_s on x's segment between the units' kinks -b1/W1 (A_s, B_s: sums of <= w + 1 exact-ish "
              "products, each within gamma_{w+1} of the active units' sum of |terms|), one product and one sum: "
              "<= (w + 8) u S; a kink rounded to binary128 can put x on the neighbouring piece, which differs there "
              "by <= Q |x - t| <= 2 u S. Bound (w + 16) 2^-112 S. The check's tolerances are >= half an ulp of the "
              "stored type, 2^59 times larger."});
  add(R::check_reference_emulated,
      {.quantity = "the cramming float32 bias as `posenc check fire` evaluates it vs the MPFR oracle",
       .dtype = "f32", .regime = "cramming", .domain = all,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (ulp_f32 distance)"},
       .bound = 0.0,
       .why = "the same float32 steps: products exact in double and rounded once, IEEE float32 sums, quotient and "
              "fma, logs rounded by MPFR at 24 bits: every step correctly rounded, as the oracle's."});
}

Rows make_rows() {
  Rows r;
  bias_rows(r);
  check_rows(r);
  return r;
}

const BudgetRegistration<FireRow> kRegistration(make_rows);

constexpr double kU = 0x1p-53;
constexpr double kU32 = 0x1p-24;

}  // namespace
}  // namespace fire_rows

namespace fire {
using namespace fire_rows;

double condition_scale(const FireSpec& s, const FireWeights& w, std::size_t h, double x) {
  const std::size_t W = s.mlp_width;
  double S = std::fabs(w.b2[h]);
  for (std::size_t k = 0; k < W; ++k)
    S += std::fabs(w.w2[h * W + k]) * (std::fabs(w.w1[k]) * x + std::fabs(w.b1[k]));
  return S * (1 + std::ldexp(1.0, -40));
}

double exact_f64_scale(const FireSpec& s, const FireWeights& w, std::size_t h, double x) {
  return (static_cast<double>(s.mlp_width) + 16) * kU * condition_scale(s, w, h, x) + std::ldexp(1.0, -1074);
}

double exact_f32_scale(const FireSpec& s, const FireWeights& w, std::size_t h, double x, double r) {
  return ulp(r, DType::f32) / 2 + (static_cast<double>(s.mlp_width) + 16) * std::ldexp(1.0, -112) *
                                      condition_scale(s, w, h, x);
}

double check_exact_scale(DType t, const FireSpec& s, const FireWeights& w, std::size_t h, double x, double r) {
  return ulp(r, t) / 2 + exact_f64_scale(s, w, h, x);
}

double emulated_vs_exact_scale(const FireSpec& s, const FireWeights& w, std::size_t h, std::int64_t q, std::int64_t j,
                               double x) {
  const std::size_t W = s.mlp_width;
  const double c = std::fabs(w.c), d = static_cast<double>(q > j ? q - j : j - q);
  const double thr = std::fabs(w.L_multiplier * w.init_L), N = std::max(static_cast<double>(q), thr);
  const double l = std::log1p(c * d), n = std::log1p(c * N), den = n + s.eps;
  const double El = 3 * kU32 + kU32 * l, En = 6 * kU32 + kU32 * n;
  const double Ex = El / den + l * (En + kU32 * (s.eps + den)) / (den * den) + kU32 * x;
  double Q = 0;
  for (std::size_t k = 0; k < W; ++k) Q += std::fabs(w.w2[h * W + k] * w.w1[k]);
  const double S = condition_scale(s, w, h, x);
  return 1.25 * (Q * Ex + (static_cast<double>(W) + 7) * kU32 * S) + std::ldexp(1.0, -149);
}

FireRow check_exact_row(DType t) {
  return row_of_dtype(t, R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64);
}

}  // namespace fire
}  // namespace posenc::verify
