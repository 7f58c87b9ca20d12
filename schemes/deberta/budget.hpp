// schemes/deberta/budget.hpp — the DeBERTa scheme's keys in the one budget table (rows and their analyses:
// budget.cpp beside this file), and the a-priori score bound those rows name.
#pragma once

#include <cstddef>
#include <span>
#include <utility>

#include "posenc/deberta_spec.hpp"
#include "verify/budget.hpp"

#define POSENC_DEBERTA_ROWS(X)                                 \
  X(bucket_exact, "deberta.bucket.exact.bitwise")              \
  X(bucket_hf, "deberta.bucket.hf.bitwise")                    \
  X(index, "deberta.index.bitwise")                            \
  X(scores_f32, "deberta.scores.f32.ratio")                    \
  X(scores_f64, "deberta.scores.f64.ratio")                    \
  X(masked, "deberta.scores.masked.bitwise")                   \
  X(check_exact, "deberta.check.exact.bitwise")                \
  X(check_envelope, "deberta.check.envelope")

namespace posenc::verify {

POSENC_BUDGET_KEYS(DebertaRow, "deberta", POSENC_DEBERTA_ROWS)

// The magnitudes of one score for head h, query q, key k and table row c: {sum |q_c k_c|, [c2p] sum |q_c K_r[h][c]|
// + [p2c] sum |k_c Q_r[h][c]|}, each summed in double and enlarged by (1 + (2 head_dim + 2) 1e-15) to cover that
// summation's own rounding. The bound is verify/bias_budget.hpp's gathered_scores_bound (the algorithm is Shaw's
// with key_query: two gathered gemms, one rounding of their sum, then the beta = 1 gemm).
// B of rows deberta.scores.*: verify/bias_budget.hpp's gathered_scores_bound for |scale|, qk and rel of
// deberta_score_sums.
double deberta_scores_bound(DType t, std::size_t head_dim, double abs_scale, double qk, double rel);

std::pair<double, double> deberta_score_sums(const DebertaSpec&, const DebertaWeights&, std::size_t h,
                                             std::span<const double> q, std::span<const double> k, std::size_t c);

}  // namespace posenc::verify
