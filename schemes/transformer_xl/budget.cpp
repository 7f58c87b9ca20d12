// The Transformer-XL rows of THE budget table (verify/budget.hpp). The table is the sinusoidal plan's
// transformer-xl table at the call's distances (schemes/transformer_xl/fast.cpp), so its bounds are the sinusoidal
// kernel's (verify/relative_budget.hpp: relative_table_rows); indices and the rel_shift are integers and copies; the
// scores bound is the one the three sinusoid-relative schemes share (verify/relative_budget.hpp).
#include "schemes/transformer_xl/budget.hpp"

#include <string>
#include <utility>
#include <vector>

#include "verify/relative_budget.hpp"


namespace posenc::verify {
namespace transformer_xl_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = TransformerXlRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string lengths = "1 <= Lq <= Lk <= 2^31 - 1 (memory M = Lk - Lq), any clamp_len";
  add(R::index,
      {.quantity = "table row c(i, j) = Lk - 1 - (q_i - j) read by entry (i, j), -1 where j > q_i", .dtype = "int",
       .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f32, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "integer arithmetic in the fast path (a Toeplitz index row) and in the oracle (its definedness and "
              "position from the definition): the same integers."});
  add(R::rel_shift,
      {.quantity = "transformer_xl_rel_shift(x)[i][j] vs x[i][c(i, j)] (defined entries) and the code's junk (the "
                   "others)",
       .dtype = "f32, f64", .regime = "exact, emulated", .domain = lengths,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise"}, .bound = 0.0,
       .why = "the shift is a copy of elements of x and pad zeros (mem_transformer.py _rel_shift: zero column in "
              "front, view [Lk + 1][Lq], first row dropped, view back): each output is one input element or 0, "
              "bit for bit."});
  const RelativeTableRows t = relative_table_rows(
      "table entry R[c][m] = sin/cos(pos(Lk - 1 - c) 10000^(-2k/d_model)), [sin | cos] halves",
      "d_model even up to 2^14, distances 0 .. 2^31 - 1 (clamp_len)",
      "inv_freq = RN32(1 / RN32(10000 ** RN32(RN32(2k) / d_model))), RN32(pos inv_freq), RN32(sin), RN32(cos)");
  add(R::table_exact_f32, t.exact_f32);
  add(R::table_exact_f64, t.exact_f64);
  add(R::table_emulated, t.emulated);
  const std::string domain = "d_head <= 64, d_model <= 48, Lq <= Lk <= 600 (memory up to 512), clamp_len, same_length, "
                             "key masks, both regimes, both forms";
  const std::string terms = "scale ((q + u).k + (q + v).P[c(i, j)])";
  add(R::scores_f32, relative_scores_row(DType::f32, "TransformerXlPlan", domain, terms));
  add(R::scores_f64, relative_scores_row(DType::f64, "TransformerXlPlan", domain, terms));
  add(R::masked,
      {.quantity = "scores at undefined (j > q_i), same_length-hidden and padded keys", .dtype = "f32, f64",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise against -inf"}, .bound = 0.0,
       .why = "written as -inf before the content gemm adds a finite product (-inf + finite = -inf): never the "
              "rel_shift's junk."});
  add(R::identity,
      {.quantity = "a law of the definition on the oracle (translation, direction)", .dtype = "mp",
       .regime = "exact, emulated", .domain = domain,
       .metric = {MetricKind::absolute, DType::f64, 1.0, "|a - b| between two oracle values (256 bits)"},
       .bound = 0.0,
       .why = "the two sides are the same real number computed from the same inputs (equal distances, equal contents): "
              "the oracle rounds both once to 256 bits, so they are equal, and any difference is a defect."});
  return r;
}

const BudgetRegistration<R> kRegistration(make_rows);

}  // namespace
}  // namespace transformer_xl_rows
}  // namespace posenc::verify
