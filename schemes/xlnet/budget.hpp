// schemes/xlnet/budget.hpp — XLNet's keys in the one budget table (rows and their analyses: budget.cpp beside this
// file; the scores bound: verify/relative_budget.hpp). A user's table in `posenc check xlnet` is held to the
// sinusoidal check rows (the table is that scheme's xlnet table).
#pragma once

#include <cstddef>

#include "verify/budget.hpp"

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
  X(segment_f32, "xlnet.segment.f32")                         \
  X(segment_f64, "xlnet.segment.f64")                         \
  X(check_segment_envelope, "xlnet.check.segment.envelope")   \
  X(identity, "xlnet.identity.oracle")

namespace posenc::verify {

POSENC_BUDGET_KEYS(XlnetRow, "xlnet", POSENC_XLNET_ROWS)

// The a-priori bound of the segment term ef = sum_e RN(q_e + s_e) g_e summed in type t over d terms, any order, with
// or without FMA (rows xlnet.segment.* and xlnet.check.segment.envelope: the analysis is in their why):
//   gamma_{d+1}(u) S + (2 d + 1) 2^(emin - p),  u = 2^-p, S = sum_e |q_e + s_e| |g_e|.
double segment_error_bound(DType t, std::size_t d, double S);

}  // namespace posenc::verify
