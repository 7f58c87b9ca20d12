// The DeBERTa rows of THE budget table (verify/budget.hpp). Buckets and indices are integers (exact);
// scores are sums of products, measured against the oracle's exact values as a ratio to an a-priori bound B computed
// per entry from the inputs' magnitudes (DESIGN.md §3).
//
// The algorithm analysed (schemes/deberta/fast.cpp, posenc/deberta.hpp):
//  * buckets, exact: ceil(v), v = ln(a/mid) / ln(M/mid) N, first in double (|v~ - v| < 2^-38 max(1, v): the
//    quotient a/mid rounded, two logs within 1 ulp, |ln x| >= ln(1 + 1/mid) >= 2^-15.1), taken where v~ is more
//    than 2^-30 max(1, v) from an integer; else in binary128 (two logq within 2^-112 relative: |v~ - v| <= 2^-100
//    max(1, v)), taken where more than 2^-80 from an integer; else the exact comparison a^N mid^t <= M^t mid^N in
//    GMP integers. So ceil(v) is exact everywhere (the integers stay below 2^24 bits for every spec the properties
//    and presets use);
//  * buckets, hf: IEEE float32 division and product (no contraction possible: no add follows a product), RN32(ln)
//    through core::rn32_log (double log unless within 2^-48 relative of a float32 boundary, then binary128), ceil, a
//    float32 add of mid;
//  * indices: integer clamps of the bucket; the Toeplitz rows are copies of one vector.
//  * scores: verify/bias_budget.hpp's gathered_scores_bound (P = scale Q K_r^T and G = scale K Q_r^T gathered,
//    one rounding of P + G, then the beta = 1 Q K^T gemm).
#include "schemes/deberta/budget.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "verify/bias_budget.hpp"


namespace posenc::verify {
namespace deberta_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = DebertaRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "position_buckets 2 .. 65536 or none, max_relative_positions > mid + 1, clamp or not, |rel| "
                          "< 2^31";
  add(R::bucket_exact,
      {.quantity = "log bucket b(rel) of the relative position i - j (exact regime)", .dtype = "int",
       .regime = "exact", .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "ceil(v) decided exactly: double away from integers (error < 2^-38 against a margin of 2^-30), "
              "binary128 closer (error <= 2^-100 against 2^-80), an exact integer comparison (GMP) at the integers "
              "themselves (a = M gives v = N exactly); the oracle decides it independently in exact arithmetic."});
  add(R::bucket_hf,
      {.quantity = "log bucket b(rel) of the relative position i - j (HF's float32 steps)", .dtype = "int",
       .regime = "hf", .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "every float32 step correctly rounded in both the fast path (IEEE float ops, rn32_log) and the oracle "
              "(MPFR at 24 bits), then the same ceil and float32 add: the same integer unless a log lies within "
              "2^-108 relative of a float32 midpoint (the oracle's Ziv loop would then disagree)." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::index,
      {.quantity = "relative-position matrix b(i - j) and c2p / p2c index c = clamp(b + span, 0, 2 span - 1)",
       .dtype = "int", .regime = "exact, hf", .domain = all + ", query and key lengths up to 2^30",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "integer clamps of the bucket (itself exact, rows above) in both the fast path and the oracle, which "
              "recomputes each entry from the definition at its (i, j): the same integer."});
  for (DType t : {DType::f32, DType::f64}) {
    const bool f32 = t == DType::f32;
    add(f32 ? R::scores_f32 : R::scores_f64,
        {.quantity = std::string("scale (<q, k> + [c2p] <q, K_r[c]> + [p2c] <k, Q_r[c]>) from DebertaPlan::scores (") +
                     (f32 ? "sgemm" : "dgemm") + "s: Q K_r^T, K Q_r^T, gathered rows, then Q K^T with beta = 1)",
         .dtype = f32 ? "f32" : "f64", .regime = "exact, hf", .domain = all + ", head_dim <= 256",
         .metric = {MetricKind::ratio, t, 0.0, "|score - exact| / B"},
         .bound = 1.0,
         .why = "two gemm sums of d products times alpha = RN(scale), one rounding of p + g, then the beta = 1 gemm: "
                "B = (gamma_{d+2} + u)(1 + u)|scale| sum|q k| + (gamma_{d+2} + gamma_{d+1} + 4u) 1.01 |scale| "
                "([c2p] sum|q K_r| + [p2c] sum|k Q_r|), times (1 + 1e-12) (derivation: verify/bias_budget.hpp "
                "gathered_scores_bound)."});
  }
  add(R::masked,
      {.quantity = "a score entry at a padded key (key_mask 0): -inf", .dtype = "f32, f64", .regime = "exact, hf",
       .domain = all, .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (-inf)"},
       .bound = 0.0, .why = "written as -inf after the gemm: -inf exactly."});
  add(R::check_exact,
      {.quantity = "a user's relative-position (or c2p index) matrix entry vs the exact bucket (posenc check deberta)",
       .dtype = "int (any npy integer or float type holding integers)", .regime = "exact", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (the integer)"},
       .bound = 0.0, .why = "buckets are integers: a right matrix holds exactly the oracle's integer at every entry."});
  add(R::check_envelope,
      {.quantity = "a user's relative-position (or c2p index) matrix entry vs posenc's hf emulation (posenc check "
                   "deberta, hf regime)",
       .dtype = "int (any npy integer or float type holding integers)", .regime = "hf", .domain = all,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|y - e| / E"},
       .bound = 1.0,
       .why = "a real torch float32 log may be A ulps from correctly rounded (default 2), in l = ln x and in den = "
              "ln(M/mid): then y = l / den moves by <= (A ulp32(l) + |y| A ulp32(den)) / den + a flip of its "
              "rounding, z = y N by that times N plus a flip: where z lies within that distance of an integer the "
              "real run may take the neighbouring bucket, so E = 1 there (the neighbour, one bucket away) and 0 "
              "elsewhere (the emulated integer exactly)."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace deberta_rows

double deberta_scores_bound(DType t, std::size_t d, double abs_scale, double qk, double rel) {
  return gathered_scores_bound(t, d, abs_scale, qk, rel);
}

std::pair<double, double> deberta_score_sums(const DebertaSpec& s, const DebertaWeights& w, std::size_t h,
                                             std::span<const double> q, std::span<const double> k, std::size_t c) {
  double qk = 0, rel = 0;
  const std::size_t d = s.head_dim, at = (h * deberta_table_rows(s) + c) * d;
  for (std::size_t x = 0; x < d; ++x) {
    qk += std::fabs(q[x] * k[x]);
    if (s.c2p) rel += std::fabs(q[x] * w.pos_key[at + x]);
    if (s.p2c) rel += std::fabs(k[x] * w.pos_query[at + x]);
  }
  const double slack = 1 + 1e-15 * static_cast<double>(2 * d + 2);
  return {qk * slack, rel * slack};
}

}  // namespace posenc::verify
