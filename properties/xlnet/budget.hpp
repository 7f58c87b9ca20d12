// properties/xlnet/budget.hpp — XLNet's keys in the one budget table (rows and their analyses: budget.cpp beside this
// file; the scores bound: support/relative_budget.hpp). A user's table in `posenc check xlnet` is held to the
// sinusoidal check rows (the table is that scheme's xlnet table).
#pragma once

#include "support/budget.hpp"

#define POSENC_XLNET_ROWS(X)                                  \
  X(index, "xlnet.index.bitwise")                             \
  X(rel_shift, "xlnet.rel_shift.bitwise")                     \
  X(table_exact_f32, "xlnet.table.exact.f32")                 \
  X(table_exact_f64, "xlnet.table.exact.f64")                 \
  X(table_emulated, "xlnet.table.emulated.ulp")               \
  X(mirror, "xlnet.table.mirror.bitwise")                     \
  X(scores_f32, "xlnet.scores.f32")                           \
  X(scores_f64, "xlnet.scores.f64")                           \
  X(masked, "xlnet.scores.masked.bitwise")                    \
  X(identity, "xlnet.identity.oracle")

namespace posenc::test {

POSENC_BUDGET_KEYS(XlnetRow, "xlnet", POSENC_XLNET_ROWS)

}  // namespace posenc::test
