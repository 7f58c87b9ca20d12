// The TENER rows of THE budget table (verify/budget.hpp). The table is the sinusoidal plan's fairseq-rule
// table at the signed distances -L .. L - 1 (schemes/tener/fast.cpp), so its bounds are the sinusoidal kernel's
// (verify/relative_budget.hpp); indices and the shifts are integers and copies; the scores bound is the one the
// three sinusoid-relative schemes share (verify/relative_budget.hpp), with the key term among the terms and no
// projection (the table is each head's positional keys).
#include "schemes/tener/budget.hpp"

#include <string>
#include <utility>
#include <vector>

#include "verify/relative_budget.hpp"


namespace posenc::verify {
namespace tener_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = TenerRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string lengths = "1 <= L <= 2^30 - 1 (self-attention, Lq = Lk = L)";
  add(R::index,
      {.quantity = "table rows read by entry (i, j): L + j - i (query term, t = j - i) and L + i - j (key term)",
       .dtype = "int", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "integer arithmetic in the fast path (Toeplitz index rows) and the definition: the same integers."});
  add(R::shift,
      {.quantity = "tener_shift(x)[i][j] vs x[i][L + j - i] and tener_transpose_shift(y)[i][j] vs y[j][L + i - j]",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "_shift and _transpose_shift copy elements of their input (a zero column appended, viewed [2L + 1][L], "
              "rows dropped or selected, viewed back or transposed): each output is one input element, bit for bit; "
              "the pad zeros are never read."});
  const RelativeTableRows t = relative_table_rows(
      "table entry R(t)[m] = sin/cos(t 10000^(-k/(h - 1))), [sin | cos] halves, t = -L .. L - 1",
      "d_head 4 .. 2^14 (odd: a zero column), signed distances |t| <= 2^30, the zero row at t = -L when L > "
      "init_size / 2",
      "c = RN64(RN64(ln 10000) / (h - 1)), w_k = RN32(exp(RN32(k RN32(-c)))), RN32(t w_k), RN32(sin), RN32(cos)");
  add(R::table_exact_f32, t.exact_f32);
  add(R::table_exact_f64, t.exact_f64);
  add(R::table_emulated, t.emulated);
  add(R::odd,
      {.quantity = "R(-t) vs R(t) with its sin half negated (t != -L)", .dtype = "f32, f64", .regime = "exact, emulated",
       .domain = lengths, .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "the sinusoidal plan writes the row of -p as the row of p with its sines negated, bit for bit, in both "
              "regimes (claim SIN-REPRO-2): sin is odd, cos even, and RN32(-x) = -RN32(x)."});
  const std::string domain = "d_head 4 .. 12, L <= 300, scale on or off, key masks, both regimes, both forms";
  const std::string terms = "scale ((q + r_r_bias).k + (q + r_w_bias).R(j - i) + k.R(i - j))";
  add(R::scores_f32, relative_scores_row(DType::f32, "TenerPlan", domain, terms));
  add(R::scores_f64, relative_scores_row(DType::f64, "TenerPlan", domain, terms));
  add(R::masked,
      {.quantity = "scores at padded keys (and causal-hidden ones when asked for)", .dtype = "f32, f64",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise against -inf"}, .bound = 0.0,
       .why = "written as -inf before the key term and the content gemm add finite numbers (-inf + finite = -inf)."});
  add(R::identity,
      {.quantity = "a law of the definition on the oracle (scaling, translation, direction)", .dtype = "mp",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "|a - b| between two oracle values (256 bits)"},
       .bound = 0.0,
       .why = "the two sides are the same real number computed from the same inputs; the oracle rounds both correctly "
              "to 256 bits, so they are equal, and any difference is a defect."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace tener_rows
}  // namespace posenc::verify
