// schemes/tener/budget.hpp — TENER's keys in the one budget table (rows and their analyses: budget.cpp beside this
// file; the scores bound: verify/relative_budget.hpp). A user's table in `posenc check tener` is held to the
// sinusoidal check rows (the table is that scheme's fairseq-rule table at signed positions).
#pragma once

#include "verify/budget.hpp"

#define POSENC_TENER_ROWS(X)                                  \
  X(index, "tener.index.bitwise")                             \
  X(shift, "tener.shift.bitwise")                             \
  X(table_exact_f32, "tener.table.exact.f32")                 \
  X(table_exact_f64, "tener.table.exact.f64")                 \
  X(table_emulated, "tener.table.emulated.ulp")               \
  X(odd, "tener.table.odd.bitwise")                           \
  X(scores_f32, "tener.scores.f32")                           \
  X(scores_f64, "tener.scores.f64")                           \
  X(masked, "tener.scores.masked.bitwise")                    \
  X(identity, "tener.identity.oracle")

namespace posenc::verify {

POSENC_BUDGET_KEYS(TenerRow, "tener", POSENC_TENER_ROWS)

}  // namespace posenc::verify
