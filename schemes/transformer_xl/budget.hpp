// schemes/transformer_xl/budget.hpp — Transformer-XL's keys in the one budget table (rows and their analyses:
// budget.cpp beside this file; the scores bound: verify/relative_budget.hpp). A user's table in `posenc check
// transformer_xl` is held to the sinusoidal check rows (the table is that scheme's transformer-xl table).
#pragma once

#include "verify/budget.hpp"

#define POSENC_TRANSFORMER_XL_ROWS(X)                                  \
  X(index, "transformer_xl.index.bitwise")                             \
  X(rel_shift, "transformer_xl.rel_shift.bitwise")                     \
  X(table_exact_f32, "transformer_xl.table.exact.f32")                 \
  X(table_exact_f64, "transformer_xl.table.exact.f64")                 \
  X(table_emulated, "transformer_xl.table.emulated.ulp")               \
  X(scores_f32, "transformer_xl.scores.f32")                           \
  X(scores_f64, "transformer_xl.scores.f64")                           \
  X(masked, "transformer_xl.scores.masked.bitwise")                    \
  X(identity, "transformer_xl.identity.oracle")

namespace posenc::verify {

POSENC_BUDGET_KEYS(TransformerXlRow, "transformer_xl", POSENC_TRANSFORMER_XL_ROWS)

}  // namespace posenc::verify
