// schemes/alibi/budget.hpp — the ALiBi scheme's keys in the one budget table (rows and their error analyses:
// budget.cpp beside this file).
#pragma once

#include <cstddef>
#include <cstdint>

#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_ALIBI_ROWS(X)                                              \
  X(slope_exact_f64, "alibi.slope.exact.f64")                             \
  X(slope_emulated, "alibi.slope.emulated.bitwise")                       \
  X(bias_exact_f32, "alibi.bias.exact.f32")                               \
  X(bias_exact_f64, "alibi.bias.exact.f64")                               \
  X(bias_emulated, "alibi.bias.emulated.bitwise")                         \
  X(bias_identity, "alibi.bias.identity.bitwise")                         \
  X(emulated_vs_exact, "alibi.bias.emulated_vs_exact.ratio")              \
  X(softmax_exact, "alibi.softmax.exact.ratio")                           \
  X(scores_f32, "alibi.scores.f32.ratio")                                 \
  X(scores_f64, "alibi.scores.f64.ratio")                                 \
  X(identity_oracle, "alibi.identity.oracle")                             \
  X(check_exact_f16, "alibi.check.exact.f16")                             \
  X(check_exact_bf16, "alibi.check.exact.bf16")                           \
  X(check_exact_f32, "alibi.check.exact.f32")                             \
  X(check_exact_f64, "alibi.check.exact.f64")                             \
  X(check_envelope, "alibi.check.envelope")

POSENC_BUDGET_KEYS(AlibiRow, "alibi", POSENC_ALIBI_ROWS)

namespace alibi {

// Per-case scale of the softmax row: the bound of |p_a - p_b| for softmax rows of two bias matrices whose entries
// are within delta (largest over the row of the two entries' rounding bounds) of two exactly equivalent rows, given
// p_b: p_b (exp(2 delta) - 1).
double softmax_scale(double p, double delta);
// Per-case scale of the emulated-vs-exact row: |x32| |s32 - m| + m |x32 - x| + ulp32(|b32|), the bound of
// |RN32(x32 s32) - m x| (x32 = RN32(x)).
double emulated_vs_exact_scale(double x, double slope32, double exact_slope, double bias32);
// The row a user's bias or slope of the stored type is held to in the exact regime.
AlibiRow check_exact_row(DType);

}  // namespace alibi
}  // namespace posenc::verify
