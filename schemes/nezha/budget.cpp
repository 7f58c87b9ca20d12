// The NEZHA rows of THE budget table (verify/budget.hpp). The table is the sinusoidal plan's paper table
// at positions 0..2K (schemes/nezha/fast.cpp), so its bounds are the sinusoidal kernel's (schemes/sinusoidal/
// budget.cpp); the indices are integers; scores and outputs are the Shaw plan's, under the Shaw rows.
//
// HF's table vs the exact one (row nezha.table.hf_vs_exact). T_hf = RN32(sin a32) (or cos), a32 = RN32(r w32), w32
// HF's float32 frequency; T_exact = sin(r w) with the real w. sin and cos are 1-Lipschitz, so
//   |T_hf - T_exact| <= |RN32(sin a32) - sin a32| + |a32 - r w32| + r |w32 - w|
//                    <= ulp32(y)/2 + ulp32(a32)/2 + r |w32 - w|
// (|RN(x) - x| <= ulp(RN(x))/2 for normal results; y = T_hf; below 2^-126 ulp32 is 2^-149). w is the oracle's real
// frequency rounded to double (relative error 2^-53): r |w32 - w| is enlarged by 2^-50 r w, and the sum by 1e-12
// relative. E = (ulp32(y)/2 + ulp32(a32)/2 + r |w32 - w| + 2^-50 r w)(1 + 1e-12): most of it, at large r, is the
// frequency's float32 rounding r |w32 - w| — the part a user porting NEZHA inherits from HF.
#include "schemes/nezha/budget.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace nezha_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = NezhaRow;

double ulp32(double x) {
  const double a = std::fabs(x);
  if (a < std::ldexp(1.0, -126)) return std::ldexp(1.0, -149);
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "max_relative_position 1 .. 2^20 (rows r = 0..2K), even depth up to 16384";
  add(R::index,
      {.quantity = "shifted index r = clip(j - q_i, -K, K) + K", .dtype = "int", .regime = "exact, hf",
       .domain = all + ", key lengths up to 2^31 - 1",
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "integer arithmetic in both the fast path (Shaw's clip with sign key_minus_query) and the oracle (which "
              "recomputes each index from NEZHA's definition): the same integer."});
  const double e64 = 4.51 * std::ldexp(1.0, -53);  // the sinusoidal kernel's double entry (sinusoidal.table.exact.f64)
  add(R::table_exact_f32,
      {.quantity = "table entry T[r][c] = sin/cos(r 10000^(-2t/depth)) (NezhaPlan::table, float)", .dtype = "f32",
       .regime = "exact", .domain = all,
       .metric = {MetricKind::scaled, DType::f32, 1.0, "err_S (S = 1)"},
       .bound = (std::ldexp(1.0, -25) + e64 + std::ldexp(1.0, -90)) / std::ldexp(1.0, -23),
       .why = "the sinusoidal kernel's double entry (within 4.51 2^-53 of the real value: sinusoidal.table.exact.f64) "
              "rounded once to float (<= 2^-25 for |y| < 1), plus the oracle's own 2^-(bits+70): (0.25 + 2^-26.8) "
              "ulp_f32(1)."});
  add(R::table_exact_f64,
      {.quantity = "table entry T[r][c] (NezhaPlan::table, double)", .dtype = "f64", .regime = "exact",
       .domain = all, .metric = {MetricKind::scaled, DType::f64, 1.0, "err_S (S = 1)"},
       .bound = (e64 + std::ldexp(1.0, -90)) / std::ldexp(1.0, -52),
       .why = "the sinusoidal kernel's entry: fma(s_a, c_j, RN(c_a s_j)) from anchor and J values each within 2^-53 "
              "+ 2^-57, 4.51 2^-53 = 2.25 ulp_f64(1) (sinusoidal.table.exact.f64), plus the oracle's 2^-(bits+70)."});
  add(R::table_hf,
      {.quantity = "HF table entry RN32(sin/cos(RN32(r w32))) (NezhaPlan::table, float or double output)",
       .dtype = "f32, f64", .regime = "hf", .domain = all,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "ulp_f32 distance from the oracle's float32 number"},
       .bound = 1.0,
       .why = "the float32 steps (frequency, angle) are replayed with IEEE float arithmetic and a binary128 exp rounded "
              "once: the same float32 numbers as the oracle's. sin/cos of the float32 angle are evaluated in double "
              "(relative error <= 2^-53, lib/src/core/trig.hpp) and rounded once to float: the correctly rounded "
              "float unless the double lies within 2^-53 relative of a float midpoint, where the neighbour may come "
              "out. So 0 (bit-identical) except in such a case, and never more than 1 ulp; a double output holds the "
              "float exactly." +
              std::string(kCorrectlyRoundedSteps)});
  add(R::hf_vs_exact,
      {.quantity = "HF's float32 table vs the exact table: |T_hf - T_exact| / E(r, t)", .dtype = "f32",
       .regime = "hf vs exact", .domain = all,
       .metric = {MetricKind::ratio, DType::f32, 0.0, "|T_hf - T_exact| / E"},
       .bound = 1.0,
       .why = "E = (ulp32(T_hf)/2 + ulp32(a32)/2 + r |w32 - w| + 2^-50 r w)(1 + 1e-12): the final rounding, the "
              "angle's rounding and the float32 frequency's error carried by r, sin and cos being 1-Lipschitz "
              "(derivation: schemes/nezha/budget.cpp). The ratio shows how much of E the two tables use."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace nezha_rows

double nezha_hf_envelope(std::int64_t r, double w, double w32, double a32, double y) {
  const double rr = static_cast<double>(r);
  return (nezha_rows::ulp32(y) / 2 + nezha_rows::ulp32(a32) / 2 + rr * std::fabs(w32 - w) + std::ldexp(rr * w, -50)) * (1 + 1e-12);
}

}  // namespace posenc::verify
