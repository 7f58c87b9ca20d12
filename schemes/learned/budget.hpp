// schemes/learned/budget.hpp — the learned scheme's keys in the one budget table (rows and their analyses:
// budget.cpp beside this file).
#pragma once

#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_LEARNED_ROWS(X)                          \
  X(ids, "learned.ids.bitwise")                         \
  X(rows_f64, "learned.rows.f64.bitwise")               \
  X(rows_f32, "learned.rows.f32")                       \
  X(check_ids, "learned.check.ids.bitwise")

POSENC_BUDGET_KEYS(LearnedRow, "learned", POSENC_LEARNED_ROWS)

}  // namespace posenc::verify
