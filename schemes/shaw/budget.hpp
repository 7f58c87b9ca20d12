// schemes/shaw/budget.hpp — the Shaw / BERT relative_key scheme's keys in the one budget table (rows and their
// analyses: budget.cpp beside this file), and the a-priori error bounds those rows name (measure.cpp).
#pragma once

#include <cstddef>
#include <span>
#include <utility>

#include "posenc/shaw_spec.hpp"
#include "verify/budget.hpp"

#define POSENC_SHAW_ROWS(X)                                    \
  X(index, "shaw.index.bitwise")                               \
  X(scores_f32, "shaw.scores.f32.ratio")                       \
  X(scores_f64, "shaw.scores.f64.ratio")                       \
  X(masked, "shaw.scores.masked.bitwise")                      \
  X(output_f32, "shaw.output.f32.ratio")                       \
  X(output_f64, "shaw.output.f64.ratio")                       \
  X(check_index, "shaw.check.index.bitwise")

namespace posenc::verify {

POSENC_BUDGET_KEYS(ShawRow, "shaw", POSENC_SHAW_ROWS)

// B of rows shaw.scores.*: the bound of |score - e| for ShawPlan::scores in type t, given |scale|,
// qk = sum |q_c k_c|, rel = sum |q_c a_c| + [key_query] sum |k_c a_c| and drift = tau (sum |q_c| + [key_query]
// sum |k_c|), tau the largest distance of the table the plan multiplies in type t from the table the exact value e
// is taken over (0 when the user gives the table in t; NEZHA: its computed sinusoid) (budget.cpp derives it).
double shaw_scores_bound(DType t, std::size_t head_dim, double abs_scale, double qk, double rel, double drift = 0);

// sum |q_c| + [key_query] sum |k_c|: the factor of tau in shaw_scores_bound's drift, enlarged like shaw_score_sums.
double shaw_drift_sum(const ShawSpec&, std::span<const double> q, std::span<const double> k);

// The magnitudes shaw_scores_bound takes for query q, key k and table row idx of the key table: {sum |q_c k_c|,
// sum |q_c a_c| + [key_query] sum |k_c a_c|}, each summed in double and enlarged by (1 + (2 head_dim + 2) 1e-15) to
// cover that summation's own rounding.
std::pair<double, double> shaw_score_sums(const ShawSpec&, const ShawWeights&, std::span<const double> q,
                                          std::span<const double> k, std::size_t idx);

// B of rows shaw.output.*, one component c of one row: delta = the largest score bound B over the row's visible
// keys, keys = the keys the row's gemm spans, table_rows = the table rows the call gathers (2k + 1 at most),
// mag = sum_j alpha_j (|v_jc| + [values] |a_c|), tmag = sum_j alpha_j |t_j| (|v_jc| + [values] |a_c|) with t_j =
// e_j - max_j e_j, tau_values the values table's distance like shaw_scores_bound's tau (budget.cpp derives it).
double shaw_output_bound(DType t, double delta, std::size_t keys, std::size_t table_rows, double mag, double tmag,
                         double tau_values = 0);

}  // namespace posenc::verify
