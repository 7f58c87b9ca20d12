// The sinusoidal rows of THE budget table (verify/budget.hpp).
// Notation: u = 2^-53; ulp_f64(1) = 2^-52, ulp_f32(1) = 2^-23.
//
// The algorithm analysed (schemes/sinusoidal/fast.cpp on the angle core lib/src/core/angle_table.hpp and trig.hpp):
//  * omega_k = min_timescale * base^(-e_k) in binary128 (a product of two expq values, core/angle_table.cpp),
//    split into double-double hi + lo: relative error <= 2^-104.9 (the binary128 value 2^-105.9, the lo split 2^-106).
//  * sincos_dd(theta_hi + theta_lo): theta = p * omega formed by an exact two-product plus p*lo
//    (rounding <= 2^-62 for |p omega| <= 2^44); reduction by a triple-double pi/2 (absolute
//    <= 2^-60); Taylor polynomials whose final addition rounds once (<= 0.6 ulp_f64 of the result).
//    The angle error |p| omega 2^-104.9 <= 2^-60.9. So each sin/cos is within
//        eps_sc = 2^-53 + 2^-57   (absolute, results in [-1, 1]).
//  * exact-regime table entry: anchor (s_a, c_a) at p_a and J table (s_j, c_j), j < B, each within
//    eps_sc; entry = fma(s_a, c_j, RN(c_a s_j)). The first-order error of the complex product is
//    |d_s c_j + d_c s_j| <= eps_sc (|c_j| + |s_j|) <= sqrt2 eps_sc for each factor, so with the
//    rounding of RN(c_a s_j) (<= 2^-54, |c_a s_j| < 1) and of the fma (<= 2^-53: <= 2^-54 when the
//    result is below 1; a result R >= 1 rounds either to 1, which is closer to r <= 1, or up by <= 2^-53)
//        E64 = 2 sqrt2 eps_sc + 2^-54 + 2^-53 ~= 4.51 * 2^-53 = 2.25 ulp_f64(1).
//    Float output rounds that double once more: <= 2^-25 for |y| < 1 (a double >= 1 rounds to 1.0,
//    which is closer), so E32 = 2^-25 + E64.
#include "schemes/sinusoidal/budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

// BudgetRow::id and ::scheme are filled in from the key by the registration.
// GCC 12 reports std::string members of these designated initialisers as maybe-uninitialised (a false positive).

namespace posenc::verify {
namespace sinusoidal_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = SinusoidalRow;

const double kSqrt2 = std::sqrt(2.0);
const double kEpsSc = std::ldexp(1.0, -53) + std::ldexp(1.0, -57);
const double kE64 = 2 * kSqrt2 * kEpsSc + std::ldexp(1.0, -54) + std::ldexp(1.0, -53);
const double kE32 = std::ldexp(1.0, -25) + kE64;
const double kUlp64 = std::ldexp(1.0, -52), kUlp32 = std::ldexp(1.0, -23);

using Rows = BudgetRows<R>;

const std::string kAllDomain =
    "|p| <= max_abs_position(spec) (2^40 for every preset), every preset and generated spec";

// Omega_k and the table entries, exact and emulated; exact values.
void frequency_and_table_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::frequency_exact_f64, {.quantity = "omega_k as returned by sinusoidal_frequencies",
     .dtype = "f64",
     .regime = "exact",
     .domain = "every rule, base in [2, 1e7], dim <= 8192",
     .metric = {MetricKind::kernel, DType::f64, 1.0, "kernel (ulp_f64 of omega_k)"},
     .bound = 0.5 + std::ldexp(1.0, -50),
     .why = "omega_k is formed in binary128 as the product of two expq values of multiples of logq(base) (scale "
               "base^(-16 i e_1) and base^(-j e_1) for k = 16 i + j, each within |x| 2^-111 + 2^-112 <= 2^-107 "
               "relative for |x| = |e_k ln base| <= 16.1, the product within 2^-105.9) and rounded once to double: "
               "within 0.5 ulp of the binary128 value, which is within 2^-105.9 |omega_k| <= 2^-52.9 ulp of omega_k, "
               "so err <= 0.5 + 2^-52.9 < 0.5 + 2^-50."});
  add(R::frequency_emulated_f32, {.quantity = "float32 omega_k of the emulated implementation",
     .dtype = "f32",
     .regime = "emulated",
     .domain = "every rule (paper: PyTorch exp form), every base and dim",
     .metric = {MetricKind::bitwise, DType::f32, 1.0, "bit-identical to the oracle's emulated float32 frequency"},
     .bound = 0.0,
     .why = "Both the fast path and the oracle replay the same float32 steps (RN32 products, correctly rounded "
               "float32 exp); exp in binary128 rounded once equals RN32(exp) unless exp lies within 2^-108 of a "
               "float32 midpoint. Equality is the claim." +
              std::string(kCorrectlyRoundedSteps)});

  add(R::table_exact_f64_scaled, {.quantity = "table entry",
     .dtype = "f64",
     .regime = "exact",
     .domain = all,
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
     .bound = kE64 / kUlp64,
     .why = "Entry = fma(s_a, c_j, RN(c_a s_j)) from anchor and J values each within eps_sc = 2^-53 + 2^-57: "
               "2 sqrt2 eps_sc + 2^-54 (product) + 2^-53 (fma; <= 2^-54 below 1) = 4.51 * 2^-53 = 2.25 ulp_f64(1). "
               "No term grows with p: the angle is formed in double-double."});
  add(R::table_exact_f32_scaled, {.quantity = "table entry",
     .dtype = "f32",
     .regime = "exact",
     .domain = all,
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
     .bound = kE32 / kUlp32,
     .why = "The double entry (within E64 = 2.25 ulp_f64(1)) rounded once to float: <= 2^-25 for |y| < 1 "
               "(a double >= 1 rounds to 1.0, closer to r), so |y - r| <= 2^-25 + E64 = (0.25 + 2^-26.8) ulp_f32(1)."});
  add(R::table_exact_f32_kernel, {.quantity = "table entry, away from zeros",
     .dtype = "f32",
     .regime = "exact",
     .domain = all + ", entries with |r| >= 2^-16",
     .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel (ulp_f32 of r)"},
     .bound = 0.5 + 2 * kE64 / std::ldexp(1.0, -16 - 23),
     .why = "y = RN32(yd) with |yd - r| <= E64 (absolute): |y - r| <= ulp(r)/2 + 2 E64, and "
               "ulp_f32(r) >= 2^-39 for |r| >= 2^-16, so err <= 0.5 + 2 * 4.51 * 2^-53 / 2^-39 = 0.5 + 5.5e-4: "
               "nearly correctly rounded (wrong only within 5.5e-4 ulp of a midpoint)."});

  // Emulated entries are correctly rounded (lib/src/core/sincos32.hpp: a settle test on sin/cos in double, else
  // binary128): y = RN32(r) exactly, so |y - r| <= 0.5 ulp_f32(r) <= 2^-25 for |r| <= 1.
  const double emu_s = std::ldexp(1.0, -25) / kUlp32;
  const double emu_k = 0.5;
  const std::string emu_dom = "every rule (paper: PyTorch exp form), |p| <= 2^40";
  add(R::table_emulated_f32_scaled, {.quantity = "table entry vs sin/cos of the emulated float32 angle",
     .dtype = "f32",
     .regime = "emulated",
     .domain = emu_dom,
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1), r = sin/cos(angle32) before the final RN32"},
     .bound = emu_s,
     .why = "angle32 = RN32(RN32(p) omega32) is replayed exactly; y = RN32(sin/cos(angle32)) correctly rounded "
               "(sin/cos in double, taken when the whole error interval rounds to one float: on the AVX-512 fast path "
               "for |p| < 2^24 and angles < 2^22 the angle core's (sin, cos)(p omega32) corrected by d = angle32 - p "
               "omega32, within 5.8 * 2^-53, interval +-2^-50; elsewhere a double-double reduction within 2^-53 + "
               "2^-58, interval +-2^-52; if neither settles, binary128 sinq/cosq): |y - r| <= 0.5 ulp_f32(r) <= 2^-25 "
               "= 0.25 ulp_f32(1)." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::table_emulated_f64_scaled, {.quantity = "table entry vs sin/cos of the emulated float32 angle (double output holds the float32 number)",
     .dtype = "f64",
     .regime = "emulated",
     .domain = emu_dom,
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1) in ulp_f32 units"},
     .bound = emu_s,
     .why = "The double output is the same float32 number widened exactly; analysis as the f32 row."});
  add(R::table_emulated_f32_kernel, {.quantity = "table entry vs sin/cos of the emulated float32 angle, away from zeros",
     .dtype = "f32",
     .regime = "emulated",
     .domain = emu_dom + ", entries with |r| >= 2^-20",
     .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel (ulp_f32 of r), r before the final RN32"},
     .bound = emu_k,
     .why = "y = RN32(r), correctly rounded (see the err_S row): err <= 0.5 ulp_f32(r) for every r; the row keeps "
               "|r| >= 2^-20 as its domain (before the settle test an absolute reduction error could reach 2^-6 ulp "
               "near zeros of sin/cos, and this row measured only away from them)."});
  add(R::table_emulated_f64_kernel, {.quantity = "table entry vs sin/cos of the emulated float32 angle, away from zeros (double output)",
     .dtype = "f64",
     .regime = "emulated",
     .domain = emu_dom + ", entries with |r| >= 2^-20",
     .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel in ulp_f32 of r, r before the final RN32"},
     .bound = emu_k,
     .why = "The double output is the float32 number widened exactly; analysis as the f32 row."});

  add(R::table_range, {.quantity = "every entry lies in [-1, 1]",
     .dtype = "f32, f64",
     .regime = "exact, emulated",
     .domain = all,
     .metric = {MetricKind::absolute, DType::f64, 1.0, "max(|y| - 1, 0)"},
     .bound = 0.0,
     .why = "Exact claim. f32: RN32 of a double <= 1 + 2^-51 is <= 1. f64: the fma can return 1 + 2^-52 only "
               "if the complex product's error (<= 3.5 * 2^-53 before the last rounding) pushes a value within "
               "2^-51 of 1 above 1 + 2^-53; the claim asserts it never does (a failure means lib must clamp)."});
  add(R::table_exact_values, {.quantity = "PE(0) (sin slots 0, cos slots 1), zero-pad column, padding row, float32-ness of emulated f64 output",
     .dtype = "f32, f64",
     .regime = "exact, emulated",
     .domain = "every spec",
     .metric = {MetricKind::bitwise, DType::f64, 1.0, "bit-identical to the exact value"},
     .bound = 0.0,
     .why = "Exact claim: theta = 0 reduces to x = 0, where the polynomials return exactly 0 and 1 and the complex "
               "product with J[0] = (0, 1) is exact; zero columns and rows are stored, not computed."});
}

// The shift operator T(k): entries, application, composition, orthogonality.
void shift_rows(Rows& r) {
  const auto add = row_adder(r);
  add(R::shift_operator_f64, {.quantity = "T(k) entries cos(k w_i), sin(k w_i) (ShiftOperator, dense f64)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|k| <= 2^41",
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
     .bound = kEpsSc / kUlp64,
     .why = "Computed directly by sincos_dd of the double-double angle k omega_i: eps_sc = 2^-53 + 2^-57 = "
               "0.53 ulp_f64(1)."});
  add(R::shift_dense_f32, {.quantity = "dense T(k) entries (float)",
     .dtype = "f32",
     .regime = "exact",
     .domain = "|k| <= 2^41",
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
     .bound = (std::ldexp(1.0, -25) + kEpsSc) / kUlp32,
     .why = "The double entry (eps_sc) rounded once to float (2^-25): (0.25 + 2^-29.9) ulp_f32(1)."});
  const double apply64 = (kSqrt2 * (kEpsSc + kE64) + kUlp64) / kUlp64;
  const double apply32 = (kSqrt2 * ((std::ldexp(1.0, -25) + kEpsSc) + kE32) + kUlp32) / kUlp32;
  add(R::shift_apply_f64, {.quantity = "T(k) PE(p) by apply_shift (cblas drot or dgemm) vs oracle PE(p+k)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40, rows from the fast table",
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
     .bound = apply64,
     .why = "out = c x + s y with c, s within eps_sc and x, y within E64 (table): sqrt2 eps_sc + sqrt2 E64 "
               "(first order, |(x,y)| = |(c,s)| = 1) plus <= 3 roundings (two products < 1: 2^-54 each; the sum "
               "2^-53) = 2^-52; gemm adds only exact zeros (block-diagonal T). S = 1 rather than |x c| + |y s| "
               "because the inputs are table entries with absolute errors."});
  add(R::shift_apply_f32, {.quantity = "T(k) PE(p) by apply_shift (cblas srot or sgemm) vs oracle PE(p+k)",
     .dtype = "f32",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40, rows from the fast table",
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
     .bound = apply32,
     .why = "c, s rounded to float (2^-25 + eps_sc), x, y float table entries (E32): sqrt2 (2^-25 + eps_sc + E32) "
               "+ float roundings 2^-25 + 2^-25 + 2^-24 = 2^-23, i.e. sqrt2/2 + 1 = 1.71 ulp_f32(1)."});
  add(R::shift_differential_f64, {.quantity = "apply_shift(T(k), rows p..) vs sinusoidal_table(p+k..) (BLAS path vs direct path)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40",
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1), r = the direct row"},
     .bound = apply64 + kE64 / kUlp64,
     .why = "Both are within their bound of the same real number: shift.apply.f64 + table.exact.f64.scaled."});
  add(R::shift_differential_f32, {.quantity = "apply_shift(T(k), rows p..) vs sinusoidal_table(p+k..) (BLAS path vs direct path)",
     .dtype = "f32",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40",
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1), r = the direct row"},
     .bound = apply32 + kE32 / kUlp32,
     .why = "Both are within their bound of the same real number: shift.apply.f32 + table.exact.f32.scaled."});
  add(R::shift_compose_f64, {.quantity = "T(a) T(b) (2x2 products of fast entries in double) vs oracle T(a+b)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|a|, |b|, |a+b| <= 2^40",
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
     .bound = (2 * kSqrt2 * kEpsSc + kUlp64) / kUlp64,
     .why = "cos = ca cb - sa sb: first order eps_sc (|cb| + |sb|) + eps_sc (|ca| + |sa|) <= 2 sqrt2 eps_sc, "
               "plus <= 3 roundings (2^-54 + 2^-54 + 2^-53): 2 sqrt2 * 0.53 + 1 = 2.5 ulp_f64(1)."});
  add(R::shift_orthogonality_f64, {.quantity = "|cos^2 + sin^2 - 1| of fast T(k) entries (exact arithmetic)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|k| <= 2^41",
     .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
     .bound = (2 * kSqrt2 * kEpsSc + 2 * kEpsSc * kEpsSc) / kUlp64,
     .why = "2 (|c| + |s|) eps_sc + 2 eps_sc^2 <= 2 sqrt2 eps_sc = 1.5 ulp_f64(1); off-diagonal entries of "
               "T T^T cancel exactly (c(-s) + s c)."});
  add(R::shift_orthogonality_f32, {.quantity = "|cos^2 + sin^2 - 1| of dense float T(k) (exact arithmetic)",
     .dtype = "f32",
     .regime = "exact",
     .domain = "|k| <= 2^41",
     .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
     .bound = (2 * kSqrt2 * (std::ldexp(1.0, -25) + kEpsSc) + 2 * std::pow(std::ldexp(1.0, -25) + kEpsSc, 2)) / kUlp32,
     .why = "Entries within 2^-25 + eps_sc: 2 sqrt2 (2^-25 + eps_sc) = 0.71 ulp_f32(1)."});
}

// Norms, dot products, Gram matrices and the distinctness margin of fast rows.
void norm_dot_gram_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  const double dot32 = (2 * kSqrt2 * kE32 + 2 * kE32 * kE32) * std::ldexp(1.0, 24);
  const double dot64 = (2 * kSqrt2 * kE64 + 2 * kE64 * kE64) * std::ldexp(1.0, 53);
  const std::string dot_why =
      "Sum formed exactly (MPFR) from the fast rows, so only the entries' errors count: per pair "
      "|a_s db_s + a_c db_c| + |b_s da_s + b_c da_c| + 2 E^2 <= 2 sqrt2 E + 2 E^2, over h = floor(d/2) pairs; "
      "ulp(h) > h 2^-p, so err_S <= (2 sqrt2 E + 2 E^2) 2^p. S = ||a|| ||b|| = h, not sum |a_i b_i|: the inputs "
      "carry absolute (not relative) errors.";
  add(R::norm_f32, {.quantity = "||PE(p)||^2 of a fast row vs floor(d/2)",
     .dtype = "f32",
     .regime = "exact, emulated",
     .domain = all + "; emulated f64 output measured in ulp_f32",
     .metric = {MetricKind::scaled, DType::f32, 0.0, "err_S (S = floor(d/2))"},
     .bound = dot32,
     .why = dot_why + " E = E32 = 2^-25 + E64 (emulated: 2^-25 + eps_sc < E32): sqrt2 + 2^-26."});
  add(R::norm_f64, {.quantity = "||PE(p)||^2 of a fast row vs floor(d/2)",
     .dtype = "f64",
     .regime = "exact",
     .domain = all,
     .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = floor(d/2))"},
     .bound = dot64,
     .why = dot_why + " E = E64 = 4.51 * 2^-53: 12.8."});
  add(R::dot_f32, {.quantity = "PE(p).PE(p+k) of fast rows vs sum_i cos(k w_i)",
     .dtype = "f32",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40",
     .metric = {MetricKind::scaled, DType::f32, 0.0, "err_S (S = floor(d/2))"},
     .bound = dot32,
     .why = dot_why + " E = E32: sqrt2 + 2^-26."});
  add(R::dot_f64, {.quantity = "PE(p).PE(p+k) of fast rows vs sum_i cos(k w_i)",
     .dtype = "f64",
     .regime = "exact",
     .domain = "|p|, |p+k| <= 2^40",
     .metric = {MetricKind::scaled, DType::f64, 0.0, "err_S (S = floor(d/2))"},
     .bound = dot64,
     .why = dot_why + " E = E64: 12.8."});
  const std::string gram_why =
      "Entry (i, j) of cblas ?syrk on a block of fast rows vs the oracle's sum_k cos((j-i) w_k): the rows' "
      "errors contribute h (2 sqrt2 E + 2 E^2) as for the dot product, and the d-term sum in any order "
      "(syrk's blocking is unspecified) gamma_d sum |a_i b_i| <= gamma_d h (1 + sqrt2 E)^2, gamma_d = d u / (1 - d u). "
      "The metric divides |G - r| by that sum (gram_error_scale), so the bound is 1 for every d.";
  add(R::gram_f32, {.quantity = "Gram matrix PE PE^T (cblas ssyrk) vs closed form",
     .dtype = "f32",
     .regime = "exact",
     .domain = "rows <= 64 consecutive positions, |p| <= 2^40, dim <= 8192",
     .metric = {MetricKind::ratio, DType::f32, 0.0, "|G - r| / gram_error_scale(f32, d)"},
     .bound = 1.0,
     .why = gram_why + " u = 2^-24, E = E32."});
  add(R::gram_f64, {.quantity = "Gram matrix PE PE^T (cblas dsyrk) vs closed form",
     .dtype = "f64",
     .regime = "exact",
     .domain = "rows <= 64 consecutive positions, |p| <= 2^40, dim <= 8192",
     .metric = {MetricKind::ratio, DType::f64, 0.0, "|G - r| / gram_error_scale(f64, d)"},
     .bound = 1.0,
     .why = gram_why + " u = 2^-53, E = E64."});
  add(R::gram_symmetry, {.quantity = "G[i][j] - G[j][i] of gram_matrix",
     .dtype = "f32, f64",
     .regime = "exact",
     .domain = "every block",
     .metric = {MetricKind::bitwise, DType::f64, 1.0, "bit-identical: G[i][j] = G[j][i]"},
     .bound = 0.0,
     .why = "Exact claim: syrk computes one triangle and gram_matrix mirrors it."});

  add(R::distinct_margin, {.quantity = "2 sqrt(d) E / min_{p != q < N} ||PE(p) - PE(q)|| (rounding cannot merge two rows)",
     .dtype = "f32, f64",
     .regime = "exact",
     .domain = "N = 2^16 positions from first_position, presets at d in {4, 8, 64}",
     .metric = {MetricKind::value, DType::f64, 1.0, "2 sqrt(d) E_dtype / measured min distance"},
     .bound = 1.0,
     .why = "||PE(p) - PE(q)||^2 = 2 sum_i (1 - cos((q-p) w_i)) depends on k = q - p only; each fast row is "
               "within sqrt(d) E of its true row, so fast rows are distinct whenever the true distance exceeds "
               "2 sqrt(d) E. The minimum over k < N is measured on the fast rows (row 0 vs row k)."});
}

// Laws on the oracle; bitwise reproducibility.
void identity_and_reproducibility_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string& all = kAllDomain;
  add(R::identity_oracle, {.quantity = "laws checked on the oracle at 256 bits",
     .dtype = "mp",
     .regime = "exact, emulated",
     .domain = "|p|, |k| <= 2^41, dim <= 8192",
     .metric = {MetricKind::absolute, DType::f64, 1.0, "absolute"},
     .bound = std::ldexp(1.0, -200),
     .why = "The oracle rounds each entry once at 256 bits after forming angles at >= 336 bits (reference/ "
               "header): entries within 2^-256; sums of <= 8192 products of such entries stay below 2^-240. "
               "2^-200 leaves room and still exposes any real discrepancy (a wrong law differs by >> 2^-100)."});
  add(R::table_reproducible,
      {.quantity = "a position's row in one call vs the same position in another call (table, rows, one-shot, plan, "
                   "thread count, split of the range)",
       .dtype = "f32, f64",
       .regime = "exact, emulated",
       .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bit-identical to the row of the reference call"},
       .bound = 0.0,
       .why = "Exact claim. Anchors sit at multiples of B (a function of h only), so a row is one complex multiply of "
              "the same anchor and J values whatever range, list or split contains it; emulated rows depend on p "
              "alone; work is split at block boundaries, so the thread count decides only who computes a block."});
}

// What `posenc check` holds a user's numbers to.
void check_rows(Rows& r) {
  const auto add = row_adder(r);
  const std::string check_why =
      "A table whose entries are the exact values rounded once to the type has |y - r| <= ulp(r)/2 <= ulp(1)/4 "
      "(|r| < 1; r = +-1 is exact), i.e. err_S <= 0.25. The bound 0.5 (|y - r| <= ulp(1)/2 = 2^-p) leaves "
      "another quarter ulp(1) for the arithmetic before that rounding (e.g. a float64 angle p w carries "
      "~p w 2^-53), and is still tight enough that an entry one unit in the last place off at |r| >= 1/2 "
      "(err_S >= 0.5 + the rounding error it replaced, > 0.5 unless the true value is a tie) is refused. "
      "posenc's own outputs meet 0.25 + 2^-26.8 (f32) and 2.25 (f64 in ulp_f64: its f64 output is not "
      "correctly rounded, see table.exact.f64.scaled), so posenc's f64 tables are held to ";
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    const std::string ts(to_string(t));
    add(sinusoidal::check_exact_row(t),
        {.quantity = "a user's table entry (posenc check, exact regime)",
         .dtype = ts,
         .regime = "exact",
         .domain = "every spec and position posenc accepts",
         .metric = {MetricKind::scaled, t, 1.0, "err_S (S = 1), ulp_" + ts},
         .bound = t == DType::f64 ? kE64 / kUlp64 : 0.5,
         .why = t == DType::f64
                    ? check_why + "2.25 ulp_f64(1) (the bound of table.exact.f64.scaled) rather than 0.5: a "
                                  "float64 table is checked against what double arithmetic with an exactly "
                                  "formed angle achieves."
                    : check_why + "the same 0.5."});
  }
  add(R::check_envelope,
      {.quantity = "a user's emulated table entry vs posenc's emulation (posenc check, emulated regime)",
       .dtype = "f32 (any output type holding float32 numbers)",
       .regime = "emulated",
       .domain = "every rule (paper: PyTorch exp or pow form), |p| <= 2^40",
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|y - e| / E(p, k), E the envelope of the entry"},
       .bound = 1.0,
       .why = "posenc's emulation takes every float32 step correctly rounded; real libms do not for exp and "
              "sin/cos. With allowances A_exp (ulps of a float32 exp result from the correctly rounded one; "
              "default 2: numpy's float32 exp is 1-2 ulp off in ~40% of t2t's frequencies) and A_trig (default 2, "
              "glibc sinf/cosf are within 1 ulp, vectorised float32 sin/cos of Eigen/torch within ~2): the "
              "frequency is off by dw <= A_w ulp32(w) (A_w = A_exp for an exp; the pow form's reciprocal of a pow "
              "A_exp ulps off is 2 A_exp + 1 ulps off, an ulp halving where the reciprocal crosses a binade, plus "
              "its own rounding; and A_w becomes 2 A_w + 1 when min_timescale != 1 multiplies afterwards); the float32 angle RN32(p w') then differs from RN32(p w) by "
              "dt <= p dw + ulp32(|t| + p dw) (two roundings of at most half an ulp each); sin/cos differ by at "
              "most dt, plus A_trig ulp of the real implementation and one ulp for the two correct roundings it "
              "is compared through: E = dt + (A_trig + 1) ulp32(min(1, |e| + dt)). Products, divisions and "
              "conversions are IEEE operations, correctly rounded in every implementation, and get no allowance. "
              "E is computed per entry by reference::emulation_envelope; a ratio <= 1 means 'within the "
              "envelope', 0 means bit-identical."});
}

Rows make_rows() {
  Rows r;
  frequency_and_table_rows(r);
  shift_rows(r);
  norm_dot_gram_rows(r);
  identity_and_reproducibility_rows(r);
  check_rows(r);
  return r;
}

const BudgetRegistration<SinusoidalRow> kRegistration(make_rows);

}  // namespace
}  // namespace sinusoidal_rows

namespace sinusoidal {
using namespace sinusoidal_rows;

double table_entry_abs_bound(DType t) { return t == DType::f32 ? kE32 : kE64; }

double gram_error_scale(DType t, std::size_t dim) {
  const double E = table_entry_abs_bound(t);
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double h = static_cast<double>(dim / 2);
  const double n = static_cast<double>(dim);
  const double gamma = n * u / (1 - n * u);
  return h * (2 * kSqrt2 * E + 2 * E * E) + gamma * h * (1 + kSqrt2 * E) * (1 + kSqrt2 * E);
}

SinusoidalRow scaled_row(bool emulated, DType t) {
  if (emulated) return t == DType::f32 ? R::table_emulated_f32_scaled : R::table_emulated_f64_scaled;
  return t == DType::f32 ? R::table_exact_f32_scaled : R::table_exact_f64_scaled;
}

SinusoidalRow kernel_row(bool emulated, DType t) {
  if (emulated) return t == DType::f32 ? R::table_emulated_f32_kernel : R::table_emulated_f64_kernel;
  return R::table_exact_f32_kernel;
}

SinusoidalRow check_exact_row(DType t) {
  return row_of_dtype(t, R::check_exact_f16, R::check_exact_bf16, R::check_exact_f32, R::check_exact_f64);
}

}  // namespace sinusoidal
}  // namespace posenc::verify
