// The learned rows of THE budget table (verify/budget.hpp). Nothing here is approximate: ids are
// integers computed by integer arithmetic, rows are copies; the rows say so and the claims hold them to it.
#include "schemes/learned/budget.hpp"

#include <string>
#include <utility>
#include <vector>


namespace posenc::verify {
namespace learned_rows {  // this file's own names: a unity build joins the schemes' rows
namespace {

using R = LearnedRow;

std::vector<std::pair<R, BudgetRow>> make_rows() {
  std::vector<std::pair<R, BudgetRow>> r;
  auto add = [&r](R key, BudgetRow row) { r.emplace_back(key, std::move(row)); };
  const std::string all = "every id map, padding_idx and offset in [0, 2^40), past < 2^40, any tokens / mask";
  add(R::ids,
      {.quantity = "position ids of position_ids() / LearnedPlan::position_ids", .dtype = "i64", .regime = "-",
       .domain = all, .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (the integer, held exactly in double)"},
       .bound = 0.0,
       .why = "integer cumulative sums and products below 2^41: exact in int64; the oracle computes the same integers "
              "from the reference code's formulas."});
  add(R::rows_f64,
      {.quantity = "table rows at the ids, float64 output", .dtype = "f64", .regime = "-", .domain = all,
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (ulp_f64 distance)"}, .bound = 0.0,
       .why = "a copy of the stored doubles."});
  add(R::rows_f32,
      {.quantity = "table rows at the ids, float32 output", .dtype = "f32", .regime = "-", .domain = all,
       .metric = {MetricKind::kernel, DType::f32, 1.0, "kernel (ulp_f32 of the stored value)"}, .bound = 0.5,
       .why = "each stored value rounded once to float32 (exact, error 0, for tables stored in f16, bf16 or f32)."});
  add(R::check_ids,
      {.quantity = "a user's position id (posenc check learned)", .dtype = "i64", .regime = "-",
       .domain = "every spec and input posenc accepts",
       .metric = {MetricKind::bitwise, DType::f64, 1.0, "bitwise (the integer)"}, .bound = 0.0,
       .why = "ids are integers: a port either feeds the embedding the same row or a different one."});
  return r;
}

const BudgetRegistration<LearnedRow> kRegistration(make_rows);

}  // namespace
}  // namespace learned_rows
}  // namespace posenc::verify
