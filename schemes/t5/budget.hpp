// schemes/t5/budget.hpp — the T5 scheme's keys in the one budget table (rows and their analyses: budget.cpp
// beside this file).
#pragma once

#include "posenc/t5_spec.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_T5_ROWS(X)                                      \
  X(bucket_exact, "t5.bucket.exact.bitwise")                   \
  X(bucket_hf, "t5.bucket.hf.bitwise")                         \
  X(bias_identity, "t5.bias.identity.bitwise")                 \
  X(scores_f32, "t5.scores.f32.ratio")                         \
  X(scores_f64, "t5.scores.f64.ratio")                         \
  X(check_exact, "t5.check.exact.ratio")                       \
  X(check_envelope, "t5.check.envelope")

POSENC_BUDGET_KEYS(T5Row, "t5", POSENC_T5_ROWS)

}  // namespace posenc::verify
