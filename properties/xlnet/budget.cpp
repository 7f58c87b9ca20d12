// The XLNet rows of THE budget table (properties/support/budget.hpp). The table is the sinusoidal plan's xlnet table
// at the call's pos_seq (lib/src/xlnet.cpp), so its bounds are the sinusoidal kernel's (support/relative_budget.hpp);
// indices and the rel_shift are integers and copies; the scores bound is the one the three sinusoid-relative schemes
// share (support/relative_budget.hpp), with the segment term among the terms.
#include "xlnet/budget.hpp"

#include <string>
#include <utility>
#include <vector>

#include "support/relative_budget.hpp"


namespace posenc::test {
namespace {

using R = XlnetRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string lengths = "1 <= Lq <= Lk <= 2^30 - 1 (memory M = Lk - Lq), bi and uni, both directions, clamp_len";
  add(R::index,
      {.quantity = "table row c(i, j) = Lq - i + j read by entry (i, j), -1 where uni leaves it undefined (j > q_i)",
       .dtype = "int", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "integer arithmetic in the fast path (a Toeplitz index row) and the definition: the same integers."});
  add(R::rel_shift,
      {.quantity = "xlnet_rel_shift(x)[i][j] vs x[i][c(i, j)] and uni's junk x[i + 1][j - q_i - 1]", .dtype = "f32, f64",
       .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "rel_shift_bnij is a copy of elements of x (view [rows][Lq], first row dropped, view [Lq][rows - 1], "
              "first klen columns): each output is one input element, bit for bit."});
  const RelativeTableRows t = relative_table_rows(
      "table entry R[c][m] = sin/cos(pos_seq[c] 10000^(-2k/d_model)), [sin | cos] halves",
      "d_model even up to 2^14, pos_seq klen .. -qlen + 1 (bi) or klen .. 0 (uni), negated (backward), clamp_len",
      "inv_freq = RN32(1 / RN32(torch.pow(10000, RN32(RN32(2k) / d_model)))), RN32(pos inv_freq), RN32(sin), "
      "RN32(cos)");
  add(R::table_exact_f32, t.exact_f32);
  add(R::table_exact_f64, t.exact_f64);
  add(R::table_emulated, t.emulated);
  add(R::mirror,
      {.quantity = "bi_data: the backward table's row c vs the forward table's row c with its sin half negated",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "the backward pos_seq is -pos_seq (clamped symmetrically); the sinusoidal plan writes the row of -p as "
              "the row of p with its sines negated, bit for bit, in both regimes (claim SIN-REPRO-2): an exact "
              "mirror, every bit."});
  const std::string domain = "d_head <= 12, d_model <= 16, Lq <= Lk <= 600 (memory up to 300), bi and uni, both "
                             "directions, clamp_len, same_length, token types, key masks, both regimes, both forms";
  const std::string terms = "scale ((q + r_w_bias).k + (q + r_r_bias).P[c(i, j)] + (q + r_s_bias).seg_embed[s(i, j)])";
  add(R::scores_f32, relative_scores_row(DType::f32, "XlnetPlan", domain, terms));
  add(R::scores_f64, relative_scores_row(DType::f64, "XlnetPlan", domain, terms));
  add(R::masked,
      {.quantity = "scores at uni's undefined (j > q_i) and same_length-hidden keys and at padded keys",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise against -inf"}, .bound = 0.0,
       .why = "written as -inf before the content gemm adds a finite product (-inf + finite = -inf): never the "
              "rel_shift's junk (HF subtracts 1e30 instead)."});
  add(R::identity,
      {.quantity = "a law of the definition on the oracle (segment relabelling, translation, direction)", .dtype = "mp",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "|a - b| between two oracle values (256 bits)"},
       .bound = 0.0,
       .why = "the two sides are the same real number computed from the same inputs; the oracle rounds both correctly "
              "to 256 bits, so they are equal, and any difference is a defect."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace posenc::test
