// The T5 rows of THE budget table (verify/budget.hpp). The buckets are integers and the bias values
// are table entries, so every row but the scores' is an identity: the fast path must give the oracle's integer or
// the table's number exactly.
//
// The algorithm analysed (schemes/t5/fast.cpp): per plan, the first distance of every bucket of a side (thresholds),
// found by binary search of the regime's level function L(a), which is non-decreasing in a:
//  * exact: L(a) = floor(v), v = ln(a/me) / ln(md/me) (n - me) in binary128 (two logq within 2^-112 relative, a
//    quotient and a product: |v~ - v| <= 2^-100 for |v| <= 2^15); where v~ lies within 2^-80 of an integer t the
//    comparison a^(n-me) me^t >= md^t me^(n-me) is made in GMP integers, so floor(v) is exact everywhere;
//  * hf: IEEE float32 division and product (lib/ has no contraction), RN32(ln x) through core::rn32_log (double
//    log rounded unless within 2^-48 relative of a float32 boundary, binary128 then), truncation.
// A bucket is then me + the number of thresholds <= a: the same integer as L(a) evaluated directly.
#include "schemes/t5/budget.hpp"

#include <string>
#include <utility>
#include <vector>

#include "verify/bias_budget.hpp"


namespace posenc::verify {
namespace t5_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = T5Row;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "num_buckets 2 .. 65536 (bidirectional >= 4), max_distance > max_exact up to 2^31 - 1, "
                          "|r| < 2^31, both directions";
  add(R::bucket_exact,
      {.quantity = "bucket of the relative position r (exact regime)", .dtype = "int", .regime = "exact",
       .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "floor(v) decided exactly: binary128 away from integers (error <= 2^-100 against a margin of 2^-80), "
              "an exact integer comparison near them (GMP); the oracle decides it independently in exact arithmetic."});
  add(R::bucket_hf,
      {.quantity = "bucket of the relative position r (HF's float32 steps)", .dtype = "int", .regime = "hf",
       .domain = all, .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"},
       .bound = 0.0,
       .why = "every float32 step correctly rounded in both the fast path (IEEE float ops, rn32_log) and the oracle "
              "(MPFR at 24 bits), then the same truncation: the same integer unless ln x lies within 2^-108 "
              "relative of a float32 midpoint (the oracle's Ziv loop would then disagree)." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::bias_identity,
      {.quantity = "bias entry = table[bucket][head] rounded once to the output type; masked entries -inf",
       .dtype = "f32, f64", .regime = "exact, hf", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"},
       .bound = 0.0,
       .why = "no arithmetic: the output holds the table's value (a double) converted once to the output type."});
  for (DType t : {DType::f32, DType::f64})
    add(t == DType::f32 ? R::scores_f32 : R::scores_f64,
        fused_scores_row(t, "T5Plan", "exact, hf", all, "b~ the plan's bias entry (the table's value in that type)"));
  add(R::check_exact,
      {.quantity = "a user's T5 bias entry vs table[exact bucket][head] (posenc check t5, exact regime)",
       .dtype = "f16, bf16, f32, f64", .regime = "exact", .domain = all,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|y - b| / (half an ulp of b in the input's type)"},
       .bound = 1.0,
       .why = "the entry is the table's value rounded once to the type the user stored: within half an ulp of it "
              "(0 when the table is already in that type)."});
  add(R::check_envelope,
      {.quantity = "a user's T5 bias entry vs posenc's hf emulation (posenc check t5, hf regime)",
       .dtype = "f16, bf16, f32, f64", .regime = "hf", .domain = all,
       .metric = {MetricKind::ratio, DType::f64, 0.0, "|y - e| / E"},
       .bound = 1.0,
       .why = "a real torch float32 log may be A ulps from correctly rounded (default 2): then l moves by <= A "
              "ulp32(l), y by <= A ulp32(l) / den32 + a flip of its rounding, z by that times (n - me) plus a flip: "
              "when z lies within that distance of an integer the real run may take the neighbouring bucket, so E = "
              "|table[b'][h] - table[b][h]| + half an ulp of the type there (b' the neighbour), and half an ulp "
              "elsewhere (the stored type's rounding)."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace t5_rows
}  // namespace posenc::verify
