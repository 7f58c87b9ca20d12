// schemes/kerple/budget.hpp — the KERPLE scheme's keys in the one budget table (rows and their error analyses:
// budget.cpp beside this file).
#pragma once

#include <cstddef>
#include <cstdint>

#include "posenc/kerple_spec.hpp"
#include "verify/budget.hpp"

namespace posenc::verify {

#define POSENC_KERPLE_ROWS(X)                                        \
  X(bias_exact_f32, "kerple.bias.exact.f32")                         \
  X(bias_exact_f64, "kerple.bias.exact.f64")                         \
  X(bias_emulated, "kerple.bias.emulated.bitwise")                   \
  X(bias_identity, "kerple.bias.identity.bitwise")                   \
  X(emulated_vs_exact, "kerple.bias.emulated_vs_exact.ratio")        \
  X(cpd, "kerple.cpd.ratio")                                         \
  X(scores_f32, "kerple.scores.f32.ratio")                           \
  X(scores_f64, "kerple.scores.f64.ratio")                           \
  X(check_exact_f16, "kerple.check.exact.f16")                       \
  X(check_exact_bf16, "kerple.check.exact.bf16")                     \
  X(check_exact_f32, "kerple.check.exact.f32")                       \
  X(check_exact_f64, "kerple.check.exact.f64")                       \
  X(check_envelope, "kerple.check.envelope")

POSENC_BUDGET_KEYS(KerpleRow, "kerple", POSENC_KERPLE_ROWS)

namespace kerple {

// Per-case scale of the emulated-vs-exact row: the a-priori bound of |e - X| for the megatron float32 bias e of a
// head whose exact-regime parameters are (p, a) and megatron ones (p32, a32), at distance d, against the exact
// X = -p ln(1 + a d) / -a d^p (analysis in budget.cpp).
double emulated_vs_exact_scale(KerpleKernel, double p, double a, double p32, double a32, std::int64_t d, double e);
// The row a user's bias of the stored type is held to in the exact regime.
KerpleRow check_exact_row(DType);

}  // namespace kerple
}  // namespace posenc::verify
