// THE budget table. Notation: u = 2^-53; ulp_f64(1) = 2^-52, ulp_f32(1) = 2^-23.
//
// The algorithm analysed (lib/src/sinusoidal.cpp, lib/src/detail/trig.hpp):
//  * omega_k = min_timescale * base^(-e_k) in __float128 (powq), split into double-double hi + lo:
//    relative error <= 2^-105 (powq ~ a few ulp of 113 bits, the lo split 2^-106).
//  * sincos_dd(theta_hi + theta_lo): theta = p * omega formed by an exact two-product plus p*lo
//    (rounding <= 2^-62 for |p omega| <= 2^44); reduction by a triple-double pi/2 (absolute
//    <= 2^-60); Taylor polynomials whose final addition rounds once (<= 0.6 ulp_f64 of the result).
//    The angle error |p| omega 2^-105 <= 2^-61. So each sin/cos is within
//        eps_sc = 2^-53 + 2^-57   (absolute, results in [-1, 1]).
//  * exact-regime table entry: anchor (s_a, c_a) at p_a and J table (s_j, c_j), j < B, each within
//    eps_sc; entry = fma(s_a, c_j, RN(c_a s_j)). The first-order error of the complex product is
//    |d_s c_j + d_c s_j| <= eps_sc (|c_j| + |s_j|) <= sqrt2 eps_sc for each factor, so with the
//    rounding of RN(c_a s_j) (<= 2^-54, |c_a s_j| < 1) and of the fma (<= 2^-53: <= 2^-54 when the
//    result is below 1; a result R >= 1 rounds either to 1, which is closer to r <= 1, or up by <= 2^-53)
//        E64 = 2 sqrt2 eps_sc + 2^-54 + 2^-53 ~= 4.51 * 2^-53 = 2.25 ulp_f64(1).
//    Float output rounds that double once more: <= 2^-25 for |y| < 1 (a double >= 1 rounds to 1.0,
//    which is closer), so E32 = 2^-25 + E64.
#include "budget.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace posenc::test {
namespace {

const double kSqrt2 = std::sqrt(2.0);
const double kEpsSc = std::ldexp(1.0, -53) + std::ldexp(1.0, -57);
const double kE64 = 2 * kSqrt2 * kEpsSc + std::ldexp(1.0, -54) + std::ldexp(1.0, -53);
const double kE32 = std::ldexp(1.0, -25) + kE64;
// sin/cos of a float32 angle evaluated in double (emulated regime): 0.6 ulp_f64 relative to the
// result plus the reduction's absolute 2^-60 (theta_lo = 0, so no angle-formation error).
const double kEmuRel = 1.2 * std::ldexp(1.0, -53);
const double kEmuAbs = std::ldexp(1.0, -59);
const double kUlp64 = std::ldexp(1.0, -52), kUlp32 = std::ldexp(1.0, -23);

std::vector<BudgetRow> make_rows() {
  std::vector<BudgetRow> r;
  const std::string all = "|p| <= max_abs_position(spec) (2^40 for every preset), every preset and generated spec";

  r.push_back({"sinusoidal.frequency.exact.f64", "sinusoidal", "omega_k as returned by sinusoidal_frequencies",
               "f64", "exact", "every rule, base in [2, 1e7], dim <= 8192", MetricKind::kernel, "kernel (ulp_f64 of omega_k)",
               0.5 + std::ldexp(1.0, -50),
               "omega_k is formed in binary128 (powq, relative error <= 2^-108 even for |e_k ln base| <= 16) and "
               "rounded once to double: correctly rounded unless omega_k lies within 2^-108 relative of a "
               "midpoint, so err <= 0.5 + 2 * 2^-108 / 2^-53 < 0.5 + 2^-50."});
  r.push_back({"sinusoidal.frequency.emulated.f32", "sinusoidal", "float32 omega_k of the emulated implementation",
               "f32", "emulated", "tensor2tensor and fairseq rules, every base and dim", MetricKind::absolute,
               "absolute |y - r| (r = oracle's emulated float32 frequency)", 0.0,
               "Both the fast path and the oracle replay the same float32 steps (RN32 products, correctly rounded "
               "float32 exp); exp in binary128 rounded once equals RN32(exp) unless exp lies within 2^-108 of a "
               "float32 midpoint. Equality is the claim."});

  r.push_back({"sinusoidal.table.exact.f64.scaled", "sinusoidal", "table entry", "f64", "exact", all,
               MetricKind::scaled, "err_S (S = 1)", kE64 / kUlp64,
               "Entry = fma(s_a, c_j, RN(c_a s_j)) from anchor and J values each within eps_sc = 2^-53 + 2^-57: "
               "2 sqrt2 eps_sc + 2^-54 (product) + 2^-53 (fma; <= 2^-54 below 1) = 4.51 * 2^-53 = 2.25 ulp_f64(1). "
               "No term grows with p: the angle is formed in double-double."});
  r.push_back({"sinusoidal.table.exact.f32.scaled", "sinusoidal", "table entry", "f32", "exact", all,
               MetricKind::scaled, "err_S (S = 1)", kE32 / kUlp32,
               "The double entry (within E64 = 2.25 ulp_f64(1)) rounded once to float: <= 2^-25 for |y| < 1 "
               "(a double >= 1 rounds to 1.0, closer to r), so |y - r| <= 2^-25 + E64 = (0.25 + 2^-26.8) ulp_f32(1)."});
  r.push_back({"sinusoidal.table.exact.f32.kernel", "sinusoidal", "table entry, away from zeros", "f32", "exact",
               all + ", entries with |r| >= 2^-16", MetricKind::kernel, "kernel (ulp_f32 of r)",
               0.5 + 2 * kE64 / std::ldexp(1.0, -16 - 23),
               "y = RN32(yd) with |yd - r| <= E64 (absolute): |y - r| <= ulp(r)/2 + 2 E64, and "
               "ulp_f32(r) >= 2^-39 for |r| >= 2^-16, so err <= 0.5 + 2 * 4.51 * 2^-53 / 2^-39 = 0.5 + 5.5e-4: "
               "nearly correctly rounded (wrong only within 5.5e-4 ulp of a midpoint)."});

  const double emu_s = (std::ldexp(1.0, -25) + kEpsSc) / kUlp32;
  const double emu_k = 0.5 + 2 * (kEmuRel * std::ldexp(1.0, 24) + kEmuAbs / std::ldexp(1.0, -20 - 23));
  const std::string emu_dom = "tensor2tensor and fairseq rules, |p| <= 2^40";
  r.push_back({"sinusoidal.table.emulated.f32.scaled", "sinusoidal", "table entry vs sin/cos of the emulated float32 angle",
               "f32", "emulated", emu_dom, MetricKind::scaled, "err_S (S = 1), r = sin/cos(angle32) before the final RN32",
               emu_s,
               "angle32 = RN32(RN32(p) omega32) is replayed exactly; sin/cos(angle32) in double is within eps_sc "
               "(absolute) and rounded once to float (<= 2^-25): |y - r| <= 2^-25 + eps_sc = (0.25 + 2^-30) ulp_f32(1)."});
  r.push_back({"sinusoidal.table.emulated.f64.scaled", "sinusoidal",
               "table entry vs sin/cos of the emulated float32 angle (double output holds the float32 number)", "f64",
               "emulated", emu_dom, MetricKind::scaled, "err_S (S = 1) in ulp_f32 units", emu_s,
               "The double output is the same float32 number widened exactly; analysis as the f32 row."});
  r.push_back({"sinusoidal.table.emulated.f32.kernel", "sinusoidal",
               "table entry vs sin/cos of the emulated float32 angle, away from zeros", "f32", "emulated",
               emu_dom + ", entries with |r| >= 2^-20", MetricKind::kernel, "kernel (ulp_f32 of r), r before the final RN32",
               emu_k,
               "sin/cos(angle32) in double errs by <= 0.6 ulp_f64 relative (1.2 * 2^-53 |r|) plus the reduction's "
               "absolute 2^-60 (2^-59 allowed); y = RN32 of it, so err <= 0.5 + 2 (1.2 * 2^-53 * 2^24 + 2^-59 / "
               "ulp_f32(2^-20)) = 0.5 + 2^-15 + 2^-27.7. The reduction term is absolute: near zeros of sin/cos "
               "(angles within 2^-30 of a multiple of pi/2, possible for float32 angles up to 2^44) it could reach "
               "2^-6 ulp, which is why this row is limited to |r| >= 2^-20 (the 2^-28 of the lib header "
               "ignores it)."});
  r.push_back({"sinusoidal.table.emulated.f64.kernel", "sinusoidal",
               "table entry vs sin/cos of the emulated float32 angle, away from zeros (double output)", "f64",
               "emulated", emu_dom + ", entries with |r| >= 2^-20", MetricKind::kernel,
               "kernel in ulp_f32 of r, r before the final RN32", emu_k,
               "The double output is the float32 number widened exactly; analysis as the f32 row."});

  r.push_back({"sinusoidal.table.range", "sinusoidal", "every entry lies in [-1, 1]", "f32, f64", "exact, emulated", all,
               MetricKind::absolute, "max(|y| - 1, 0)", 0.0,
               "Exact claim. f32: RN32 of a double <= 1 + 2^-51 is <= 1. f64: the fma can return 1 + 2^-52 only "
               "if the complex product's error (<= 3.5 * 2^-53 before the last rounding) pushes a value within "
               "2^-51 of 1 above 1 + 2^-53; the claim asserts it never does (a failure means lib must clamp)."});
  r.push_back({"sinusoidal.table.exact_values", "sinusoidal",
               "PE(0) (sin slots 0, cos slots 1), zero-pad column, padding row, float32-ness of emulated f64 output",
               "f32, f64", "exact, emulated", "every spec", MetricKind::absolute, "absolute |y - r|", 0.0,
               "Exact claim: theta = 0 reduces to x = 0, where the polynomials return exactly 0 and 1 and the complex "
               "product with J[0] = (0, 1) is exact; zero columns and rows are stored, not computed."});

  r.push_back({"sinusoidal.shift.operator.f64", "sinusoidal", "T(k) entries cos(k w_i), sin(k w_i) (ShiftOperator, dense f64)",
               "f64", "exact", "|k| <= 2^41", MetricKind::scaled, "err_S (S = 1)", kEpsSc / kUlp64,
               "Computed directly by sincos_dd of the double-double angle k omega_i: eps_sc = 2^-53 + 2^-57 = "
               "0.53 ulp_f64(1)."});
  r.push_back({"sinusoidal.shift.dense.f32", "sinusoidal", "dense T(k) entries (float)", "f32", "exact", "|k| <= 2^41",
               MetricKind::scaled, "err_S (S = 1)", (std::ldexp(1.0, -25) + kEpsSc) / kUlp32,
               "The double entry (eps_sc) rounded once to float (2^-25): (0.25 + 2^-29.9) ulp_f32(1)."});
  const double apply64 = (kSqrt2 * (kEpsSc + kE64) + kUlp64) / kUlp64;
  const double apply32 = (kSqrt2 * ((std::ldexp(1.0, -25) + kEpsSc) + kE32) + kUlp32) / kUlp32;
  r.push_back({"sinusoidal.shift.apply.f64", "sinusoidal",
               "T(k) PE(p) by apply_shift (cblas drot or dgemm) vs oracle PE(p+k)", "f64", "exact",
               "|p|, |p+k| <= 2^40, rows from the fast table", MetricKind::scaled, "err_S (S = 1)", apply64,
               "out = c x + s y with c, s within eps_sc and x, y within E64 (table): sqrt2 eps_sc + sqrt2 E64 "
               "(first order, |(x,y)| = |(c,s)| = 1) plus <= 3 roundings (two products < 1: 2^-54 each; the sum "
               "2^-53) = 2^-52; gemm adds only exact zeros (block-diagonal T). S = 1 rather than |x c| + |y s| "
               "because the inputs are table entries with absolute errors."});
  r.push_back({"sinusoidal.shift.apply.f32", "sinusoidal",
               "T(k) PE(p) by apply_shift (cblas srot or sgemm) vs oracle PE(p+k)", "f32", "exact",
               "|p|, |p+k| <= 2^40, rows from the fast table", MetricKind::scaled, "err_S (S = 1)", apply32,
               "c, s rounded to float (2^-25 + eps_sc), x, y float table entries (E32): sqrt2 (2^-25 + eps_sc + E32) "
               "+ float roundings 2^-25 + 2^-25 + 2^-24 = 2^-23, i.e. sqrt2/2 + 1 = 1.71 ulp_f32(1)."});
  r.push_back({"sinusoidal.shift.differential.f64", "sinusoidal",
               "apply_shift(T(k), rows p..) vs sinusoidal_table(p+k..) (BLAS path vs direct path)", "f64", "exact",
               "|p|, |p+k| <= 2^40", MetricKind::scaled, "err_S (S = 1), r = the direct row", apply64 + kE64 / kUlp64,
               "Both are within their bound of the same real number: shift.apply.f64 + table.exact.f64.scaled."});
  r.push_back({"sinusoidal.shift.differential.f32", "sinusoidal",
               "apply_shift(T(k), rows p..) vs sinusoidal_table(p+k..) (BLAS path vs direct path)", "f32", "exact",
               "|p|, |p+k| <= 2^40", MetricKind::scaled, "err_S (S = 1), r = the direct row", apply32 + kE32 / kUlp32,
               "Both are within their bound of the same real number: shift.apply.f32 + table.exact.f32.scaled."});
  r.push_back({"sinusoidal.shift.compose.f64", "sinusoidal", "T(a) T(b) (2x2 products of fast entries in double) vs oracle T(a+b)",
               "f64", "exact", "|a|, |b|, |a+b| <= 2^40", MetricKind::scaled, "err_S (S = 1)",
               (2 * kSqrt2 * kEpsSc + kUlp64) / kUlp64,
               "cos = ca cb - sa sb: first order eps_sc (|cb| + |sb|) + eps_sc (|ca| + |sa|) <= 2 sqrt2 eps_sc, "
               "plus <= 3 roundings (2^-54 + 2^-54 + 2^-53): 2 sqrt2 * 0.53 + 1 = 2.5 ulp_f64(1)."});
  r.push_back({"sinusoidal.shift.orthogonality.f64", "sinusoidal", "|cos^2 + sin^2 - 1| of fast T(k) entries (exact arithmetic)",
               "f64", "exact", "|k| <= 2^41", MetricKind::scaled, "err_S (S = 1)",
               (2 * kSqrt2 * kEpsSc + 2 * kEpsSc * kEpsSc) / kUlp64,
               "2 (|c| + |s|) eps_sc + 2 eps_sc^2 <= 2 sqrt2 eps_sc = 1.5 ulp_f64(1); off-diagonal entries of "
               "T T^T cancel exactly (c(-s) + s c)."});
  r.push_back({"sinusoidal.shift.orthogonality.f32", "sinusoidal", "|cos^2 + sin^2 - 1| of dense float T(k) (exact arithmetic)",
               "f32", "exact", "|k| <= 2^41", MetricKind::scaled, "err_S (S = 1)",
               (2 * kSqrt2 * (std::ldexp(1.0, -25) + kEpsSc) + 2 * std::pow(std::ldexp(1.0, -25) + kEpsSc, 2)) / kUlp32,
               "Entries within 2^-25 + eps_sc: 2 sqrt2 (2^-25 + eps_sc) = 0.71 ulp_f32(1)."});

  const double dot32 = (2 * kSqrt2 * kE32 + 2 * kE32 * kE32) * std::ldexp(1.0, 24);
  const double dot64 = (2 * kSqrt2 * kE64 + 2 * kE64 * kE64) * std::ldexp(1.0, 53);
  const std::string dot_why =
      "Sum formed exactly (MPFR) from the fast rows, so only the entries' errors count: per pair "
      "|a_s db_s + a_c db_c| + |b_s da_s + b_c da_c| + 2 E^2 <= 2 sqrt2 E + 2 E^2, over h = floor(d/2) pairs; "
      "ulp(h) > h 2^-p, so err_S <= (2 sqrt2 E + 2 E^2) 2^p. S = ||a|| ||b|| = h, not sum |a_i b_i|: the inputs "
      "carry absolute (not relative) errors.";
  r.push_back({"sinusoidal.norm.f32", "sinusoidal", "||PE(p)||^2 of a fast row vs floor(d/2)", "f32",
               "exact, emulated", all + "; emulated f64 output measured in ulp_f32", MetricKind::scaled,
               "err_S (S = floor(d/2))", dot32, dot_why + " E = E32 = 2^-25 + E64 (emulated: 2^-25 + eps_sc < E32): sqrt2 + 2^-26."});
  r.push_back({"sinusoidal.norm.f64", "sinusoidal", "||PE(p)||^2 of a fast row vs floor(d/2)", "f64", "exact", all,
               MetricKind::scaled, "err_S (S = floor(d/2))", dot64, dot_why + " E = E64 = 4.51 * 2^-53: 12.8."});
  r.push_back({"sinusoidal.dot.f32", "sinusoidal", "PE(p).PE(p+k) of fast rows vs sum_i cos(k w_i)", "f32", "exact",
               "|p|, |p+k| <= 2^40", MetricKind::scaled, "err_S (S = floor(d/2))", dot32, dot_why + " E = E32: sqrt2 + 2^-26."});
  r.push_back({"sinusoidal.dot.f64", "sinusoidal", "PE(p).PE(p+k) of fast rows vs sum_i cos(k w_i)", "f64", "exact",
               "|p|, |p+k| <= 2^40", MetricKind::scaled, "err_S (S = floor(d/2))", dot64, dot_why + " E = E64: 12.8."});
  const std::string gram_why =
      "Entry (i, j) of cblas ?syrk on a block of fast rows vs the oracle's sum_k cos((j-i) w_k): the rows' "
      "errors contribute h (2 sqrt2 E + 2 E^2) as for the dot product, and the d-term sum in any order "
      "(syrk's blocking is unspecified) gamma_d sum |a_i b_i| <= gamma_d h (1 + sqrt2 E)^2, gamma_d = d u / (1 - d u). "
      "The metric divides |G - r| by that sum (gram_error_scale), so the bound is 1 for every d.";
  r.push_back({"sinusoidal.gram.f32", "sinusoidal", "Gram matrix PE PE^T (cblas ssyrk) vs closed form", "f32", "exact",
               "rows <= 64 consecutive positions, |p| <= 2^40, dim <= 8192", MetricKind::ratio,
               "|G - r| / gram_error_scale(f32, d)", 1.0, gram_why + " u = 2^-24, E = E32."});
  r.push_back({"sinusoidal.gram.f64", "sinusoidal", "Gram matrix PE PE^T (cblas dsyrk) vs closed form", "f64", "exact",
               "rows <= 64 consecutive positions, |p| <= 2^40, dim <= 8192", MetricKind::ratio,
               "|G - r| / gram_error_scale(f64, d)", 1.0, gram_why + " u = 2^-53, E = E64."});
  r.push_back({"sinusoidal.gram.symmetry", "sinusoidal", "G[i][j] - G[j][i] of gram_matrix", "f32, f64", "exact",
               "every block", MetricKind::absolute, "absolute", 0.0,
               "Exact claim: syrk computes one triangle and gram_matrix mirrors it."});

  r.push_back({"sinusoidal.distinct.margin", "sinusoidal",
               "2 sqrt(d) E / min_{p != q < N} ||PE(p) - PE(q)|| (rounding cannot merge two rows)", "f32, f64",
               "exact", "N = 2^16 positions from first_position, presets at d in {4, 8, 64}", MetricKind::ratio,
               "2 sqrt(d) E_dtype / measured min distance", 1.0,
               "||PE(p) - PE(q)||^2 = 2 sum_i (1 - cos((q-p) w_i)) depends on k = q - p only; each fast row is "
               "within sqrt(d) E of its true row, so fast rows are distinct whenever the true distance exceeds "
               "2 sqrt(d) E. The minimum over k < N is measured on the fast rows (row 0 vs row k)."});

  r.push_back({"sinusoidal.identity.oracle", "sinusoidal", "laws checked on the oracle at 256 bits", "mp", "exact, emulated",
               "|p|, |k| <= 2^41, dim <= 8192", MetricKind::absolute, "absolute", std::ldexp(1.0, -200),
               "The oracle rounds each entry once at 256 bits after forming angles at >= 336 bits (reference/ "
               "header): entries within 2^-256; sums of <= 8192 products of such entries stay below 2^-240. "
               "2^-200 leaves room and still exposes any real discrepancy (a wrong law differs by >> 2^-100)."});
  return r;
}

const std::vector<BudgetRow>& table() {
  static const std::vector<BudgetRow> rows = make_rows();
  return rows;
}

}  // namespace

std::span<const BudgetRow> budget_rows() { return table(); }

const BudgetRow& budget(std::string_view id) {
  for (const auto& row : table())
    if (row.id == id) return row;
  throw std::out_of_range("budget: no row with id '" + std::string(id) + "'");
}

std::string_view to_string(MetricKind k) {
  switch (k) {
    case MetricKind::kernel: return "kernel";
    case MetricKind::scaled: return "scaled";
    case MetricKind::absolute: return "absolute";
    case MetricKind::ratio: return "ratio";
  }
  return "?";
}

double table_entry_abs_bound(DType t) { return t == DType::f32 ? kE32 : kE64; }

double gram_error_scale(DType t, std::size_t dim) {
  const double E = table_entry_abs_bound(t);
  const double u = t == DType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  const double h = static_cast<double>(dim / 2);
  const double n = static_cast<double>(dim);
  const double gamma = n * u / (1 - n * u);
  return h * (2 * kSqrt2 * E + 2 * E * E) + gamma * h * (1 + kSqrt2 * E) * (1 + kSqrt2 * E);
}

}  // namespace posenc::test
